#include "gateway/auth/fetch.hpp"

#include <fmt/format.h>

namespace sluice::gateway::auth {

std::string_view failure_name(AuthFailure failure) {
  switch (failure) {
    case AuthFailure::auth_required:
      return "auth_required";
    case AuthFailure::discovery_failed:
      return "discovery_failed";
    case AuthFailure::metadata_invalid:
      return "metadata_invalid";
    case AuthFailure::no_client_identity:
      return "no_client_identity";
    case AuthFailure::registration_failed:
      return "registration_failed";
    case AuthFailure::authorization_failed:
      return "authorization_failed";
    case AuthFailure::token_failed:
      return "token_failed";
    case AuthFailure::store_failed:
      return "store_failed";
    case AuthFailure::transport_failed:
      return "transport_failed";
  }
  return "unknown";
}

void throw_exception_from_error(const AuthError& e, const boost::source_location&) {
  throw core::ErrorException(core::make_error(e.message));
}

transport::HttpRequest make_request(std::string method, std::string url,
                                    std::string_view field_name, std::string_view field_value) {
  transport::HttpRequest request;
  request.method = std::move(method);
  request.url = std::move(url);
  if (!field_name.empty()) request.headers.emplace_back(field_name, field_value);
  return request;
}

AuthError transport_error(const transport::HttpError& e, std::string_view what) {
  return auth_error(AuthFailure::transport_failed, fmt::format("fetching {} failed ({})", what,
                                                               transport::failure_name(e.failure)));
}

}  // namespace sluice::gateway::auth
