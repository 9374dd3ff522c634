#pragma once
// The Streamable HTTP front end (MCP 2025-03-26 .. 2025-11-25 transport): one endpoint,
// `/mcp`, for POST (one JSON-RPC message; a request is answered as JSON or as an SSE
// stream), GET (the session's standalone SSE stream, or the resumption of any stream with
// Last-Event-ID) and DELETE (ends the session); `/health` and `/metrics` beside it.
//
// Each MCP session (Mcp-Session-Id) is one mcp::Session with its own Handler; this class is
// its Outbox and routes every outgoing frame to exactly one SSE stream: a response to the
// stream of the POST that carried its request, a request or notification that belongs to a
// call to that call's stream, anything else to the standalone stream. Every stream keeps a
// bounded replay buffer, so a client whose connection broke resumes with Last-Event-ID;
// a closed connection never cancels its request (GATEWAY-INVARIANTS C8), DELETE cancels
// all of the session's calls.
//
// Protection: RFC 9112 framing (exactly one Host, at most one Origin, Transfer-Encoding
// only `chunked`, a valid Content-Length; else 400, or 501 for another coding, then
// close); Host and Origin checked against loopback names (DNS rebinding) → 403; an
// optional bearer token compared in constant time → 401; body cap → 413; header and body
// read deadlines; a per-address token bucket → 429; a session cap with idle expiry → 503;
// a connection cap and a per-address cap on connections without a complete request (Limits)
// → 503 and close. Error bodies describe what was wrong, never what was sent.
//
// Threading: the owning io_context thread only (one loop for protocol and gateway state).
// Ownership: created by shared_ptr; connection coroutines keep it alive. stop() closes the
// listener, ends every session and closes every connection so that io_context::run() can
// return; sessions retired while their calls were still running are kept until those
// calls finish (their handler is borrowed by the coroutines serving them).
#include "core/version.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "mcp/session.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sluice::transport {

struct HttpOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 3344;
  // Bearer token required on /mcp and /metrics (and for /health details); empty: none.
  std::string auth_token;
  // Host names accepted in Host and Origin besides localhost, 127.0.0.1 and [::1].
  std::vector<std::string> allowed_hosts;
  // Origins accepted exactly as given (scheme://host[:port]).
  std::vector<std::string> allowed_origins;
  std::size_t max_sessions = 256;
  std::chrono::milliseconds session_idle{30 * 60 * 1000};
  // Requests per second per client address (bursts up to twice that); 0 turns it off.
  double rate_limit = 1000;
  // From waiting for a request until its headers are complete; then the body's bound.
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds body_timeout{30000};
  // One write to a client; a client that stops reading is cut off after it.
  std::chrono::milliseconds write_timeout{30000};
  std::size_t max_header_bytes = 16 * 1024;
  // An SSE comment written on an idle stream, so a vanished client is noticed.
  std::chrono::milliseconds sse_keepalive{15000};
  std::string version = core::kVersion;
};

struct HttpHooks {
  // The MCP server role for a new session (borrowed by the session until it is retired).
  std::function<std::unique_ptr<mcp::Handler>(std::shared_ptr<mcp::Session>)> make_handler;
  // /health body: the gateway's full report when `detailed`, else a summary without any
  // server details.
  std::function<std::string(bool detailed)> health;
  // The gateway's Prometheus lines (the HTTP server appends its own).
  std::function<std::string()> metrics;
};

class HttpServer {
 public:
  static std::shared_ptr<HttpServer> create(boost::asio::io_context& io, HttpOptions options,
                                            HttpHooks hooks, const core::Limits& limits);
  virtual ~HttpServer() = default;

  // Binds and listens; the bound port (useful with port 0), or why it could not.
  virtual core::Result<std::uint16_t> listen() = 0;
  virtual void start() = 0;
  // Stops accepting, ends every session (their calls cancelled), closes every connection.
  virtual void stop() = 0;
  // Sessions retired with calls still running: destroyed once those calls end (or at
  // stop, after the gateway drained).
  virtual void release_retired() = 0;
  virtual std::size_t session_count() const = 0;
};

}  // namespace sluice::transport
