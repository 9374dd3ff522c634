// RFC 3986 reference resolution, enough to locate `$id`, `$ref` and anchors inside one schema
// document: parsing into components, merging, dot-segment removal and percent-decoding.
#include "core/ascii.hpp"
#include "core/hex.hpp"
#include "schema/detail/compiled.hpp"

#include <cctype>

namespace sluice::schema::detail {

namespace {

struct UriParts {
  std::string_view scheme;
  std::string_view authority;
  std::string_view path;
  std::string_view query;
  std::string_view fragment;
  bool has_scheme = false;
  bool has_authority = false;
  bool has_query = false;
  bool has_fragment = false;
};

bool is_scheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

UriParts parse_uri(std::string_view s) {
  UriParts u;
  std::size_t hash = s.find('#');
  if (hash != std::string_view::npos) {
    u.has_fragment = true;
    u.fragment = s.substr(hash + 1);
    s = s.substr(0, hash);
  }
  std::size_t question = s.find('?');
  if (question != std::string_view::npos) {
    u.has_query = true;
    u.query = s.substr(question + 1);
    s = s.substr(0, question);
  }
  std::size_t colon = s.find(':');
  if (colon != std::string_view::npos && colon < s.find('/') && is_scheme(s.substr(0, colon))) {
    u.has_scheme = true;
    u.scheme = s.substr(0, colon);
    s = s.substr(colon + 1);
  }
  if (s.substr(0, 2) == "//") {
    u.has_authority = true;
    std::size_t slash = s.find('/', 2);
    u.authority = s.substr(2, slash == std::string_view::npos ? s.size() - 2 : slash - 2);
    s = slash == std::string_view::npos ? std::string_view() : s.substr(slash);
  }
  u.path = s;
  return u;
}

void drop_last_segment(std::string& out) {
  std::size_t slash = out.rfind('/');
  out.erase(slash == std::string::npos ? 0 : slash);
}

// RFC 3986 section 5.2.4.
std::string remove_dot_segments(std::string_view in) {
  std::string out;
  while (!in.empty()) {
    if (in.substr(0, 3) == "../") {
      in.remove_prefix(3);
    } else if (in.substr(0, 2) == "./") {
      in.remove_prefix(2);
    } else if (in.substr(0, 3) == "/./") {
      in.remove_prefix(2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.substr(0, 4) == "/../") {
      in.remove_prefix(3);
      drop_last_segment(out);
    } else if (in == "/..") {
      in = "/";
      drop_last_segment(out);
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      std::size_t next = in.find('/', 1);
      if (next == std::string_view::npos) next = in.size();
      out.append(in.substr(0, next));
      in.remove_prefix(next);
    }
  }
  return out;
}

std::string merge_paths(const UriParts& base, std::string_view reference_path) {
  if (base.has_authority && base.path.empty()) return "/" + std::string(reference_path);
  std::size_t slash = base.path.rfind('/');
  if (slash == std::string_view::npos) return std::string(reference_path);
  return std::string(base.path.substr(0, slash + 1)) + std::string(reference_path);
}

}  // namespace

std::string resolve_uri(std::string_view base, std::string_view reference) {
  UriParts b = parse_uri(base);
  UriParts r = parse_uri(reference);
  std::string scheme;
  std::string authority;
  std::string path;
  std::string_view query;
  bool has_authority = false;
  bool has_query = false;
  if (r.has_scheme) {
    scheme = r.scheme;
    has_authority = r.has_authority;
    authority = r.authority;
    path = remove_dot_segments(r.path);
    has_query = r.has_query;
    query = r.query;
  } else {
    scheme = b.scheme;
    if (r.has_authority) {
      has_authority = true;
      authority = r.authority;
      path = remove_dot_segments(r.path);
      has_query = r.has_query;
      query = r.query;
    } else {
      has_authority = b.has_authority;
      authority = b.authority;
      if (r.path.empty()) {
        path = b.path;
        has_query = r.has_query || b.has_query;
        query = r.has_query ? r.query : b.query;
      } else {
        path = remove_dot_segments(r.path[0] == '/' ? std::string(r.path) : merge_paths(b, r.path));
        has_query = r.has_query;
        query = r.query;
      }
    }
  }
  core::ascii::lower_in_place(scheme);
  std::string out;
  if (!scheme.empty()) out += scheme + ":";
  if (has_authority) out += "//" + authority;
  out += path;
  if (has_query) {
    out += '?';
    out += query;
  }
  if (r.has_fragment) {
    out += '#';
    out += r.fragment;
  }
  return out;
}

std::pair<std::string_view, std::string_view> split_fragment(std::string_view uri) {
  std::size_t hash = uri.find('#');
  if (hash == std::string_view::npos) return {uri, {}};
  return {uri.substr(0, hash), uri.substr(hash + 1)};
}

std::string percent_decode(std::string_view text, bool& ok) {
  std::string out;
  out.reserve(text.size());
  ok = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int hi = i + 2 < text.size() ? core::hex_digit_value(text[i + 1]) : -1;
    int lo = i + 2 < text.size() ? core::hex_digit_value(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      ok = false;
      return {};
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace sluice::schema::detail
