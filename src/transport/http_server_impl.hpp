#pragma once
// The implementation of HttpServer (see http_server.hpp), shared by the translation units
// of the front end: http_server.cpp (listener and connections), http_routes.cpp (the
// request phases) and http_sse.cpp (the SSE stream writer). Private to this folder (and to
// tests/fuzz/http_fuzz.cpp, which drives a connection through it without a network).
//
// Threading: the owning io_context thread only. Ownership: each connection is a
// shared_ptr<Connection> held by the coroutine serving it; the server keeps raw pointers to
// the open ones (to close them at stop) and forgets each when its coroutine ends. Every
// coroutine holds a shared_ptr to the server.
#include "core/clock.hpp"
#include "core/limits.hpp"
#include "mcp/era.hpp"
#include "rpc/message.hpp"
#include "transport/http_framing.hpp"
#include "transport/http_guard.hpp"
#include "transport/http_metrics.hpp"
#include "transport/http_server.hpp"
#include "transport/http_session.hpp"
#include "transport/http_session_table.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace sluice::transport {

// How the HTTP server's coroutines wait (http_server.cpp, http_routes.cpp, http_sse.cpp).
inline constexpr auto kAwait = boost::asio::use_awaitable;

// One accepted TCP connection. The head of each request must arrive whole by `head_due`,
// which the server's sweep checks (no timer armed and cancelled per request); the other
// socket deadlines (body, write, linger) are Beast's own timers on the real clock, armed only
// when a body or an answer does not move at once; `wake` is a core::Timer.
struct Connection {
  explicit Connection(boost::asio::ip::tcp::socket socket)
      : stream(std::move(socket)), wake(stream.get_executor()) {}
  boost::beast::tcp_stream stream;
  boost::beast::flat_buffer buffer;
  core::Timer wake;  // cancelled to wake the SSE writer (or a JSON-mode POST waiting)
  std::string address;
  bool peer_gone = false;
  bool watched = false;  // a watch_peer read is pending (a GET stream): no other read
  // The request being answered is cancelled when the peer closes (a 2026-07-28 request): its
  // answer watches the peer, and the connection closes after it.
  bool cancel_on_close = false;
  bool incomplete = false;  // counted in IncompleteConnections (no complete request yet)
  // While a request's head is being read: when the sweep closes the connection.
  core::Clock::time_point head_due = core::Clock::time_point::max();
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// The SSE writers waiting for their first event, in the order they began (all wait the same
// Limits::http_sse_first_event_wait, so that is also the order of their deadlines). One timer
// wakes each whose wait is over, so a fast answer, the usual one, arms no timer of its own.
// A waiter (in its writer's frame) is listed from add() until woken or destroyed.
class FirstEventWaits {
 public:
  struct Waiter {
    Waiter(FirstEventWaits& list, Connection& conn, core::Clock::time_point due)
        : list(list), conn(conn), due(due) {}
    ~Waiter() { list.unlist(*this); }
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;
    FirstEventWaits& list;
    Connection& conn;
    const core::Clock::time_point due;
    Waiter* prev = nullptr;
    Waiter* next = nullptr;
    bool listed = false;
  };
  void add(Waiter& w);  // at the back: its deadline is the latest
  bool empty() const { return head_ == nullptr; }
  const Waiter& front() const { return *head_; }
  // Unlists the waiters whose deadline is not after `now` and wakes their writers.
  void wake_due(core::Clock::time_point now);

 private:
  void unlist(Waiter& w);
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
};

// One answer that is not an SSE stream.
struct Reply {
  boost::beast::http::status status = boost::beast::http::status::ok;
  std::string content_type = "application/json";
  std::string body;
  Headers headers;
};

class HttpServerImpl : public HttpServer, public std::enable_shared_from_this<HttpServerImpl> {
 public:
  HttpServerImpl(boost::asio::io_context& io, HttpOptions options, HttpHooks hooks,
                 const core::Limits& limits);

  core::Result<std::uint16_t> listen() override;
  void start() override;
  void stop() override;
  void release_retired() override { sessions_.release_retired(); }
  std::size_t session_count() const override { return sessions_.size(); }
  // Serves one connection accepted elsewhere (by the accept loop; the request path's fuzz
  // target hands it one end of a socket pair): admitted against the connection caps like
  // any other.
  void serve(boost::asio::ip::tcp::socket socket);

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  template <typename T>
  using Task = boost::asio::awaitable<T>;

  // http_server.cpp: the listener and the connection.
  Task<void> accept_loop();
  // Counts a new connection in, or spawns its refusal at a cap (false).
  bool admit_connection(const std::shared_ptr<Connection>& conn);
  Task<void> serve_connection(std::shared_ptr<Connection> conn);
  // A connection past a cap: 503 with Retry-After, then closed.
  Task<void> refuse_connection(std::shared_ptr<Connection> conn, std::string_view message);
  // Stops sending, then reads what the client is still sending for a short while
  // (Limits::http_linger), so that closing does not reset the connection before the client
  // has read the answer.
  Task<void> linger(Connection& conn);
  // Counts `conn` among its address's connections without a complete request, or not.
  void set_incomplete(Connection& conn, bool incomplete);
  // A connection may wait for another request: not stopping, its address under its cap.
  bool may_keep_alive(const Connection& conn) const;
  Task<bool> write_reply(Connection& conn, const Request& req, Reply reply);
  // Reads the rest of a body, the buffer's room growing as its bytes arrive
  // (http_read_buffer.hpp), within the deadline already set on the stream.
  Task<boost::system::error_code> read_body(
      Connection& conn,
      boost::beast::http::request_parser<boost::beast::http::string_body>& parser);
  // Parses what of the body the head's read already buffered (usually all of it), so that
  // only a body still on its way is read, with its own deadline and timer.
  static void take_buffered_body(
      Connection& conn, boost::beast::http::request_parser<boost::beast::http::string_body>& parser,
      boost::system::error_code& ec);
  // Writes `bytes` (which stay alive until it returns) at once as far as the socket takes
  // them, the rest within the write deadline.
  Task<boost::system::error_code> write_now(Connection& conn, std::string_view bytes);
  // A refusal of a request that could not be read whole, on HTTP/`version`.
  Task<void> write_refusal(Connection& conn, unsigned version, std::optional<Refusal> refusal);
  Task<void> sweep_loop();
  // Ends the sessions idle too long and the connections past their head deadline.
  void sweep();
  std::chrono::milliseconds sweep_period() const;

