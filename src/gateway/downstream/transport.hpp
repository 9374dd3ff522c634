#pragma once
// The connection a downstream peer talks over. The peer (the MCP client role) sees only this
// interface, so a new kind of downstream (Streamable HTTP, legacy SSE) is a new
// implementation here, not a branch in the downstream's start. ChildTransport (a stdio child
// under supervision) and RemoteTransport (a Streamable HTTP or legacy SSE server) implement
// it.
//
// Ownership: the Downstream owns its current transport (one per generation) by unique_ptr.
// The transport owns whatever it connects through (a child process and its pipes).
// close() is the orderly end; the destructor releases everything synchronously if close()
// was skipped. Threading: the gateway's io_context thread only.
#include "core/clock.hpp"
#include "mcp/era.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

namespace sluice::gateway {

class DownstreamTransport {
 public:
  virtual ~DownstreamTransport() = default;

  // Where the session writes its frames; valid for the transport's life.
  virtual mcp::Outbox& outbox() = 0;
  // Starts reading: every frame goes to `session`; `on_closed` runs once when the remote end
  // stops sending (closed its output, or broke the framing).
  virtual void start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed) = 0;
  // Whether reading stopped because the remote end sent a message over the size limit.
  virtual bool protocol_violation() const = 0;

  // Runs `callback` once when the remote end goes away by itself (a child's exit), never
  // after close() began.
  virtual void on_end(std::function<void()> callback) = 0;
  // Waits until that end is seen or `timeout` passes; whether it was seen.
  virtual boost::asio::awaitable<bool> wait_end_for(core::Clock::duration timeout) = 0;

  // Closes the connection: `orderly`, the remote end is asked to finish first (a child: its
  // stdin closed, then the signals of invariant P4); else at once. Releases everything.
  virtual boost::asio::awaitable<void> close(bool orderly) = 0;
  // After close(): the signal of a kill sluice did not send (invariant ds_external_kill),
  // else 0.
  virtual int foreign_signal() const = 0;
  // Whether the code serving the remote end changed since it was connected (ds_stale_code).
  virtual bool code_changed() const = 0;
  // The local process serving it, or -1.
  virtual pid_t pid() const = 0;
  // Whether the server is remote (Streamable HTTP or legacy SSE) rather than a child.
  virtual bool remote() const = 0;
  // The x-mcp-header parameters of a 2026-07-28 server's tools, from its latest listing (a
  // remote server gets them as Mcp-Param-* headers; stdio has no headers).
  virtual void param_headers(std::shared_ptr<const mcp::ParamHeaders> headers) = 0;
  // Why the connection failed or ended, when the transport knows better than the session
  // (a remote server's TLS failure, HTTP status, expired session): "<class>: <sentence>",
  // value-free; empty otherwise.
  virtual std::string problem() const = 0;
};

}  // namespace sluice::gateway
