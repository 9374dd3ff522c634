#include "transport/http_server.hpp"

#include "transport/http_guard.hpp"
#include "transport/http_session.hpp"

#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "mcp/protocol.hpp"
#include "rpc/message.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <list>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace sluice::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace cj = core::json;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kAwait = asio::use_awaitable;

bool accepts(std::string_view accept, std::string_view type) {
  return accept.find(type) != std::string_view::npos;
}

std::string json_error_body(int code, std::string_view message) {
  return rpc::make_error("null", code, message);
}

// A request head refused for its framing (RFC 9112), before its body is read.
struct HeadRefusal {
  http::status status;
  std::string_view message;
};

// Transfer-Encoding, over all its lines: absent, or exactly `chunked` once (HTTP/1.1).
// Beast's parser reads "gzip, chunked" as plain chunked and a request whose codings do not
// end with chunked as having no body; both are refused here.
std::optional<HeadRefusal> transfer_coding_refusal(const http::fields& fields, unsigned version) {
  auto [first, last] = fields.equal_range(http::field::transfer_encoding);
  if (first == last) return std::nullopt;
  constexpr HeadRefusal kUnframed{
      http::status::bad_request,
      "Bad Request: the body length cannot be determined (Transfer-Encoding must be chunked)"};
  if (version < 11) return kUnframed;
  std::size_t codings = 0, chunked = 0;
  bool last_chunked = false;
  for (auto it = first; it != last; ++it) {
    std::string_view list = it->value();
    while (!list.empty()) {
      std::size_t comma = list.find(',');
      std::string_view item = cj::trim(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      if (item.empty()) continue;  // empty list elements are allowed
      ++codings;
      last_chunked = beast::iequals(item, "chunked");
      if (last_chunked) ++chunked;
    }
  }
  if (!last_chunked || chunked > 1) return kUnframed;
  if (codings > 1) {
    return HeadRefusal{http::status::not_implemented,
                       "Not Implemented: the only transfer coding accepted is chunked"};
  }
  return std::nullopt;
}

// What RFC 9112 refuses in a request head that Beast's parser lets through.
std::optional<HeadRefusal> head_refusal(const http::request_header<>& head) {
  if (auto r = transfer_coding_refusal(head, head.version())) return r;
  const std::size_t hosts = head.count(http::field::host);
  if (hosts == 0) {
    return HeadRefusal{http::status::bad_request, "Bad Request: the Host header is required"};
  }
  if (hosts > 1) {
    return HeadRefusal{http::status::bad_request, "Bad Request: more than one Host header"};
  }
  if (head[http::field::host].empty()) {
    return HeadRefusal{http::status::bad_request, "Bad Request: the Host header is empty"};
  }
  if (head.count(http::field::origin) > 1) {
    return HeadRefusal{http::status::bad_request, "Bad Request: more than one Origin header"};
  }
  return std::nullopt;
}

struct Counters {
  std::map<unsigned, std::uint64_t> by_status;
  std::uint64_t sessions_created = 0;
  std::uint64_t sessions_deleted = 0;
  std::uint64_t sessions_expired = 0;
  std::uint64_t sessions_refused = 0;
  std::uint64_t replay_dropped = 0;
  std::uint64_t resumed = 0;
  std::uint64_t connections_refused = 0;          // at the connection cap
  std::uint64_t connections_refused_address = 0;  // at the per-address cap
  std::uint64_t keepalive_closed_address = 0;     // kept-alive ones closed at that cap
  std::uint64_t connections = 0;
};

struct Connection {
  explicit Connection(tcp::socket socket)
      : stream(std::move(socket)), wake(stream.get_executor()) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  asio::steady_timer wake;  // cancelled to wake the SSE writer
  std::string address;
  bool peer_gone = false;
  bool watched = false;     // a watch_peer read is pending (a GET stream): no other read
  bool incomplete = false;  // counted in incomplete_ (no complete request yet)
};

class HttpServerImpl : public HttpServer, public std::enable_shared_from_this<HttpServerImpl> {
 public:
  HttpServerImpl(asio::io_context& io, HttpOptions options, HttpHooks hooks,
                 const core::Limits& limits)
      : io_(io),
        options_(std::move(options)),
        hooks_(std::move(hooks)),
        limits_(limits),
        acceptor_(io),
        sweep_(io),
        guard_(options_.allowed_hosts, options_.allowed_origins, options_.auth_token,
               options_.rate_limit) {}

  core::Result<std::uint16_t> listen() override;
  void start() override;
  void stop() override;
  void release_retired() override;
  std::size_t session_count() const override { return sessions_.size(); }

 private:
  using Request = http::request<http::string_body>;
  struct Reply {
    http::status status = http::status::ok;
    std::string content_type = "application/json";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
  };

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve_connection(std::shared_ptr<Connection> conn);
  // A connection past a cap: 503 with Retry-After, then closed.
  asio::awaitable<void> refuse_connection(std::shared_ptr<Connection> conn,
                                          std::string_view message);
  // Stops sending, then reads what the client is still sending for a short while, so that
  // closing does not reset the connection before the client has read the answer.
  asio::awaitable<void> linger(Connection& conn);
  // The refusal of a request whose head or body Beast could not read; nullopt when the
  // connection just ends (a timeout, a close, an I/O error).
  std::optional<Reply> read_refusal(const boost::system::error_code& ec) const;
  // Counts `conn` among its address's connections without a complete request, or not.
  void set_incomplete(Connection& conn, bool incomplete);
  std::size_t incomplete_at(const std::string& address) const;
  // A connection may wait for another request: not stopping, its address under its cap.
  bool may_keep_alive(const Connection& conn) const;
  // Handles one request; writes the answer (or an SSE stream); false: close the connection.
  asio::awaitable<bool> handle(std::shared_ptr<Connection> conn, Request& req);
  asio::awaitable<bool> handle_post(std::shared_ptr<Connection> conn, Request& req, Reply& reply);
  asio::awaitable<bool> handle_get(std::shared_ptr<Connection> conn, Request& req, Reply& reply);
  asio::awaitable<bool> write_reply(Connection& conn, const Request& req, Reply reply);
  // Streams `stream` to the connection until it finishes, the session ends or another
  // connection takes the stream over. The SSE headers are written first.
  asio::awaitable<bool> run_sse(std::shared_ptr<Connection> conn, const Request& req,
                                std::shared_ptr<HttpSession> session,
                                std::shared_ptr<SseStream> stream, bool prime,
                                std::vector<std::pair<std::string, std::string>> headers);
  asio::awaitable<void> watch_peer(std::shared_ptr<Connection> conn);
  asio::awaitable<void> sweep_loop();
  void sweep();

  static Reply error_reply(http::status status, int code, std::string_view message);
  // The session a request names: its Mcp-Session-Id, else 400 (none) or 404 (unknown or
  // ended) in `refusal`.
  std::shared_ptr<HttpSession> find_session(const Request& req, Reply& refusal);
  std::string metrics_text() const;
  void end_session(const std::string& id, bool expired);

  asio::io_context& io_;
  HttpOptions options_;
  HttpHooks hooks_;
  const core::Limits& limits_;
  tcp::acceptor acceptor_;
  asio::steady_timer sweep_;
  bool stopping_ = false;
  RequestGuard guard_;
  std::unordered_map<std::string, std::shared_ptr<HttpSession>> sessions_;
  std::list<std::shared_ptr<HttpSession>> retired_;
  std::unordered_set<Connection*> connections_;
  std::unordered_set<Connection*> refusing_;  // being answered 503 past a cap
  // Per client address: connections without a complete request (entries at 0 are erased).
  std::unordered_map<std::string, std::size_t> incomplete_;
  std::uint64_t next_session_number_ = 1;
  Counters counters_;
};

core::Result<std::uint16_t> HttpServerImpl::listen() {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options_.host, ec);
  if (ec) return core::make_error("--host is not an IP address");
  tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return core::make_error(
        fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, ec.message()));
  }
  return acceptor_.local_endpoint().port();
}

