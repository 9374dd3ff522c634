// The listener and the connection: accept (with the connection caps), read one request at a
// time (with the head, body and per-address caps), write a reply, linger and close.
#include "transport/http_server_impl.hpp"

#include "core/log.hpp"
#include "core/spawn.hpp"
#include "rpc/message.hpp"
#include "transport/http_read_buffer.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>

namespace sluice::transport {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

HttpServerImpl::HttpServerImpl(asio::io_context& io, HttpOptions options, HttpHooks hooks,
                               const core::Limits& limits)
    : io_(io),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      limits_(limits),
      acceptor_(io),
      sweep_(io),
      first_event_timer_(io),
      guard_(options_.allowed_hosts, options_.allowed_origins, options_.auth_token,
             limits.http_rate_limit, limits.http_rate_limit_loopback),
      sessions_(io, limits, hooks_.make_handler),
      incomplete_(limits.http_max_incomplete_per_address) {}

std::shared_ptr<HttpServer> HttpServer::create(asio::io_context& io, HttpOptions options,
                                               HttpHooks hooks, const core::Limits& limits) {
  return std::make_shared<HttpServerImpl>(io, std::move(options), std::move(hooks), limits);
}

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
  first_event_timer_.cancel();
  sessions_.end_all();
  for (auto* set : {&connections_, &refusing_}) {
    for (Connection* c : *set) {
      c->peer_gone = true;
      c->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      c->stream.socket().close(ec);
      c->wake.cancel();
    }
  }
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
      core::Timer t(io_, limits_.http_accept_backoff);
      co_await t.async_wait(asio::redirect_error(kAwait, ec));
      continue;
    }
    serve(std::move(socket));
  }
}

void HttpServerImpl::serve(tcp::socket socket) {
  boost::system::error_code ec;
  // Small writes (an SSE event, a 202) must leave at once: no Nagle delay.
  socket.set_option(tcp::no_delay(true), ec);
  // Answers are first written without waiting (write_now): a socket with room takes them at
  // once, and only the rest waits, with the write deadline.
  socket.non_blocking(true, ec);
  auto conn = std::make_shared<Connection>(std::move(socket));
  auto remote = conn->stream.socket().remote_endpoint(ec);
  conn->address = "unknown";
  if (!ec) conn->address = remote.address().to_string();
  if (!admit_connection(conn)) return;
  // A connection whose coroutine dies is forgotten, so stop() never touches it.
  core::spawn(io_, serve_connection(conn), "an HTTP connection",
              [this, self = shared_from_this(), conn] { connections_.erase(conn.get()); });
}

bool HttpServerImpl::admit_connection(const std::shared_ptr<Connection>& conn) {
  // Counted here, before the next accept, so that a burst of connections meets the caps.
  std::string_view refusal;
  if (connections_.size() >= limits_.http_max_connections) {
    ++counters_.connections_refused;
    refusal = "Service Unavailable: too many connections; retry later";
  } else if (!incomplete_.has_room(conn->address)) {
    ++counters_.connections_refused_address;
    refusal =
        "Service Unavailable: too many connections from this address without a complete "
        "request; retry later";
  } else {
    ++counters_.connections;
    connections_.insert(conn.get());
    set_incomplete(*conn, true);
    return true;
  }
  core::spawn(io_, refuse_connection(conn, refusal), "an HTTP refusal",
              [this, self = shared_from_this(), conn] { refusing_.erase(conn.get()); });
  return false;
}

