#include "gateway/auth/url.hpp"

#include "core/ascii.hpp"
#include "gateway/auth/codec.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace sluice::gateway::auth {
namespace {

namespace urls = boost::urls;

std::optional<urls::url_view> parse_http(std::string_view url) {
  auto parsed = urls::parse_absolute_uri(url);
  if (!parsed) return std::nullopt;
  const std::string scheme = core::ascii::lowered(parsed->scheme());
  if ((scheme != "http" && scheme != "https") || !parsed->has_authority() ||
      parsed->encoded_host().empty() || parsed->has_userinfo()) {
    return std::nullopt;
  }
  return *parsed;
}

std::string effective_port(const urls::url_view& u) {
  if (u.has_port() && !u.port().empty()) return std::string(u.port());
  return core::ascii::iequals(u.scheme(), "https") ? "443" : "80";
}

// The path without its terminating '/' ("" for none or "/").
std::string trimmed_path(const urls::url_view& u) {
  std::string path(u.encoded_path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

bool same_host_and_port(const urls::url_view& a, const urls::url_view& b) {
  return core::ascii::iequals(a.scheme(), b.scheme()) &&
         core::ascii::iequals(a.encoded_host(), b.encoded_host()) &&
         effective_port(a) == effective_port(b);
}

}  // namespace

std::optional<std::string> origin_of(std::string_view url) {
  std::optional<urls::url_view> u = parse_http(url);
  if (!u) return std::nullopt;
  std::string out =
      core::ascii::lowered(u->scheme()) + "://" + core::ascii::lowered(u->encoded_host());
  if (u->has_port()) out += ":" + std::string(u->port());
  return out;
}

std::vector<std::string> protected_resource_urls(std::string_view server_url) {
  std::optional<urls::url_view> u = parse_http(server_url);
  std::optional<std::string> origin = origin_of(server_url);
  if (!u || !origin) return {};
  const std::string root = *origin + "/.well-known/oauth-protected-resource";
  const std::string path = trimmed_path(*u);
  if (path.empty()) return {root};
  return {root + path, root};
}

std::vector<std::string> auth_server_metadata_urls(std::string_view issuer) {
  std::optional<urls::url_view> u = parse_http(issuer);
  std::optional<std::string> origin = origin_of(issuer);
  if (!u || !origin) return {};
  const std::string path = trimmed_path(*u);
  if (path.empty()) {
    return {*origin + "/.well-known/oauth-authorization-server",
            *origin + "/.well-known/openid-configuration"};
  }
  return {*origin + "/.well-known/oauth-authorization-server" + path,
          *origin + "/.well-known/openid-configuration" + path,
          *origin + path + "/.well-known/openid-configuration"};
}

bool resource_covers(std::string_view resource, std::string_view server_url) {
  std::optional<urls::url_view> r = parse_http(resource);
  std::optional<urls::url_view> s = parse_http(server_url);
  if (!r || !s || r->has_query() || r->has_fragment() || !same_host_and_port(*r, *s)) {
    return false;
  }
  const std::string rp = trimmed_path(*r);
  const std::string sp = trimmed_path(*s);
  return sp == rp ||
         (sp.size() > rp.size() && sp.compare(0, rp.size(), rp) == 0 && sp[rp.size()] == '/');
}

bool is_acceptable_endpoint(std::string_view url) {
  std::optional<urls::url_view> u = parse_http(url);
  if (!u || u->has_fragment()) return false;
  if (core::ascii::iequals(u->scheme(), "https")) return true;
  const std::string host = core::ascii::lowered(u->encoded_host());
  return host == "127.0.0.1" || host == "[::1]" || host == "localhost";
}

std::optional<std::vector<std::pair<std::string, std::string>>> redirect_params(
    std::string_view location, std::string_view redirect_uri) {
  std::optional<urls::url_view> got = parse_http(location);
  std::optional<urls::url_view> want = parse_http(redirect_uri);
  if (!got || !want || !same_host_and_port(*got, *want) ||
      trimmed_path(*got) != trimmed_path(*want)) {
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : got->params()) out.emplace_back(p.key, p.value);
  return out;
}

std::optional<LoopbackTarget> loopback_target(std::string_view redirect_uri) {
  std::optional<urls::url_view> u = parse_http(redirect_uri);
  if (!u || !core::ascii::iequals(u->scheme(), "http")) return std::nullopt;
  const std::string host = core::ascii::lowered(u->encoded_host());
  if (host != "127.0.0.1" && host != "[::1]" && host != "localhost") return std::nullopt;
  LoopbackTarget out;
  if (u->has_port() && !u->port().empty()) {
    const std::uint32_t n = u->port_number();
    if (n == 0 || n > 65535) return std::nullopt;
    out.port = static_cast<std::uint16_t>(n);
  }
  out.path = u->encoded_path().empty() ? std::string("/") : std::string(u->encoded_path());
  return out;
}

std::string with_query(std::string_view base,
                       const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out(base);
  bool first = out.find('?') == std::string::npos;
  for (const auto& [name, value] : params) {
    out += first ? '?' : '&';
    first = false;
    out += percent_encode(name);
    out += '=';
    out += percent_encode(value);
  }
  return out;
}

}  // namespace sluice::gateway::auth
