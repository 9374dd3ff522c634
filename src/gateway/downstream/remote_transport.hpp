#pragma once
// A remote downstream: a Streamable HTTP or legacy HTTP+SSE server, reached through
// transport::RemoteConnection (the MCP client side over sluice's HTTP client). There is no
// process: the connection's end is the server going away (a session it no longer knows, a
// refused credential, a stream that ended, repeated failures), and close() ends every
// exchange and DELETEs the session.
//
// Ownership: owns the connection (shared with its exchanges while they run; close() ends
// them). Threading: the gateway's io_context thread.
#include "config/gateway_config.hpp"
#include "core/limits.hpp"
#include "gateway/downstream/transport.hpp"
#include "transport/remote_mcp.hpp"

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace sluice::gateway {

class RemoteTransport final : public DownstreamTransport {
 public:
  // `server` is a remote entry; with a `state_dir`, a server whose entry sets no
  // Authorization header gets OAuth (its tokens kept there).
  RemoteTransport(boost::asio::io_context& io, const config::ServerConfig& server,
                  const core::Limits& limits, const std::filesystem::path& state_dir);
  ~RemoteTransport() override;

  mcp::Outbox& outbox() override { return *connection_; }
  void start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed) override;
  bool protocol_violation() const override { return connection_->protocol_violation(); }
  void on_end(std::function<void()> callback) override { on_end_ = std::move(callback); }
  boost::asio::awaitable<bool> wait_end_for(core::Clock::duration timeout) override;
  boost::asio::awaitable<void> close(bool orderly) override;
  int foreign_signal() const override { return 0; }
  bool code_changed() const override { return false; }
  pid_t pid() const override { return -1; }
  bool remote() const override { return true; }
  void param_headers(std::shared_ptr<const mcp::ParamHeaders> headers) override {
    connection_->set_param_headers(std::move(headers));
  }
  std::string problem() const override;

 private:
  std::shared_ptr<transport::RemoteConnection> connection_;
  std::function<void()> on_end_;
  bool closing_ = false;
};

}  // namespace sluice::gateway