void HttpServerImpl::start() {
  core::spawn(io_, accept_loop(), "the HTTP accept loop");
  core::spawn(io_, sweep_loop(), "the HTTP session sweep");
}

void HttpServerImpl::stop() {
  if (stopping_) return;
  stopping_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  sweep_.cancel();
  std::vector<std::string> ids;
  for (auto& [id, s] : sessions_) ids.push_back(id);
  for (const auto& id : ids) end_session(id, false);
  for (auto* set : {&connections_, &refusing_}) {
    for (Connection* c : *set) {
      c->peer_gone = true;
      c->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      c->stream.socket().close(ec);
      c->wake.cancel();
    }
  }
}

void HttpServerImpl::release_retired() {
  for (auto it = retired_.begin(); it != retired_.end();) {
    if (!(*it)->calls_running()) {
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
}

void HttpServerImpl::end_session(const std::string& id, bool expired) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  std::shared_ptr<HttpSession> s = it->second;
  sessions_.erase(it);
  s->end();
  if (expired) {
    ++counters_.sessions_expired;
  } else {
    ++counters_.sessions_deleted;
  }
  if (s->calls_running()) retired_.push_back(std::move(s));
}

asio::awaitable<void> HttpServerImpl::accept_loop() {
  auto self = shared_from_this();
  while (!stopping_) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(kAwait, ec));
    if (ec) {
      if (stopping_ || ec == asio::error::operation_aborted) break;
      // EMFILE and the like: back off briefly instead of spinning.
      core::log::warn("http: accept failed: {}", ec.message());
      asio::steady_timer t(io_, std::chrono::milliseconds(50));
      co_await t.async_wait(asio::redirect_error(kAwait, ec));
      continue;
    }
    // Small writes (an SSE event, a 202) must leave at once: no Nagle delay.
    socket.set_option(tcp::no_delay(true), ec);
    auto conn = std::make_shared<Connection>(std::move(socket));
    auto remote = conn->stream.socket().remote_endpoint(ec);
    conn->address = "unknown";
    if (!ec) conn->address = remote.address().to_string();
    // Counted here, before the next accept, so that a burst of connections meets the caps.
    if (connections_.size() >= limits_.http_max_connections) {
      ++counters_.connections_refused;
      core::spawn(io_,
                  refuse_connection(conn, "Service Unavailable: too many connections; retry later"),
                  "an HTTP refusal",
                  [this, self = shared_from_this(), conn] { refusing_.erase(conn.get()); });
      continue;
    }
    if (incomplete_at(conn->address) >= limits_.http_max_incomplete_per_address) {
      ++counters_.connections_refused_address;
      core::spawn(io_,
                  refuse_connection(conn,
                                    "Service Unavailable: too many connections from this "
                                    "address without a complete request; retry later"),
                  "an HTTP refusal",
                  [this, self = shared_from_this(), conn] { refusing_.erase(conn.get()); });
      continue;
    }
    ++counters_.connections;
    connections_.insert(conn.get());
    set_incomplete(*conn, true);
    // A connection whose coroutine dies is forgotten, so stop() never touches it.
    core::spawn(io_, serve_connection(conn), "an HTTP connection",
                [this, self = shared_from_this(), conn] { connections_.erase(conn.get()); });
  }
}

