#pragma once
// The bearer tokens of a protected remote server: transport::RemoteAuth over the server's
// auth::OAuthClient, its token store (the state directory's) and an HTTP client of its own
// for the authorization servers. When no token can be had without the operator, the reason
// names the command that gets one (`sluice auth login <server>`).
//
// Ownership: shared by the server's RemoteConnection and the coroutines that wait on it, so a
// flow in progress keeps it alive. Threading: the io_context thread.
#include "config/gateway_config.hpp"
#include "gateway/auth/oauth_client.hpp"
#include "store/token_store.hpp"
#include "transport/http_client.hpp"
#include "transport/remote_mcp.hpp"

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace sluice::gateway {

class OAuthBearer final : public transport::RemoteAuth {
 public:
  // For `server` (a remote entry), its tokens kept in `state_dir`.
  OAuthBearer(boost::asio::io_context& io, const config::ServerConfig& server,
              const std::filesystem::path& state_dir);

  boost::asio::awaitable<core::Result<std::string>> bearer() override;
  boost::asio::awaitable<core::Result<std::string>> refused(int status,
                                                            std::string www_authenticate,
                                                            std::string sent) override;
  // The interactive login (`sluice auth login`): see auth::OAuthClient::login.
  boost::asio::awaitable<auth::AuthResult<void>> login(
      std::function<void(std::string_view)> on_authorize_url, std::string www_authenticate);

 private:
  core::Error required(const auth::AuthError& error) const;

  std::string name_;
  transport::HttpClient http_;
  store::TokenStore store_;
  auth::OAuthClient oauth_;
};

// Whether `server` gets OAuth: a remote entry whose own headers carry no Authorization.
bool wants_oauth(const config::RemoteServer& server);

}  // namespace sluice::gateway
