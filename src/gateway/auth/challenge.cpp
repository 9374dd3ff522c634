#include "gateway/auth/challenge.hpp"

#include "core/ascii.hpp"

#include <cctype>
#include <utility>
#include <vector>

namespace sluice::gateway::auth {
namespace {

bool is_tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token68_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("-._~+/").find(c) != std::string_view::npos;
}

// A cursor over the header with the grammar's few productions.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  bool done() {
    skip_space();
    return pos_ >= text_.size();
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string_view token() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_tchar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // Whether a `name = value` parameter starts here (and not a new challenge's scheme or a
  // token68 credential, whose padding '=' is followed by another '=', a comma or nothing).
  bool at_param() {
    const std::size_t saved = pos_;
    bool is_param = !token().empty() && take('=');
    if (is_param) {
      skip_space();
      is_param = pos_ < text_.size() && (text_[pos_] == '"' || is_tchar(text_[pos_]));
    }
    pos_ = saved;
    return is_param;
  }
  std::optional<std::string> quoted() {
    if (!take('"')) return std::nullopt;
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\') {
        if (pos_ >= text_.size()) return std::nullopt;
        c = text_[pos_++];
      }
      out += c;
    }
    return std::nullopt;  // unterminated
  }
  std::optional<std::string> value() {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '"') return quoted();
    std::string_view t = token();
    if (t.empty()) return std::nullopt;
    return std::string(t);
  }
  // A token68 credential (`Basic dXNlcg==`), consumed whole.
  bool skip_token68() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_token68_char(text_[pos_])) ++pos_;
    while (pos_ < text_.size() && text_[pos_] == '=') ++pos_;
    return pos_ > start;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

struct Challenge {
  std::string scheme;                                       // lower case
  std::vector<std::pair<std::string, std::string>> params;  // names lower case
};

// Reads the parameters of one challenge up to the next scheme; false when malformed.
bool read_params(Reader& r, Challenge& c) {
  if (r.done()) return true;
  if (!r.at_param()) {
    if (r.take(',')) return true;  // an empty challenge, then the next one
    const bool had = r.skip_token68();
    return had && (r.done() || r.take(','));
  }
  while (!r.done()) {
    if (!r.at_param()) return true;  // the next challenge's scheme
    std::string name = core::ascii::lowered(r.token());
    r.take('=');
    std::optional<std::string> value = r.value();
    if (!value) return false;
    c.params.emplace_back(std::move(name), std::move(*value));
    if (r.done()) return true;
    if (!r.take(',')) return false;
    while (r.take(',')) {
    }
  }
  return true;
}

std::optional<std::vector<Challenge>> parse_challenges(std::string_view header) {
  Reader r(header);
  std::vector<Challenge> out;
  while (!r.done()) {
    while (r.take(',')) {
    }
    if (r.done()) break;
    std::string_view scheme = r.token();
    if (scheme.empty()) return std::nullopt;
    Challenge c;
    c.scheme = core::ascii::lowered(scheme);
    if (!read_params(r, c)) return std::nullopt;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::optional<BearerChallenge> parse_bearer_challenge(std::string_view header) {
  std::optional<std::vector<Challenge>> all = parse_challenges(header);
  if (!all) return std::nullopt;
  for (Challenge& c : *all) {
    if (c.scheme != "bearer") continue;
    BearerChallenge out;
    for (auto& [name, value] : c.params) {
      std::optional<std::string>* slot = name == "resource_metadata"   ? &out.resource_metadata
                                         : name == "scope"             ? &out.scope
                                         : name == "error"             ? &out.error
                                         : name == "error_description" ? &out.error_description
                                                                       : nullptr;
      if (slot != nullptr && !slot->has_value()) *slot = std::move(value);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace sluice::gateway::auth