asio::awaitable<void> HttpServerImpl::refuse_connection(std::shared_ptr<Connection> conn,
                                                        std::string_view message) {
  auto self = shared_from_this();
  // Each refusal holds its socket for at most the write and the linger; past that many at
  // once, a connection is closed without an answer rather than held.
  constexpr std::size_t kMaxRefusing = 64;
  if (refusing_.size() < kMaxRefusing && !stopping_) {
    refusing_.insert(conn.get());
    Request head;
    head.version(11);
    head.keep_alive(false);
    Reply r = error_reply(http::status::service_unavailable, -32000, message);
    r.headers.emplace_back("Retry-After", "1");
    co_await write_reply(*conn, head, std::move(r));
    if (!conn->peer_gone) co_await linger(*conn);
    refusing_.erase(conn.get());
  }
  boost::system::error_code ec;
  conn->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  conn->stream.socket().close(ec);
}

asio::awaitable<void> HttpServerImpl::linger(Connection& conn) {
  boost::system::error_code ec;
  conn.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  conn.stream.expires_after(std::chrono::milliseconds(500));
  std::array<char, 16384> sink;
  for (std::size_t drained = 0; drained < 4 * 1024 * 1024;) {
    std::size_t n =
        co_await conn.stream.async_read_some(asio::buffer(sink), asio::redirect_error(kAwait, ec));
    if (ec) break;
    drained += n;
  }
}

void HttpServerImpl::set_incomplete(Connection& conn, bool incomplete) {
  if (conn.incomplete == incomplete) return;
  conn.incomplete = incomplete;
  if (incomplete) {
    ++incomplete_[conn.address];
  } else if (auto it = incomplete_.find(conn.address);
             it != incomplete_.end() && --it->second == 0) {
    incomplete_.erase(it);
  }
}

std::size_t HttpServerImpl::incomplete_at(const std::string& address) const {
  auto it = incomplete_.find(address);
  return it == incomplete_.end() ? 0 : it->second;
}

bool HttpServerImpl::may_keep_alive(const Connection& conn) const {
  return !stopping_ && !conn.peer_gone &&
         incomplete_at(conn.address) < limits_.http_max_incomplete_per_address;
}

