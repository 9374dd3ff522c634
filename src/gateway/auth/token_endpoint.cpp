#include "gateway/auth/token_endpoint.hpp"

#include "core/ascii.hpp"
#include "core/json.hpp"

#include <fmt/format.h>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace sluice::gateway::auth {
namespace bj = boost::json;
namespace {

// RFC 6749 section 5.2 and RFC 7591 section 3.2.2: the codes a message may name.
constexpr std::array<std::string_view, 11> kKnownErrors{
    "invalid_request",        "invalid_client", "invalid_grant",          "unauthorized_client",
    "unsupported_grant_type", "invalid_scope",  "invalid_redirect_uri",   "invalid_client_metadata",
    "access_denied",          "server_error",   "temporarily_unavailable"};

std::string token_text_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  const bj::string* s = v != nullptr ? v->if_string() : nullptr;
  return s != nullptr ? std::string(s->data(), s->size()) : std::string();
}

bool lists(const std::vector<std::string>& methods, std::string_view method) {
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

// "the <what> answered HTTP <status>[ (<registered error code>)]".
std::string refusal(std::string_view what, const transport::HttpResponse& response) {
  std::string code;
  if (auto doc = core::json::parse_strict(response.body, core::json::ParseLimits{});
      doc && doc->is_object()) {
    code = token_text_of(doc->get_object(), "error");
  }
  if (std::find(kKnownErrors.begin(), kKnownErrors.end(), code) == kKnownErrors.end()) {
    return fmt::format("the {} answered HTTP {}", what, response.status);
  }
  return fmt::format("the {} answered HTTP {} ({})", what, response.status, code);
}

}  // namespace

std::string choose_auth_method(const AuthServerMetadata& server, bool has_secret) {
  if (!has_secret) return "none";
  const auto& methods = server.token_endpoint_auth_methods;
  if (lists(methods, "client_secret_basic")) return "client_secret_basic";
  if (lists(methods, "client_secret_post")) return "client_secret_post";
  return "client_secret_basic";
}

AuthResult<TokenGrant> parse_token_response(std::string_view body, std::int64_t now_ms) {
  auto doc = core::json::parse_strict(body, core::json::ParseLimits{});
  if (!doc || !doc->is_object()) {
    return auth_error(AuthFailure::token_failed, "the token response is not a JSON object");
  }
  const bj::object& o = doc->get_object();
  TokenGrant out;
  out.access_token = token_text_of(o, "access_token");
  if (out.access_token.empty()) {
    return auth_error(AuthFailure::token_failed, "the token response has no access_token");
  }
  if (!core::ascii::iequals(token_text_of(o, "token_type"), "bearer")) {
    return auth_error(AuthFailure::token_failed, "the token response's token_type is not Bearer");
  }
  out.refresh_token = token_text_of(o, "refresh_token");
  out.scope = token_text_of(o, "scope");
  if (const bj::value* e = o.if_contains("expires_in")) {
    double seconds = e->is_int64()    ? static_cast<double>(e->get_int64())
                     : e->is_uint64() ? static_cast<double>(e->get_uint64())
                     : e->is_double() ? e->get_double()
                                      : -1.0;
    if (seconds >= 0 && seconds < 1e10) {
      out.expires_at_ms = now_ms + static_cast<std::int64_t>(seconds * 1000.0);
    }
  }
  return out;
}

boost::asio::awaitable<AuthResult<TokenGrant>> request_token(const Fetch& fetch,
                                                             std::string token_endpoint,
                                                             const store::OAuthClientRecord& client,
                                                             FormFields grant, std::string resource,
                                                             std::int64_t now_ms) {
  transport::HttpRequest request = make_request("POST", std::move(token_endpoint), "Content-Type",
                                                "application/x-www-form-urlencoded");
  request.headers.emplace_back("Accept", "application/json");
  grant.emplace_back("resource", std::move(resource));
  if (client.auth_method == "client_secret_basic") {
    request.headers.emplace_back("Authorization",
                                 "Basic " + base64(percent_encode(client.client_id) + ":" +
                                                   percent_encode(client.client_secret)));
  } else {
    grant.emplace_back("client_id", client.client_id);
    if (client.auth_method == "client_secret_post") {
      grant.emplace_back("client_secret", client.client_secret);
    }
  }
  request.body = form_encode(grant);
  auto response = co_await fetch(std::move(request));
  if (!response) co_return transport_error(response.error(), "the token endpoint");
  if (response->status != 200) {
    co_return auth_error(AuthFailure::token_failed, refusal("token endpoint", *response));
  }
  co_return parse_token_response(response->body, now_ms);
}

boost::asio::awaitable<AuthResult<store::OAuthClientRecord>> register_client(
    const Fetch& fetch, const AuthServerMetadata& server, std::string redirect_uri,
    std::string scope) {
  const bool public_client = lists(server.token_endpoint_auth_methods, "none");
  bj::object body{{"client_name", "sluice"},
                  {"redirect_uris", bj::array{bj::value(redirect_uri)}},
                  {"grant_types", bj::array{"authorization_code", "refresh_token"}},
                  {"response_types", bj::array{"code"}},
                  {"application_type", "native"},
                  {"token_endpoint_auth_method",
                   public_client ? std::string("none") : choose_auth_method(server, true)}};
  if (!scope.empty()) body["scope"] = scope;
  transport::HttpRequest request =
      make_request("POST", server.registration_endpoint, "Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json");
  request.body = bj::serialize(body);
  auto response = co_await fetch(std::move(request));
  if (!response) co_return transport_error(response.error(), "the registration endpoint");
  if (response->status != 200 && response->status != 201) {
    co_return auth_error(AuthFailure::registration_failed,
                         refusal("registration endpoint", *response));
  }
  auto doc = core::json::parse_strict(response->body, core::json::ParseLimits{});
  if (!doc || !doc->is_object() || token_text_of(doc->get_object(), "client_id").empty()) {
    co_return auth_error(AuthFailure::registration_failed,
                         "the registration response has no client_id");
  }
  const bj::object& o = doc->get_object();
  store::OAuthClientRecord out;
  out.client_id = token_text_of(o, "client_id");
  out.client_secret = token_text_of(o, "client_secret");
  out.registered = true;
  std::string method = token_text_of(o, "token_endpoint_auth_method");
  if (method != "none" && method != "client_secret_basic" && method != "client_secret_post") {
    method = choose_auth_method(server, !out.client_secret.empty());
  }
  if (method != "none" && out.client_secret.empty()) method = "none";
  out.auth_method = std::move(method);
  co_return out;
}

}  // namespace sluice::gateway::auth
