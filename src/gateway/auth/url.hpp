#pragma once
// The URL rules of the OAuth flow (Boost.URL underneath): the well-known metadata locations
// of RFC 9728 and RFC 8414 / OpenID Connect discovery in the order the MCP authorization
// specification gives, whether a protected resource's identifier covers the server URL, which
// endpoint URLs are acceptable (https, or http to a loopback host), and the authorization
// response carried by a redirect to sluice's own redirect URI.
// Threading: pure functions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::gateway::auth {

// scheme://authority of an absolute http(s) URL, scheme and host lower case; nullopt when
// `url` is not one.
std::optional<std::string> origin_of(std::string_view url);

// Where the protected-resource metadata of the MCP endpoint `server_url` may be, in order:
// /.well-known/oauth-protected-resource with the endpoint's path appended (when it has one),
// then the root /.well-known/oauth-protected-resource.
std::vector<std::string> protected_resource_urls(std::string_view server_url);

// Where the metadata of the authorization server `issuer` may be, in order. With a path
// (https://as/tenant1): /.well-known/oauth-authorization-server/tenant1,
// /.well-known/openid-configuration/tenant1, /tenant1/.well-known/openid-configuration.
// Without one: /.well-known/oauth-authorization-server, /.well-known/openid-configuration.
std::vector<std::string> auth_server_metadata_urls(std::string_view issuer);

// Whether the resource identifier `resource` (from protected-resource metadata) names the
// server at `server_url`: the same scheme, host and port, and its path equal to the server's
// or a parent of it at a segment boundary; no query, no fragment.
bool resource_covers(std::string_view resource, std::string_view server_url);

// An absolute https URL, or http to 127.0.0.1, [::1] or localhost; no fragment.
bool is_acceptable_endpoint(std::string_view url);

// The query parameters of a redirect `location` when it points at `redirect_uri` (the same
// scheme, host, port and path); nullopt when it points elsewhere or is not a URL.
std::optional<std::vector<std::pair<std::string, std::string>>> redirect_params(
    std::string_view location, std::string_view redirect_uri);

// The port and path a loopback redirect URI (http://127.0.0.1:<port>/<path>) names; nullopt
// for any other URI. A URI without a port gives 0.
struct LoopbackTarget {
  std::uint16_t port = 0;
  std::string path;
};
std::optional<LoopbackTarget> loopback_target(std::string_view redirect_uri);

// `base` with the query parameters appended, each percent-encoded.
std::string with_query(std::string_view base,
                       const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace sluice::gateway::auth
