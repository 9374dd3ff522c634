#include "gateway/downstream/remote_transport.hpp"

#include "core/log.hpp"
#include "gateway/downstream/remote_auth.hpp"

namespace sluice::gateway {

namespace {

transport::RemoteOptions options_of(boost::asio::io_context& io, const config::ServerConfig& config,
                                    const core::Limits& limits,
                                    const std::filesystem::path& state_dir) {
  const auto& server = std::get<config::RemoteServer>(config.transport);
  std::string name = config.name;
  transport::RemoteOptions options;
  options.label = std::move(name);
  options.url = server.url;
  options.legacy_sse = server.type == "sse";
  options.headers = server.headers;
  options.http.max_body_bytes = limits.max_message_bytes;
  options.http.ca_file = server.ca_file;
  options.max_json_depth = limits.max_json_depth;
  if (!state_dir.empty() && wants_oauth(server)) {
    options.auth = std::make_shared<OAuthBearer>(io, config, state_dir);
  }
  return options;
}

}  // namespace

RemoteTransport::RemoteTransport(boost::asio::io_context& io, const config::ServerConfig& server,
                                 const core::Limits& limits, const std::filesystem::path& state_dir)
    : connection_(
          transport::RemoteConnection::create(io, options_of(io, server, limits, state_dir))) {
  const auto& remote = std::get<config::RemoteServer>(server.transport);
  core::log::info("server {}: connecting to its {} endpoint", server.name,
                  remote.type == "sse" ? "legacy SSE" : "Streamable HTTP");
}

RemoteTransport::~RemoteTransport() {
  // Ends every exchange now and forgets the callbacks into this object (a close() that ran
  // already did both).
  connection_->abandon();
}

std::string RemoteTransport::problem() const {
  const auto& failure = connection_->failure();
  return failure ? failure->kind + ": " + failure->message : std::string();
}

void RemoteTransport::start(std::shared_ptr<mcp::Session> session,
                            std::function<void()> on_closed) {
  // The connection's own end (the remote side went away) is both the stream's close and the
  // transport's end: there is no process exit to wait for.
  // on_closed may tear this transport down: nothing of it is touched after that call.
  connection_->start(std::move(session), [this, on_closed = std::move(on_closed)] {
    std::function<void()> ended = closing_ ? std::function<void()>() : std::exchange(on_end_, {});
    if (on_closed) on_closed();
    if (ended) ended();
  });
}

boost::asio::awaitable<bool> RemoteTransport::wait_end_for(core::Clock::duration) {
  co_return true;  // nothing outlives close(): no process, and exchanges end with it
}

boost::asio::awaitable<void> RemoteTransport::close(bool orderly) {
  closing_ = true;
  co_await connection_->close(orderly);
}

}  // namespace sluice::gateway