std::optional<HttpServerImpl::Reply> HttpServerImpl::read_refusal(
    const boost::system::error_code& ec) const {
  if (ec == http::error::header_limit) {
    return error_reply(http::status::request_header_fields_too_large, rpc::code::kInvalidRequest,
                       "request headers too large");
  }
  if (ec == http::error::body_limit) {
    // Refused before the body is read when the announced Content-Length is over the cap.
    return error_reply(
        http::status::payload_too_large, rpc::code::kInvalidRequest,
        fmt::format("request body too large (limit {} bytes)", limits_.max_message_bytes));
  }
  // The end of the connection, before or inside a request: nobody to answer.
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return std::nullopt;
  if (ec.category() != http::make_error_code(http::error::bad_method).category()) {
    return std::nullopt;  // a timeout, a reset: the connection just ends
  }
  if (ec == http::error::bad_version) {
    // Beast reads only HTTP/1.0 and HTTP/1.1 ("PRI * HTTP/2.0" too ends here).
    return error_reply(http::status::http_version_not_supported, rpc::code::kInvalidRequest,
                       "HTTP Version Not Supported: HTTP/1.1 or HTTP/1.0 only");
  }
  // Bad framing (RFC 9112: 400, then close): Beast's message names the kind of problem
  // ("bad Content-Length", "bad chunk"), never the bytes.
  return error_reply(http::status::bad_request, rpc::code::kInvalidRequest,
                     fmt::format("Bad Request: {}", ec.message()));
}

asio::awaitable<void> HttpServerImpl::serve_connection(std::shared_ptr<Connection> conn) {
  auto self = shared_from_this();
  // Not counted as incomplete past this coroutine, however it ends.
  struct Uncount {
    HttpServerImpl& server;
    Connection& conn;
    ~Uncount() { server.set_incomplete(conn, false); }
  } uncount{*this, *conn};
  for (;;) {
    if (stopping_ || conn->peer_gone) break;
    if (!conn->incomplete) {
      // Kept alive after a request: waiting for the next one counts against the address's
      // cap like a new connection; past it, this one is closed instead.
      if (!may_keep_alive(*conn)) {
        ++counters_.keepalive_closed_address;
        break;
      }
      set_incomplete(*conn, true);
    }
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
    parser.body_limit(limits_.max_message_bytes);
    boost::system::error_code ec;
    conn->stream.expires_after(options_.header_timeout);
    co_await http::async_read_header(conn->stream, conn->buffer, parser,
                                     asio::redirect_error(kAwait, ec));
    if (ec) {
      if (auto refusal = read_refusal(ec)) {
        Request head;
        head.version(11);
        co_await write_reply(*conn, head, std::move(*refusal));
      }
      break;
    }
    if (auto refusal = head_refusal(parser.get())) {
      Request head;
      head.version(parser.get().version());
      co_await write_reply(
          *conn, head, error_reply(refusal->status, rpc::code::kInvalidRequest, refusal->message));
      break;
    }
    conn->stream.expires_after(options_.body_timeout);
    co_await http::async_read(conn->stream, conn->buffer, parser, asio::redirect_error(kAwait, ec));
    if (ec) {
      if (auto refusal = read_refusal(ec)) {
        Request head;
        head.version(parser.get().version());
        co_await write_reply(*conn, head, std::move(*refusal));
      }
      break;
    }
    conn->stream.expires_never();
    set_incomplete(*conn, false);
    Request req = parser.release();
    bool keep = co_await handle(conn, req);
    if (!keep || !req.keep_alive()) break;
  }
  boost::system::error_code ec;
  if (!stopping_ && !conn->peer_gone && !conn->watched) co_await linger(*conn);
  conn->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  conn->stream.socket().close(ec);
  connections_.erase(conn.get());
}

HttpServerImpl::Reply HttpServerImpl::error_reply(http::status status, int code,
                                                  std::string_view message) {
  Reply r;
  r.status = status;
  r.body = json_error_body(code, message);
  return r;
}

std::shared_ptr<HttpSession> HttpServerImpl::find_session(const Request& req, Reply& refusal) {
  std::string sid(req["Mcp-Session-Id"]);
  if (sid.empty()) {
    refusal = error_reply(http::status::bad_request, -32000,
                          "Bad Request: the Mcp-Session-Id header is required");
    return nullptr;
  }
  auto it = sessions_.find(sid);
  if (it == sessions_.end()) {
    refusal = error_reply(http::status::not_found, -32001, "Session not found");
    return nullptr;
  }
  return it->second;
}

asio::awaitable<bool> HttpServerImpl::write_reply(Connection& conn, const Request& req,
                                                  Reply reply) {
  http::response<http::string_body> res{reply.status, req.version() ? req.version() : 11};
  res.set(http::field::server, "sluice");
  if (!reply.body.empty()) res.set(http::field::content_type, reply.content_type);
  res.set(http::field::cache_control, "no-store");
  for (auto& [name, value] : reply.headers) res.set(name, value);
  res.body() = std::move(reply.body);
  const bool keep =
      req.keep_alive() && static_cast<unsigned>(reply.status) < 400 && may_keep_alive(conn);
  res.keep_alive(keep);
  res.prepare_payload();
  ++counters_.by_status[static_cast<unsigned>(reply.status)];
  boost::system::error_code ec;
  // A client that stops reading cannot hold the connection: the write has a deadline.
  conn.stream.expires_after(options_.write_timeout);
  co_await http::async_write(conn.stream, res, asio::redirect_error(kAwait, ec));
  conn.stream.expires_never();
  co_return !ec && keep;
}