  // http_routes.cpp: the request phases.
  // Handles one request; writes the answer (or an SSE stream); false: close the connection.
  Task<bool> handle(std::shared_ptr<Connection> conn, Request& req);
  // Admission by the head: shutting down (503), Host and Origin (403), the rate (429).
  std::optional<Reply> admission_refusal(const Connection& conn, const RequestHeads& heads);
  // The answer of everything but a method on /mcp: /health, the bearer token (401),
  // /metrics, an unknown path (404). (The MCP-Protocol-Version header is checked with the
  // message: handle_post.)
  std::optional<Reply> plain_answer(const Request& req, const RequestHeads& heads,
                                    std::string_view path);
  Task<bool> handle_post(std::shared_ptr<Connection> conn, Request& req, const RequestHeads& heads);
  // http_stateless.cpp: a request of the 2026-07-28 era, served without a session.
  Task<bool> handle_stateless(std::shared_ptr<Connection> conn, Request& req, rpc::Message message,
                              const mcp::RequestEra& era, bool wants_sse);
  // Its headers against its body (the version header is classify's): Mcp-Method, Mcp-Name
  // (Base64 form included) for tools/call, prompts/get, resources/read and the tasks requests,
  // and a tools/call's Mcp-Param-<name> headers (-32020).
  std::optional<mcp::EraRefusal> stateless_header_problem(const Request& req,
                                                          const rpc::Message& message) const;
  // A tools/call's Mcp-Param-<name> headers against its arguments, for the parameters the
  // tool's x-mcp-header names (HttpHooks::param_headers): required when the argument is sent
  // (not null), and equal to it once decoded.
  std::optional<mcp::EraRefusal> param_header_problem(const Request& req,
                                                      const rpc::Message& message) const;
  // The POSTed message, or nullopt with the refusal of its media types or its body.
  std::optional<rpc::Message> read_post(Request& req, const RequestHeads& heads, bool& wants_sse,
                                        Reply& refusal) const;
  // The session a POST belongs to: a new one for initialize (then `headers` gets its id).
  std::shared_ptr<HttpSession> post_session(const RequestHeads& heads, const rpc::Message& message,
                                            Headers& headers, Reply& refusal);
  // JSON mode: waits for the answer of the request on `stream` (or the session's end).
  Task<bool> answer_json(std::shared_ptr<Connection> conn, const Request& req,
                         std::shared_ptr<SseStream> stream, Headers headers);
  Task<bool> handle_get(std::shared_ptr<Connection> conn, Request& req, const RequestHeads& heads);
  // The session a request names: its Mcp-Session-Id, else 400 (none) or 404 (unknown or
  // ended) in `refusal`.
  std::shared_ptr<HttpSession> find_session(const RequestHeads& heads, Reply& refusal) const;
  static Reply error_reply(boost::beast::http::status status, int code, std::string_view message);

  // http_sse.cpp: the SSE stream writer.
  // Streams `stream` to the connection until it finishes, the session ends or another
  // connection takes the stream over. The SSE headers are written first, with the first
  // events (or after Limits::http_sse_first_event_wait; a GET's at once).
  Task<bool> run_sse(std::shared_ptr<Connection> conn, const Request& req,
                     std::shared_ptr<HttpSession> session, std::shared_ptr<SseStream> stream,
                     bool prime, Headers headers);
  // Sets the connection's wake timer for what its stream waits for next: the keepalive once
  // the head is sent, else the first event (on the shared timer, through `shared_wait`, for
  // the short wait; a 2026-07-28 request's long one on its own).
  void arm_stream_wait(Connection& conn, bool head_sent, core::Clock::time_point first_deadline,
                       std::optional<FirstEventWaits::Waiter>& shared_wait);
  // Lists `waiter` and, unless it already runs, starts the timer that wakes the first-event
  // waiters when their wait is over.
  void await_first_event(FirstEventWaits::Waiter& waiter);
  Task<void> first_event_timer_loop();
  // A long-lived stream's connection: notices the peer closing it.
  Task<void> watch_peer(std::shared_ptr<Connection> conn);
  // Starts watch_peer on `conn` (marked watched: no other read until it closes); the peer
  // closing sets peer_gone and wakes the connection's writer.
  void start_watching(const std::shared_ptr<Connection>& conn);
  // The 503 for a session the table would not open (at the cap: with Retry-After).
  static Reply session_refusal(const SessionTable::Opened& opened);

  boost::asio::io_context& io_;
  HttpOptions options_;
  HttpHooks hooks_;
  const core::Limits& limits_;
  boost::asio::ip::tcp::acceptor acceptor_;
  core::Timer sweep_;
  FirstEventWaits first_events_;
  core::Timer first_event_timer_;
  bool first_event_timer_running_ = false;
  bool stopping_ = false;
  RequestGuard guard_;
  SessionTable sessions_;
  std::unordered_set<Connection*> connections_;
  std::unordered_set<Connection*> refusing_;  // being answered 503 past a cap
  IncompleteConnections incomplete_;
  ConnectionCounters counters_;
};

}  // namespace sluice::transport