asio::awaitable<void> HttpServerImpl::refuse_connection(std::shared_ptr<Connection> conn,
                                                        std::string_view message) {
  auto self = shared_from_this();
  // Each refusal holds its socket for at most the write and the linger; past that many at
  // once, a connection is closed without an answer rather than held.
  if (refusing_.size() < limits_.http_max_refusing && !stopping_) {
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
  conn.stream.expires_after(limits_.http_linger);
  std::array<char, 16384> sink;
  for (std::size_t drained = 0; drained < limits_.http_linger_bytes;) {
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
    incomplete_.add(conn.address);
  } else {
    incomplete_.remove(conn.address);
  }
}

bool HttpServerImpl::may_keep_alive(const Connection& conn) const {
  // A watched connection (a read pending to notice the peer closing) is closed after its
  // answer, which must then say so (Connection: close), or a client reusing it fails.
  return !stopping_ && !conn.peer_gone && !conn.watched && incomplete_.has_room(conn.address);
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
    parser.header_limit(static_cast<std::uint32_t>(limits_.http_max_header_bytes));
    parser.body_limit(limits_.max_message_bytes);
    boost::system::error_code ec;
    conn->head_due = core::Clock::now() + limits_.http_header_timeout;
    co_await http::async_read_header(conn->stream, conn->buffer, parser,
                                     asio::redirect_error(kAwait, ec));
    conn->head_due = core::Clock::time_point::max();
    if (ec) {
      co_await write_refusal(*conn, 11, read_refusal(ec, limits_.max_message_bytes));
      break;
    }
    if (auto refusal = head_refusal(parser.get())) {
      co_await write_refusal(*conn, parser.get().version(), std::move(refusal));
      break;
    }
    take_buffered_body(*conn, parser, ec);
    if (!ec && !parser.is_done()) {
      conn->stream.expires_after(limits_.http_body_timeout);
      ec = co_await read_body(*conn, parser);
    }
    if (ec) {
      co_await write_refusal(*conn, parser.get().version(),
                             read_refusal(ec, limits_.max_message_bytes));
      break;
    }
    conn->stream.expires_never();
    release_body_room(conn->buffer);
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

asio::awaitable<void> HttpServerImpl::write_refusal(Connection& conn, unsigned version,
                                                    std::optional<Refusal> refusal) {
  if (!refusal) co_return;
  Request head;
  head.version(version);
  co_await write_reply(conn, head,
                       error_reply(refusal->status, rpc::code::kInvalidRequest, refusal->message));
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
  http::response_serializer<http::string_body> serializer(res);
  // Most answers fit the socket's send buffer and leave at once, without a timed wait and a
  // resumption; what does not waits for room, and a client that stops reading cannot hold the
  // connection: that wait has a deadline.
  http::write(conn.stream.socket(), serializer, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    ec = {};
    conn.stream.expires_after(limits_.http_write_timeout);
    co_await http::async_write(conn.stream, serializer, asio::redirect_error(kAwait, ec));
    conn.stream.expires_never();
  }
  co_return !ec && keep;
}

asio::awaitable<boost::system::error_code> HttpServerImpl::read_body(
    Connection& conn, http::request_parser<http::string_body>& parser) {
  boost::system::error_code ec;
  while (!ec && !parser.is_done()) {
    make_room_for_body(conn.buffer, parser.get().body().size(), parser.content_length_remaining());
    co_await http::async_read_some(conn.stream, conn.buffer, parser,
                                   asio::redirect_error(kAwait, ec));
  }
  co_return ec;
}

void HttpServerImpl::take_buffered_body(Connection& conn,
                                        http::request_parser<http::string_body>& parser,
                                        boost::system::error_code& ec) {
  parser.eager(true);  // through every chunk of a chunked body, as Beast's own read does
  while (!parser.is_done() && conn.buffer.size() > 0) {
    const std::size_t used = parser.put(conn.buffer.data(), ec);
    conn.buffer.consume(used);
    if (ec == http::error::need_more) {
      ec = {};
      return;
    }
    if (ec || used == 0) return;
  }
}

asio::awaitable<boost::system::error_code> HttpServerImpl::write_now(Connection& conn,
                                                                     std::string_view bytes) {
  boost::system::error_code ec;
  const std::size_t written =
      asio::write(conn.stream.socket(), asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    ec = {};
    const std::string_view rest = bytes.substr(written);
    conn.stream.expires_after(limits_.http_write_timeout);
    co_await asio::async_write(conn.stream, asio::buffer(rest.data(), rest.size()),
                               asio::redirect_error(kAwait, ec));
    conn.stream.expires_never();
  }
  co_return ec;
}

asio::awaitable<void> HttpServerImpl::sweep_loop() {
  auto self = shared_from_this();
  while (!stopping_) {
    boost::system::error_code ec;
    sweep_.expires_after(sweep_period());
    co_await sweep_.async_wait(asio::redirect_error(kAwait, ec));
    if (stopping_) break;
    sweep();
  }
}

std::chrono::milliseconds HttpServerImpl::sweep_period() const {
  // Often enough that a head deadline is kept to within twice its length (never more often
  // than every 50 ms, whatever it is set to).
  constexpr std::chrono::milliseconds kShortest{50};
  return std::max(kShortest,
                  std::min(limits_.http_session_sweep_interval, limits_.http_header_timeout));
}

void HttpServerImpl::sweep() {
  const auto now = core::Clock::now();
  sessions_.sweep(now);
  guard_.forget_idle_addresses();
  for (Connection* c : connections_) {
    if (c->head_due > now) continue;
    // As Beast's own timeout would: the head's read ends, and the connection with it, with
    // no answer (a client this slow gets none).
    boost::system::error_code ec;
    c->peer_gone = true;
    c->stream.socket().close(ec);
  }
}

}  // namespace sluice::transport
