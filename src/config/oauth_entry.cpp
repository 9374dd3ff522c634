#include "config/detail/oauth_entry.hpp"

#include "core/ascii.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace sluice::config::detail {
namespace bj = boost::json;
namespace {

constexpr Range kCallbackPortRange{0, 65535};
constexpr std::array<std::string_view, 6> kOAuthKeys{
    "clientId", "clientSecret", "clientMetadataUrl", "redirectUri", "scopes", "callbackPort"};

// http://127.0.0.1, http://localhost or http://[::1], then a port, a path or nothing.
bool is_loopback_http(std::string_view url) {
  for (std::string_view host : {"http://127.0.0.1", "http://localhost", "http://[::1]"}) {
    if (!core::ascii::starts_with_in_any_case(url, host)) continue;
    std::string_view rest = url.substr(host.size());
    if (rest.empty() || rest.front() == ':' || rest.front() == '/') return true;
  }
  return false;
}

// RFC 6749 scope-token: printable ASCII except space, '"' and '\'.
bool is_scope_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u >= 0x21 && u <= 0x7E && c != '"' && c != '\\';
  });
}

core::Result<std::vector<std::string>> read_scopes(const bj::value& v, const Where& at) {
  const bj::array* arr = v.if_array();
  if (arr == nullptr) return wrong_type(at, "an array of strings", v);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    core::Result<std::string_view> scope = read_text((*arr)[i], at.index(i), kHeaderText, true);
    if (!scope) return scope.error();
    if (!is_scope_token(*scope)) {
      return problem(at.index(i), "is not a scope token",
                     "expected printable characters without spaces, quotes or backslashes");
    }
    out.emplace_back(*scope);
  }
  return out;
}

core::Result<std::string> read_url(const bj::value& v, const Where& at, bool https_only) {
  core::Result<std::string_view> text = read_text(v, at, kUrlText, true);
  if (!text) return text.error();
  if (https_only && !core::ascii::starts_with_in_any_case(*text, "https://")) {
    return problem(at, "is not an https:// URL");
  }
  if (!https_only && !is_loopback_http(*text)) {
    return problem(at, "is not a loopback http:// URL",
                   "expected http://127.0.0.1, http://localhost or http://[::1] with a port");
  }
  return core::Result<std::string>(boost::system::in_place_value, *text);
}

}  // namespace

core::Result<OAuthSettings> parse_oauth(const bj::value& v, const Where& at,
                                        const SecretExpander& expand) {
  const bj::object* obj = v.if_object();
  if (obj == nullptr) return wrong_type(at, "an object", v);
  for (const auto& kv : *obj) {
    std::string_view key(kv.key().data(), kv.key().size());
    if (std::find(kOAuthKeys.begin(), kOAuthKeys.end(), key) == kOAuthKeys.end()) {
      return problem(at, "holds a key sluice does not know",
                     "expected clientId, clientSecret, clientMetadataUrl, redirectUri, scopes "
                     "or callbackPort");
    }
  }
  OAuthSettings out;
  if (const bj::value* id = obj->if_contains("clientId")) {
    core::Result<std::string_view> text = read_text(*id, at.key("clientId"), kHeaderText, true);
    if (!text) return text.error();
    out.client_id = std::string(*text);
  }
  if (const bj::value* secret = obj->if_contains("clientSecret")) {
    core::Result<std::string_view> text =
        read_text(*secret, at.key("clientSecret"), kHeaderText, true);
    if (!text) return text.error();
    if (out.client_id.empty()) return problem(at.key("clientSecret"), "set without a clientId");
    out.client_secret = expand(*text);
  }
  if (const bj::value* url = obj->if_contains("clientMetadataUrl")) {
    core::Result<std::string> text = read_url(*url, at.key("clientMetadataUrl"), true);
    if (!text) return text.error();
    out.client_metadata_url = std::move(*text);
  }
  if (const bj::value* uri = obj->if_contains("redirectUri")) {
    core::Result<std::string> text = read_url(*uri, at.key("redirectUri"), false);
    if (!text) return text.error();
    out.redirect_uri = std::move(*text);
  }
  if (const bj::value* scopes = obj->if_contains("scopes")) {
    core::Result<std::vector<std::string>> list = read_scopes(*scopes, at.key("scopes"));
    if (!list) return list.error();
    out.scopes = std::move(*list);
  }
  if (const bj::value* port = obj->if_contains("callbackPort")) {
    core::Result<std::uint64_t> n = read_integer(*port, at.key("callbackPort"), kCallbackPortRange);
    if (!n) return n.error();
    out.callback_port = static_cast<std::uint16_t>(*n);
  }
  return out;
}

}  // namespace sluice::config::detail
