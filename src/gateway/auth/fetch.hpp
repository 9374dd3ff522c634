#pragma once
// What the OAuth client sends its HTTP requests with, and the failures it reports.
//
// Fetch is injected: the remote transport wires it to its transport::HttpClient (one request,
// no redirect followed, the response whole), tests to an in-memory authorization server. The
// OAuth code never reaches for a client of its own, so every flow is testable on a loop.
//
// AuthError messages are value-free: they name the step and the kind of problem (an HTTP
// status, a missing field, an OAuth error code from the registered list), never a token, a
// secret, a code, a URL's query or a body.
#include "core/error.hpp"
#include "transport/http_client.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::gateway::auth {

using Fetch = std::function<boost::asio::awaitable<transport::HttpResult<transport::HttpResponse>>(
    transport::HttpRequest)>;

enum class AuthFailure {
  auth_required,         // no usable token and none can be had without the operator's login
  discovery_failed,      // protected-resource or authorization-server metadata not found
  metadata_invalid,      // found but refused (resource or issuer mismatch, no PKCE S256...)
  no_client_identity,    // neither pre-registered, a metadata document, nor registration
  registration_failed,   // dynamic client registration refused
  authorization_failed,  // the authorization response was refused (state, iss, error)
  token_failed,          // the token endpoint refused or answered something unusable
  store_failed,          // the token file could not be read or written
  transport_failed,      // a request did not complete (the HttpFailure is in the message)
};
std::string_view failure_name(AuthFailure failure);

struct AuthError {
  AuthFailure failure = AuthFailure::auth_required;
  std::string message;  // value-free
};

[[noreturn]] void throw_exception_from_error(const AuthError& e, const boost::source_location&);

template <class T>
using AuthResult = boost::system::result<T, AuthError>;

inline AuthError auth_error(AuthFailure failure, std::string message) {
  return AuthError{failure, std::move(message)};
}

// A request with one header field (an empty name: none).
transport::HttpRequest make_request(std::string method, std::string url,
                                    std::string_view field_name = {},
                                    std::string_view field_value = {});

// "fetching <what> failed (<the HttpFailure's name>)": a Fetch that did not complete.
AuthError transport_error(const transport::HttpError& e, std::string_view what);

}  // namespace sluice::gateway::auth
