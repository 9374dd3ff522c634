#include "gateway/auth/metadata.hpp"

#include "core/json.hpp"
#include "gateway/auth/url.hpp"

#include <fmt/format.h>
#include <boost/json/value.hpp>

#include <algorithm>
#include <utility>

namespace sluice::gateway::auth {
namespace bj = boost::json;
namespace {

AuthError invalid(std::string what) { return auth_error(AuthFailure::metadata_invalid, what); }

AuthResult<bj::object> parse_object(std::string_view body, std::string_view what) {
  auto doc = core::json::parse_strict(body, core::json::ParseLimits{});
  if (!doc || !doc->is_object()) return invalid(fmt::format("{} is not a JSON object", what));
  return std::move(doc->get_object());
}

std::string text_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  const bj::string* s = v != nullptr ? v->if_string() : nullptr;
  return s != nullptr ? std::string(s->data(), s->size()) : std::string();
}

std::vector<std::string> texts_of(const bj::object& o, std::string_view key) {
  std::vector<std::string> out;
  const bj::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_array()) return out;
  for (const bj::value& item : v->get_array()) {
    if (const bj::string* s = item.if_string()) out.emplace_back(s->data(), s->size());
  }
  return out;
}

bool flag_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

}  // namespace

AuthResult<ProtectedResourceMetadata> parse_protected_resource(std::string_view body,
                                                               std::string_view server_url) {
  AuthResult<bj::object> doc = parse_object(body, "the protected-resource metadata");
  if (!doc) return doc.error();
  ProtectedResourceMetadata out;
  out.resource = text_of(*doc, "resource");
  if (out.resource.empty()) return invalid("the protected-resource metadata has no resource");
  if (!resource_covers(out.resource, server_url)) {
    return invalid("the protected-resource metadata names another resource than the server URL");
  }
  out.authorization_servers = texts_of(*doc, "authorization_servers");
  std::erase_if(out.authorization_servers,
                [](const std::string& s) { return !is_acceptable_endpoint(s); });
  if (out.authorization_servers.empty()) {
    return invalid("the protected-resource metadata names no usable authorization server");
  }
  out.scopes_supported = texts_of(*doc, "scopes_supported");
  return out;
}

AuthResult<AuthServerMetadata> parse_auth_server(std::string_view body, std::string_view issuer) {
  AuthResult<bj::object> doc = parse_object(body, "the authorization-server metadata");
  if (!doc) return doc.error();
  AuthServerMetadata out;
  out.issuer = text_of(*doc, "issuer");
  if (out.issuer != issuer) {
    return invalid(
        "the authorization-server metadata's issuer is not the issuer it was fetched for");
  }
  out.authorization_endpoint = text_of(*doc, "authorization_endpoint");
  out.token_endpoint = text_of(*doc, "token_endpoint");
  out.registration_endpoint = text_of(*doc, "registration_endpoint");
  if (!is_acceptable_endpoint(out.authorization_endpoint) ||
      !is_acceptable_endpoint(out.token_endpoint)) {
    return invalid("the authorization server's endpoints are missing or not https");
  }
  if (!out.registration_endpoint.empty() && !is_acceptable_endpoint(out.registration_endpoint)) {
    out.registration_endpoint.clear();
  }
  const std::vector<std::string> pkce = texts_of(*doc, "code_challenge_methods_supported");
  if (std::find(pkce.begin(), pkce.end(), "S256") == pkce.end()) {
    return invalid("the authorization server does not support PKCE with S256");
  }
  out.scopes_supported = texts_of(*doc, "scopes_supported");
  out.token_endpoint_auth_methods = texts_of(*doc, "token_endpoint_auth_methods_supported");
  if (!doc->contains("token_endpoint_auth_methods_supported")) {
    out.token_endpoint_auth_methods = {"client_secret_basic"};
  }
  out.client_id_metadata_document_supported =
      flag_of(*doc, "client_id_metadata_document_supported");
  out.iss_parameter_supported = flag_of(*doc, "authorization_response_iss_parameter_supported");
  return out;
}

boost::asio::awaitable<AuthResult<ProtectedResourceMetadata>> discover_protected_resource(
    const Fetch& fetch, std::string server_url, std::optional<std::string> from_challenge) {
  std::vector<std::string> urls;
  if (from_challenge && is_acceptable_endpoint(*from_challenge)) {
    urls.push_back(std::move(*from_challenge));
  } else {
    urls = protected_resource_urls(server_url);
  }
  for (std::string& url : urls) {
    auto response =
        co_await fetch(make_request("GET", std::move(url), "Accept", "application/json"));
    if (!response) co_return transport_error(response.error(), "the protected-resource metadata");
    if (response->status < 200 || response->status > 299) continue;
    co_return parse_protected_resource(response->body, server_url);
  }
  co_return auth_error(AuthFailure::discovery_failed,
                       "no protected-resource metadata was found at the well-known locations");
}

boost::asio::awaitable<AuthResult<AuthServerMetadata>> discover_auth_server(const Fetch& fetch,
                                                                            std::string issuer) {
  for (std::string& url : auth_server_metadata_urls(issuer)) {
    auto response =
        co_await fetch(make_request("GET", std::move(url), "Accept", "application/json"));
    if (!response) co_return transport_error(response.error(), "the authorization-server metadata");
    if (response->status < 200 || response->status > 299) continue;
    co_return parse_auth_server(response->body, issuer);
  }
  co_return auth_error(AuthFailure::discovery_failed,
                       "no authorization-server metadata was found at the well-known locations");
}

}  // namespace sluice::gateway::auth
