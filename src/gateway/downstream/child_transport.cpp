#include "gateway/downstream/child_transport.hpp"

#include "core/log.hpp"

namespace sluice::gateway {

core::Result<std::unique_ptr<ChildTransport>> ChildTransport::open(
    boost::asio::io_context& io, const config::StdioServer& server, std::string name,
    std::string owner_token, const core::Limits& limits) {
  process::SpawnSpec spec;
  spec.program = server.command;
  spec.args = server.args;
  spec.env = server.env;
  spec.cwd = server.cwd;
  auto child =
      process::SupervisedChild::spawn(io, std::move(spec), name, std::move(owner_token), limits);
  if (!child) return child.error();
  core::log::info("server {}: started (pid {})", name, (*child)->pid());
  std::unique_ptr<ChildTransport> self(new ChildTransport(std::move(*child)));
  // A line over the message limit is a protocol violation here (not waited out).
  self->stream_ = transport::FdStream::create(io, self->child_->take_stdout().release(),
                                              self->child_->take_stdin().release(), limits,
                                              transport::OverlongLine::end_stream);
  return self;
}

ChildTransport::~ChildTransport() {
  if (stream_) stream_->close();
  // child_'s destructor SIGKILLs the group and reaps if close() did not run.
}

void ChildTransport::start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed) {
  stream_->start(std::move(session), std::move(on_closed));
}

boost::asio::awaitable<bool> ChildTransport::wait_end_for(core::Clock::duration timeout) {
  co_return co_await child_->wait_exit_for(timeout);
}

boost::asio::awaitable<void> ChildTransport::close(bool orderly) {
  std::function<void()> close_stdin;
  if (orderly) close_stdin = [stream = stream_] { stream->close_output(); };
  co_await child_->teardown(std::move(close_stdin));
  stream_->close();
}

int ChildTransport::foreign_signal() const {
  if (child_->exit_kind() != process::ExitKind::foreign_kill) return 0;
  return child_->exit_status()->code;
}

}  // namespace sluice::gateway