asio::awaitable<bool> HttpServerImpl::handle(std::shared_ptr<Connection> conn, Request& req) {
  if (stopping_) {
    co_return co_await write_reply(*conn, req,
                                   error_reply(http::status::service_unavailable, -32000,
                                               "Service Unavailable: the server is shutting down"));
  }
  std::string_view target = req.target();
  std::string_view path = target.substr(0, target.find('?'));
  // DNS rebinding: a page on another origin reaching a loopback service.
  if (!guard_.host_allowed(req[http::field::host])) {
    co_return co_await write_reply(
        *conn, req,
        error_reply(http::status::forbidden, rpc::code::kInvalidRequest,
                    "Forbidden: the Host header names a host this server does not "
                    "serve"));
  }
  // At most one Origin (checked with the head); one sent empty is refused like a foreign one.
  if (req.find(http::field::origin) != req.end() &&
      !guard_.origin_allowed(req[http::field::origin])) {
    co_return co_await write_reply(*conn, req,
                                   error_reply(http::status::forbidden, rpc::code::kInvalidRequest,
                                               "Forbidden: the Origin is not allowed"));
  }
  if (!guard_.rate_allowed(conn->address)) {
    Reply r = error_reply(http::status::too_many_requests, -32000,
                          "Too many requests from this address; retry later");
    r.headers.emplace_back("Retry-After", "1");
    co_return co_await write_reply(*conn, req, std::move(r));
  }
  if (path == "/health") {
    if (req.method() != http::verb::get) {
      Reply r = error_reply(http::status::method_not_allowed, -32000, "Method not allowed");
      r.headers.emplace_back("Allow", "GET");
      co_return co_await write_reply(*conn, req, std::move(r));
    }
    Reply r;
    r.body = hooks_.health(guard_.token_required() &&
                           guard_.authorized(req[http::field::authorization]));
    co_return co_await write_reply(*conn, req, std::move(r));
  }
  if (!guard_.authorized(req[http::field::authorization])) {
    bool sent = !req[http::field::authorization].empty();
    Reply r = error_reply(http::status::unauthorized, -32000,
                          sent ? "Unauthorized: the bearer token is not valid"
                               : "Unauthorized: a bearer token is required");
    r.headers.emplace_back(
        "WWW-Authenticate",
        sent ? R"(Bearer realm="sluice", error="invalid_token")" : R"(Bearer realm="sluice")");
    co_return co_await write_reply(*conn, req, std::move(r));
  }
  if (path == "/metrics") {
    Reply r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = (hooks_.metrics ? hooks_.metrics() : std::string()) + metrics_text();
    co_return co_await write_reply(*conn, req, std::move(r));
  }
  if (path != "/mcp") {
    co_return co_await write_reply(
        *conn, req,
        error_reply(http::status::not_found, -32000, "Not found: the MCP endpoint is /mcp"));
  }
  if (std::string_view v = req["MCP-Protocol-Version"];
      !v.empty() && !mcp::is_supported_version(v)) {
    co_return co_await write_reply(*conn, req,
                                   error_reply(http::status::bad_request, -32000,
                                               "Bad Request: unsupported MCP-Protocol-Version"));
  }
  Reply reply;
  switch (req.method()) {
    case http::verb::post:
      co_return co_await handle_post(conn, req, reply);
    case http::verb::get:
      co_return co_await handle_get(conn, req, reply);
    case http::verb::delete_: {
      if (!find_session(req, reply)) co_return co_await write_reply(*conn, req, std::move(reply));
      end_session(std::string(req["Mcp-Session-Id"]), false);
      Reply r;
      r.status = http::status::no_content;
      co_return co_await write_reply(*conn, req, std::move(r));
    }
    default: {
      Reply r = error_reply(http::status::method_not_allowed, -32000, "Method not allowed");
      r.headers.emplace_back("Allow", "GET, POST, DELETE");
      co_return co_await write_reply(*conn, req, std::move(r));
    }
  }
}

