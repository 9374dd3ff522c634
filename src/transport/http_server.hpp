#pragma once
// The Streamable HTTP front end (MCP 2025-03-26 .. 2025-11-25 transport): one endpoint,
// `/mcp`, for POST (one JSON-RPC message; a request is answered as JSON or as an SSE
// stream), GET (the session's standalone SSE stream, or the resumption of any stream with
// Last-Event-ID) and DELETE (ends the session); `/health` and `/metrics` beside it.
//
// Each MCP session (Mcp-Session-Id) is one mcp::Session with its own Handler; its
// HttpSession is the session's Outbox and routes every outgoing frame to exactly one SSE
// stream: a response to the
// stream of the POST that carried its request, a request or notification that belongs to a
// call to that call's stream, anything else to the standalone stream. Every stream keeps a
// bounded replay buffer, so a client whose connection broke resumes with Last-Event-ID;
// a closed connection never cancels its request (invariant C8), DELETE cancels all of the
// session's calls.
//
// Protection: RFC 9112 framing (exactly one Host, at most one Origin, Transfer-Encoding
// only `chunked`, a valid Content-Length; else 400, or 501 for another coding, then
// close); Host and Origin checked against loopback names (DNS rebinding) → 403; an
// optional bearer token compared in constant time → 401; body cap → 413; header and body
// read deadlines; a per-address token bucket → 429; a session cap with idle expiry → 503;
// a connection cap and a per-address cap on connections without a complete request → 503
// and close. Every bound is a core::Limits field (http_*). Error bodies describe what was
// wrong, never what was sent.
//
// Inside (all in this folder): http_server.cpp is the listener and the connection (read a
// request, write a reply, linger, close); http_routes.cpp the request phases (admission by
// RequestGuard, then POST, GET, DELETE on /mcp, /health, /metrics); http_sse.cpp the SSE
// stream writer; http_session_table.* the sessions (create, find, expire, retire);
// http_session.* one session and its streams; http_framing.* what RFC 9112 refuses in a
// request head; http_metrics.* the Prometheus lines.
//
// Threading: the owning io_context thread only (one loop for protocol and gateway state).
// Ownership: created by shared_ptr; connection coroutines keep it alive. stop() closes the
// listener, ends every session and closes every connection so that io_context::run() can
// return; sessions retired while their calls were still running are kept until those
// calls finish (their handler is borrowed by the coroutines serving them).
#include "core/error.hpp"
#include "core/limits.hpp"
#include "mcp/session.hpp"
#include "transport/http_options.hpp"

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::transport {

struct HttpHooks {
  // The MCP server role for a new session (borrowed by the session until it is retired).
  std::function<std::unique_ptr<mcp::Handler>(std::shared_ptr<mcp::Session>)> make_handler;
  // /health body: the gateway's full report when `detailed`, else a summary without any
  // server details.
  std::function<std::string(bool detailed)> health;
  // The gateway's Prometheus lines (the HTTP server appends its own).
  std::function<std::string()> metrics;
  // The parameters a listed tool asks to see as headers (its inputSchema's x-mcp-header):
  // (property, header name) pairs, checked against a stateless tools/call's Mcp-Param-<name>
  // headers. Unset or empty: none.
  std::function<std::vector<std::pair<std::string, std::string>>(std::string_view tool)>
      param_headers;
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
