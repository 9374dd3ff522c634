#pragma once
// A stdio downstream: a supervised child process (process::SupervisedChild: spawn, exit
// watch, stderr drain, orderly teardown, exit classification, executable identity) and the
// newline-delimited JSON-RPC stream over its stdin and stdout (transport::FdStream).
//
// Ownership: owns the child and the stream. Destruction closes the stream and lets the
// child's destructor SIGKILL its group and reap. Threading: the gateway's io_context thread.
#include "config/gateway_config.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "gateway/downstream/transport.hpp"
#include "process/supervised_child.hpp"
#include "transport/fd_stream.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>

namespace sluice::gateway {

class ChildTransport final : public DownstreamTransport {
 public:
  // Spawns `server`'s command, labelled `name`, with `owner_token` in its environment.
  static core::Result<std::unique_ptr<ChildTransport>> open(boost::asio::io_context& io,
                                                            const config::StdioServer& server,
                                                            std::string name,
                                                            std::string owner_token,
                                                            const core::Limits& limits);
  ~ChildTransport() override;

  mcp::Outbox& outbox() override { return *stream_; }
  void start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed) override;
  bool protocol_violation() const override { return stream_->protocol_violation(); }
  void on_end(std::function<void()> callback) override { child_->on_exit(std::move(callback)); }
  boost::asio::awaitable<bool> wait_end_for(core::Clock::duration timeout) override;
  boost::asio::awaitable<void> close(bool orderly) override;
  int foreign_signal() const override;
  bool code_changed() const override { return child_->executable_changed(); }
  pid_t pid() const override { return child_->pid(); }
  bool remote() const override { return false; }
  void param_headers(std::shared_ptr<const mcp::ParamHeaders>) override {}
  std::string problem() const override { return {}; }

 private:
  explicit ChildTransport(std::unique_ptr<process::SupervisedChild> child)
      : child_(std::move(child)) {}
  std::unique_ptr<process::SupervisedChild> child_;
  std::shared_ptr<transport::FdStream> stream_;
};

}  // namespace sluice::gateway