asio::awaitable<bool> HttpServerImpl::handle_post(std::shared_ptr<Connection> conn, Request& req,
                                                  Reply& reply) {
  std::string content_type = lower(req[http::field::content_type]);
  std::string_view media =
      cj::trim(std::string_view(content_type).substr(0, content_type.find(';')));
  if (media != "application/json") {
    reply = error_reply(http::status::unsupported_media_type, -32000,
                        "Unsupported Media Type: the body must be application/json");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::string accept = lower(req[http::field::accept]);
  const bool wants_sse = accepts(accept, "text/event-stream");
  if (!wants_sse && !accepts(accept, "application/json") && !accepts(accept, "*/*")) {
    reply = error_reply(http::status::not_acceptable, -32000,
                        "Not Acceptable: the client must accept application/json or "
                        "text/event-stream");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::string header_version(req["MCP-Protocol-Version"]);
  // Line breaks between tokens are whitespace: they become spaces, so that the message is
  // single-line and can be spliced into a stdio frame downstream. One inside a string is
  // left for the parser to refuse.
  std::string body = std::move(req.body());
  cj::single_line(body);
  auto parsed =
      rpc::parse(std::move(body), cj::ParseLimits{limits_.max_json_depth}, rpc::Strictness::client);
  if (auto* failure = std::get_if<rpc::ParseFailure>(&parsed)) {
    reply.status = http::status::bad_request;
    reply.body = rpc::make_error(failure->id, failure->code, failure->message);
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  rpc::Message message = std::move(std::get<rpc::Message>(parsed));
  std::string sid(req["Mcp-Session-Id"]);
  std::shared_ptr<HttpSession> session;
  const bool initialize = message.is_request() && message.method() == "initialize";
  if (initialize) {
    if (!sid.empty()) {
      reply = error_reply(http::status::bad_request, rpc::code::kInvalidRequest,
                          "Bad Request: initialize must not carry an Mcp-Session-Id");
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    if (sessions_.size() >= options_.max_sessions) sweep();
    if (sessions_.size() >= options_.max_sessions) {
      ++counters_.sessions_refused;
      reply = error_reply(http::status::service_unavailable, -32000,
                          "Service Unavailable: too many sessions; retry later");
      reply.headers.emplace_back("Retry-After", "5");
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    std::optional<std::string> fresh = new_session_id();
    if (!fresh) {
      core::log::error("http: no random bytes for a session id (getrandom failed)");
      reply = error_reply(http::status::service_unavailable, -32000,
                          "Service Unavailable: cannot create a session");
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    std::string id = std::move(*fresh);
    session = std::make_shared<HttpSession>(io_, next_session_number_++, limits_,
                                            counters_.replay_dropped);
    session->attach(hooks_.make_handler(session->session()));
    sessions_[id] = session;
    ++counters_.sessions_created;
    sid = id;
    std::string requested;
    if (auto v = cj::member_span(message.params(), "protocolVersion")) {
      std::string_view t = cj::trim(*v);
      if (t.size() >= 2 && t.front() == '"') requested = std::string(t.substr(1, t.size() - 2));
    }
    session->protocol_version = std::string(mcp::negotiate(requested));
  } else {
    session = find_session(req, reply);
    if (!session) co_return co_await write_reply(*conn, req, std::move(reply));
  }
  session->touch();
  if (!message.is_request()) {
    session->session()->on_message(std::move(message));
    reply.status = http::status::accepted;
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::string key = *rpc::id_key(message.id());
  std::shared_ptr<SseStream> stream = session->open_stream(key, wants_sse);
  if (!stream) {
    reply.status = http::status::bad_request;
    reply.body = rpc::make_error(message.id(), rpc::code::kInvalidRequest,
                                 "Invalid request: this id is already in use");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::vector<std::pair<std::string, std::string>> headers;
  if (initialize) headers.emplace_back("Mcp-Session-Id", sid);
  const std::string& version = header_version.empty() ? session->protocol_version : header_version;
  const bool prime = wants_sse && version >= "2025-11-25";
  session->session()->on_message(std::move(message));
  if (wants_sse) {
    co_return co_await run_sse(conn, req, session, stream, prime, std::move(headers));
  }
  // JSON: wait for the answer (or the session's end).
  stream->attach(conn.get(), &conn->wake);
  while (!stream->finished) {
    boost::system::error_code ec;
    conn->wake.expires_after(std::chrono::hours(1));
    co_await conn->wake.async_wait(asio::redirect_error(kAwait, ec));
  }
  stream->detach(conn.get());
  if (stream->unanswered) {
    // Cancelled by the client: no response is sent for it (C4), the POST is just accepted.
    reply.status = http::status::accepted;
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  if (stream->json_body.empty()) {
    reply = error_reply(http::status::not_found, -32001, "Session not found (it ended)");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  reply.body = std::move(stream->json_body);
  reply.headers = std::move(headers);
  co_return co_await write_reply(*conn, req, std::move(reply));
}

asio::awaitable<bool> HttpServerImpl::handle_get(std::shared_ptr<Connection> conn, Request& req,
                                                 Reply& reply) {
  if (!accepts(lower(req[http::field::accept]), "text/event-stream")) {
    reply = error_reply(http::status::not_acceptable, -32000,
                        "Not Acceptable: the client must accept text/event-stream");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::shared_ptr<HttpSession> session = find_session(req, reply);
  if (!session) co_return co_await write_reply(*conn, req, std::move(reply));
  session->touch();
  std::shared_ptr<SseStream> stream = session->standalone();
  // Last-Event-ID "<stream>-<seq>": resume that stream after that event.
  std::string_view last = req["Last-Event-ID"];
  if (!last.empty()) {
    std::size_t dash = last.find('-');
    std::uint64_t number = 0, seq = 0;
    bool ok = dash != std::string_view::npos;
    if (ok) {
      auto a = std::from_chars(last.data(), last.data() + dash, number);
      auto b = std::from_chars(last.data() + dash + 1, last.data() + last.size(), seq);
      ok = a.ec == std::errc() && a.ptr == last.data() + dash && b.ec == std::errc() &&
           b.ptr == last.data() + last.size();
    }
    if (!ok) {
      reply = error_reply(http::status::bad_request, -32000,
                          "Bad Request: Last-Event-ID is not an event id this server issued");
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    std::shared_ptr<SseStream> s = session->stream(number);
    // A stream that is gone, or ended with nothing after that event: nothing to resume.
    // 204 (not an empty stream that ends) so that a client does not reconnect again.
    if (!s || !s->sse || (s->finished && seq + 1 >= s->next_seq)) {
      reply.status = http::status::no_content;
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    stream = s;
    stream->written = std::min(seq, stream->next_seq - 1);
    ++counters_.resumed;
  } else if (stream->writer) {
    // One standalone stream per session (a resumption, with Last-Event-ID, takes over).
    reply = error_reply(http::status::conflict, -32000,
                        "Conflict: this session's standalone SSE stream is already open");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  co_return co_await run_sse(conn, req, session, stream, false, {});
}

asio::awaitable<void> HttpServerImpl::watch_peer(std::shared_ptr<Connection> conn) {
  std::array<char, 512> scratch;
  for (;;) {
    boost::system::error_code ec;
    co_await conn->stream.socket().async_read_some(asio::buffer(scratch),
                                                   asio::redirect_error(kAwait, ec));
    if (ec) break;
  }
  conn->peer_gone = true;
  conn->wake.cancel();
}

asio::awaitable<bool> HttpServerImpl::run_sse(
    std::shared_ptr<Connection> conn, const Request& req, std::shared_ptr<HttpSession> session,
    std::shared_ptr<SseStream> stream, bool prime,
    std::vector<std::pair<std::string, std::string>> headers) {
  const bool http11 = req.version() >= 11;
  // A POST's stream ends with its response and the connection may be kept; a GET's (the
  // standalone stream or a resumption) lives until the session ends, so the peer is
  // watched and the connection closed at the end.
  const bool long_lived = req.method() == http::verb::get;
  const bool keep = http11 && !long_lived && req.keep_alive() && !stopping_;
  // The head is written with the first events: a fast call's whole answer (head, priming
  // event, response, last chunk) leaves in one write. A slow call's head and priming event
  // go out after kFirstEventWait, so the client can resume from then on.
  constexpr auto kFirstEventWait = std::chrono::milliseconds(10);
  std::string head = http11 ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.0 200 OK\r\n";
  head +=
      "Server: sluice\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "X-Accel-Buffering: no\r\n";
  for (auto& [name, value] : headers) head += name + ": " + value + "\r\n";
  if (http11) head += "Transfer-Encoding: chunked\r\n";
  if (!keep) head += "Connection: close\r\n";
  head += "\r\n";
  ++counters_.by_status[200];
  auto chunk = [http11](std::string_view data) {
    return http11 ? fmt::format("{:x}\r\n{}\r\n", data.size(), data) : std::string(data);
  };
  // Another connection resuming this stream takes it over; the old one ends.
  stream->attach(conn.get(), &conn->wake);
  if (long_lived) {
    conn->watched = true;
    core::spawn(io_, watch_peer(conn), "an SSE stream's peer watch", [conn] {
      conn->peer_gone = true;
      conn->wake.cancel();
    });
  }
  std::string body;
  if (prime) body = "id: " + session->event_id(*stream, 0) + "\nretry: 1000\ndata: \n\n";
  bool head_sent = false;
  bool head_due = long_lived;  // a GET's head goes at once
  const auto first_deadline = Clock::now() + kFirstEventWait;
  bool clean = true;
  bool done = false;
  while (!done) {
    if (stream->writer != conn.get() || conn->peer_gone || stopping_) {
      clean = false;
      break;
    }
    for (const auto& [seq, text] : stream->events) {
      if (seq <= stream->written) continue;
      body += text;
      stream->written = seq;
    }
    done = stream->finished;
    if (!body.empty() || done || (!head_sent && head_due)) {
      std::string out;
      if (!head_sent) out = std::move(head);
      if (!body.empty()) out += chunk(body);
      if (done && http11) out += "0\r\n\r\n";
      body.clear();
      head_sent = true;
      boost::system::error_code ec;
      conn->stream.expires_after(options_.write_timeout);
      co_await asio::async_write(conn->stream, asio::buffer(out), asio::redirect_error(kAwait, ec));
      conn->stream.expires_never();
      if (ec) {
        clean = false;
        break;
      }
      session->touch();
      continue;
    }
    conn->wake.expires_at(head_sent ? Clock::now() + options_.sse_keepalive : first_deadline);
    boost::system::error_code wait_ec;
    co_await conn->wake.async_wait(asio::redirect_error(kAwait, wait_ec));
    if (wait_ec || stream->writer != conn.get() || conn->peer_gone) continue;
    if (!head_sent) {
      head_due = true;
    } else {
      std::string ping = chunk(": keepalive\n\n");
      boost::system::error_code ec;
      conn->stream.expires_after(options_.write_timeout);
      co_await asio::async_write(conn->stream, asio::buffer(ping),
                                 asio::redirect_error(kAwait, ec));
      conn->stream.expires_never();
      if (ec) {
        clean = false;
        break;
      }
    }
  }
  stream->detach(conn.get());
  co_return clean&& keep;
}

asio::awaitable<void> HttpServerImpl::sweep_loop() {
  auto self = shared_from_this();
  while (!stopping_) {
    boost::system::error_code ec;
    sweep_.expires_after(std::chrono::seconds(1));
    co_await sweep_.async_wait(asio::redirect_error(kAwait, ec));
    if (stopping_) break;
    sweep();
  }
}

void HttpServerImpl::sweep() {
  auto now = Clock::now();
  std::vector<std::string> expired;
  for (auto& [id, s] : sessions_) {
    if (s->idle() && now - s->last_activity() > options_.session_idle) expired.push_back(id);
  }
  for (const auto& id : expired) end_session(id, true);
  if (!expired.empty()) core::log::info("http: {} idle session(s) expired", expired.size());
  release_retired();
  guard_.forget_idle_addresses();
}

std::string HttpServerImpl::metrics_text() const {
  std::string out;
  auto line = [&](std::string_view name, std::string_view type, std::string_view help,
                  std::uint64_t value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
  };
  out +=
      "# HELP sluice_http_requests_total HTTP responses by status code.\n"
      "# TYPE sluice_http_requests_total counter\n";
  for (const auto& [code, n] : counters_.by_status) {
    out += fmt::format("sluice_http_requests_total{{code=\"{}\"}} {}\n", code, n);
  }
  line("sluice_http_sessions", "gauge", "Open MCP sessions.", sessions_.size());
  line("sluice_http_sessions_retired", "gauge", "Ended sessions whose calls are still finishing.",
       retired_.size());
  line("sluice_http_sessions_created_total", "counter", "Sessions created.",
       counters_.sessions_created);
  line("sluice_http_sessions_deleted_total", "counter", "Sessions ended by DELETE or shutdown.",
       counters_.sessions_deleted);
  line("sluice_http_sessions_expired_total", "counter", "Sessions ended after being idle.",
       counters_.sessions_expired);
  line("sluice_http_sessions_refused_total", "counter", "initialize refused at the session cap.",
       counters_.sessions_refused);
  line("sluice_http_connections", "gauge", "Open HTTP connections.", connections_.size());
  line("sluice_http_connections_total", "counter", "HTTP connections accepted.",
       counters_.connections);
  out +=
      "# HELP sluice_http_connections_refused_total Connections answered 503 and closed at a "
      "cap.\n# TYPE sluice_http_connections_refused_total counter\n";
  out += fmt::format("sluice_http_connections_refused_total{{reason=\"connections\"}} {}\n",
                     counters_.connections_refused);
  out +=
      fmt::format("sluice_http_connections_refused_total{{reason=\"incomplete_per_address\"}} {}\n",
                  counters_.connections_refused_address);
  line("sluice_http_keepalive_closed_total", "counter",
       "Kept-alive connections closed because their address had too many without a request.",
       counters_.keepalive_closed_address);
  line("sluice_http_sse_replay_dropped_total", "counter",
       "SSE events dropped from a full replay buffer before they were delivered.",
       counters_.replay_dropped);
  line("sluice_http_sse_resumed_total", "counter", "Streams resumed with Last-Event-ID.",
       counters_.resumed);
  return out;
}

}  // namespace

std::shared_ptr<HttpServer> HttpServer::create(asio::io_context& io, HttpOptions options,
                                               HttpHooks hooks, const core::Limits& limits) {
  return std::make_shared<HttpServerImpl>(io, std::move(options), std::move(hooks), limits);
}

}  // namespace sluice::transport
