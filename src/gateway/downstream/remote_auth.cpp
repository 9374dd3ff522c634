#include "gateway/downstream/remote_auth.hpp"

#include "store/fingerprint.hpp"

#include <fmt/format.h>

namespace sluice::gateway {
namespace asio = boost::asio;

namespace {

transport::HttpClientOptions auth_http_options(const config::RemoteServer& remote) {
  transport::HttpClientOptions options;
  options.request_deadline = std::chrono::seconds(30);
  options.max_body_bytes = 1u << 20;  // metadata, registrations and tokens are small
  options.ca_file = remote.ca_file;
  return options;
}

auth::OAuthClientOptions oauth_options(const config::ServerConfig& server) {
  const auto& remote = std::get<config::RemoteServer>(server.transport);
  auth::OAuthClientOptions options;
  options.server = server.name;
  options.fingerprint = store::fingerprint(server);
  options.server_url = remote.url;
  if (remote.oauth) options.settings = *remote.oauth;
  return options;
}

// A token as a result (core::Error is made from a string too: the value is named).
core::Result<std::string> token_of(std::string token) {
  return core::Result<std::string>(boost::system::in_place_value, std::move(token));
}

}  // namespace

bool wants_oauth(const config::RemoteServer& server) {
  return !transport::field(server.headers, "Authorization");
}

OAuthBearer::OAuthBearer(asio::io_context& io, const config::ServerConfig& server,
                         const std::filesystem::path& state_dir)
    : name_(server.name),
      http_(io, auth_http_options(std::get<config::RemoteServer>(server.transport))),
      store_(state_dir),
      oauth_(
          io, oauth_options(server),
          [this](transport::HttpRequest request)
              -> asio::awaitable<transport::HttpResult<transport::HttpResponse>> {
            co_return co_await http_.exchange(std::move(request));
          },
          store_) {}

core::Error OAuthBearer::required(const auth::AuthError& error) const {
  return core::Error{fmt::format("{} ({}); run `sluice auth login {}`", error.message,
                                 auth::failure_name(error.failure), name_)};
}

asio::awaitable<core::Result<std::string>> OAuthBearer::bearer() {
  if (auto cached = oauth_.cached_bearer()) co_return token_of(std::string(*cached));
  auth::AuthResult<std::string> token = co_await oauth_.bearer();
  if (!token) co_return required(token.error());
  co_return token_of(std::move(*token));
}

asio::awaitable<core::Result<std::string>> OAuthBearer::refused(int status,
                                                                std::string www_authenticate,
                                                                std::string sent) {
  auth::Unauthorized refusal{status, std::move(www_authenticate), std::move(sent)};
  auth::AuthResult<std::string> token = co_await oauth_.on_unauthorized(std::move(refusal));
  if (!token) co_return required(token.error());
  co_return token_of(std::move(*token));
}

asio::awaitable<auth::AuthResult<void>> OAuthBearer::login(
    std::function<void(std::string_view)> on_authorize_url, std::string www_authenticate) {
  co_return co_await oauth_.login(std::move(on_authorize_url), std::move(www_authenticate));
}

}  // namespace sluice::gateway
