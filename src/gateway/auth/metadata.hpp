#pragma once
// Discovery (RFC 9728 protected-resource metadata, RFC 8414 / OpenID Connect authorization
// server metadata) and the checks on what is found:
// - the protected resource's `resource` must cover the server URL (url.hpp resource_covers);
//   it is kept as the server wrote it, since the `resource` parameter repeats it byte for byte;
// - it must name at least one authorization server;
// - the authorization server's `issuer` must equal, byte for byte, the issuer its metadata
//   was fetched for; its endpoints must be https (or http to loopback);
// - it must list S256 in code_challenge_methods_supported (PKCE is mandatory; absent means
//   unsupported).
// Each location is tried in order; a non-2xx answer moves on to the next, a transport failure
// ends the discovery. Threading: the loop thread of the Fetch.
#include "gateway/auth/fetch.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::gateway::auth {

struct ProtectedResourceMetadata {
  std::string resource;  // byte for byte as published
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes_supported;
};

struct AuthServerMetadata {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;  // empty: no dynamic registration
  std::vector<std::string> scopes_supported;
  // As listed; RFC 8414's default (client_secret_basic) when the field is absent.
  std::vector<std::string> token_endpoint_auth_methods;
  bool client_id_metadata_document_supported = false;
  bool iss_parameter_supported = false;  // authorization_response_iss_parameter_supported
};

AuthResult<ProtectedResourceMetadata> parse_protected_resource(std::string_view body,
                                                               std::string_view server_url);
AuthResult<AuthServerMetadata> parse_auth_server(std::string_view body, std::string_view issuer);

// From the challenge's resource_metadata URL when it has one, else protected_resource_urls().
boost::asio::awaitable<AuthResult<ProtectedResourceMetadata>> discover_protected_resource(
    const Fetch& fetch, std::string server_url, std::optional<std::string> from_challenge);

// From auth_server_metadata_urls(issuer), in order.
boost::asio::awaitable<AuthResult<AuthServerMetadata>> discover_auth_server(const Fetch& fetch,
                                                                            std::string issuer);

}  // namespace sluice::gateway::auth
