// The SSE stream writer: one connection writing one stream (a POST's call stream, the
// standalone stream or a resumption) until it finishes, the session ends, the peer goes or
// another connection takes the stream over.
#include "transport/http_server_impl.hpp"

#include "core/spawn.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <charconv>
#include <chrono>
#include <optional>
#include <string_view>

namespace sluice::transport {

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

// The response head of an SSE stream (chunked on HTTP/1.1).
std::string sse_head(bool http11, bool keep, const Headers& headers) {
  std::string head;
  head.reserve(256);
  head += http11 ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.0 200 OK\r\n";
  head +=
      "Server: sluice\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "X-Accel-Buffering: no\r\n";
  for (const auto& [name, value] : headers) head += name + ": " + value + "\r\n";
  if (http11) head += "Transfer-Encoding: chunked\r\n";
  if (!keep) head += "Connection: close\r\n";
  head += "\r\n";
  return head;
}

// On HTTP/1.1, the line that opens a chunk of `bytes` bytes.
void open_chunk(std::string& out, bool http11, std::size_t bytes) {
  if (!http11) return;
  std::array<char, 16> size;
  const auto end = std::to_chars(size.data(), size.data() + size.size(), bytes, 16).ptr;
  out.append(size.data(), end);
  out += "\r\n";
}

void close_chunk(std::string& out, bool http11) {
  if (http11) out += "\r\n";
}

// The size of the events of `stream` not yet handed to a connection.
std::size_t new_event_bytes(const SseStream& stream) {
  std::size_t bytes = 0;
  for (const auto& [seq, text] : stream.events) {
    if (seq > stream.written) bytes += text.size();
  }
  return bytes;
}

// Hands the events of `stream` not yet handed to a connection to `out` (appended; null: the
// events are dropped). They go straight into the write: a large answer is not copied twice.
void take_new_events(SseStream& stream, std::string* out) {
  for (const auto& [seq, text] : stream.events) {
    if (seq <= stream.written) continue;
    if (out) *out += text;
    stream.written = seq;
  }
}

// How long a stream's head waits for its first event before it goes alone. A 2026-07-28
// request's stream (no priming event, no resumption) keeps it until a keepalive is due: an
// answer that comes as an error with a status of its own (-32021) can then still be a plain
// JSON answer with that status.
std::chrono::milliseconds first_event_wait(const Connection& conn, const core::Limits& limits) {
  return conn.cancel_on_close ? limits.http_sse_keepalive : limits.http_sse_first_event_wait;
}

// `priming` and the events of `stream` not yet handed to a connection (`fresh` bytes) appended
// to `out`, as one chunk on HTTP/1.1.
void append_events(std::string& out, bool http11, std::string_view priming, SseStream& stream,
                   std::size_t fresh) {
  if (priming.empty() && fresh == 0) return;
  open_chunk(out, http11, priming.size() + fresh);
  out += priming;
  take_new_events(stream, &out);
  close_chunk(out, http11);
}

// A stream's answer as a plain JSON one, with the HTTP status its error has in its revision.
Reply status_reply(SseStream& stream) {
  Reply reply;
  reply.status = static_cast<http::status>(stream.error_status);
  reply.body = std::move(stream.json_body);
  return reply;
}

// `out` becomes one SSE comment, in a chunk on HTTP/1.1: the keepalive of an idle stream.
void keepalive_chunk(std::string& out, bool http11) {
  constexpr std::string_view kKeepalive = ": keepalive\n\n";
  out.clear();
  open_chunk(out, http11, kKeepalive.size());
  out += kKeepalive;
  close_chunk(out, http11);
}

// How long a shared first-event waiter's own timer is set for: it is woken before, by its
// first event or by the first-event timer.
constexpr auto kUntilWoken = std::chrono::hours(1);

}  // namespace

void FirstEventWaits::add(Waiter& w) {
  w.prev = tail_;
  w.next = nullptr;
  if (tail_ != nullptr) {
    tail_->next = &w;
  } else {
    head_ = &w;
  }
  tail_ = &w;
  w.listed = true;
}

void FirstEventWaits::unlist(Waiter& w) {
  if (!w.listed) return;
  (w.prev != nullptr ? w.prev->next : head_) = w.next;
  (w.next != nullptr ? w.next->prev : tail_) = w.prev;
  w.prev = w.next = nullptr;
  w.listed = false;
}

void FirstEventWaits::wake_due(core::Clock::time_point now) {
  while (head_ != nullptr && head_->due <= now) {
    Waiter& w = *head_;
    unlist(w);
    w.conn.wake.cancel();
  }
}

void HttpServerImpl::arm_stream_wait(Connection& conn, bool head_sent,
                                     core::Clock::time_point first_deadline,
                                     std::optional<FirstEventWaits::Waiter>& shared_wait) {
  if (head_sent || conn.cancel_on_close) {
    conn.wake.expires_at(head_sent ? core::Clock::now() + limits_.http_sse_keepalive
                                   : first_deadline);
    return;
  }
  // The short first-event wait, on the timer the waiting streams share.
  await_first_event(shared_wait.emplace(first_events_, conn, first_deadline));
  conn.wake.expires_after(kUntilWoken);
}

void HttpServerImpl::await_first_event(FirstEventWaits::Waiter& waiter) {
  first_events_.add(waiter);
  if (first_event_timer_running_ || stopping_) return;
  first_event_timer_running_ = true;
  core::spawn(io_, first_event_timer_loop(), "the HTTP first-event timer",
              [this, self = shared_from_this()] { first_event_timer_running_ = false; });
}

asio::awaitable<void> HttpServerImpl::first_event_timer_loop() {
  auto self = shared_from_this();
  // Set for the oldest waiter's deadline; one answered before it makes a wake with nothing to
  // do, then the timer is set for the next.
  while (!stopping_ && !first_events_.empty()) {
    boost::system::error_code ec;
    first_event_timer_.expires_at(first_events_.front().due);
    co_await first_event_timer_.async_wait(asio::redirect_error(kAwait, ec));
    first_events_.wake_due(core::Clock::now());
  }
  first_event_timer_running_ = false;
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

void HttpServerImpl::start_watching(const std::shared_ptr<Connection>& conn) {
  conn->watched = true;
  core::spawn(io_, watch_peer(conn), "a connection's peer watch", [conn] {
    conn->peer_gone = true;
    conn->wake.cancel();
  });
}

asio::awaitable<bool> HttpServerImpl::run_sse(std::shared_ptr<Connection> conn, const Request& req,
                                              std::shared_ptr<HttpSession> session,
                                              std::shared_ptr<SseStream> stream, bool prime,
                                              Headers headers) {
  const bool http11 = req.version() >= 11;
  // A POST's stream ends with its response and the connection may be kept; a GET's (the
  // standalone stream or a resumption) lives until the session ends, so the peer is
  // watched and the connection closed at the end.
  const bool long_lived = req.method() == http::verb::get;
  const bool watch = long_lived || conn->cancel_on_close;
  const bool keep = http11 && !watch && req.keep_alive() && !stopping_;
  // The head is written with the first events: a fast call's whole answer (head, priming
  // event, response, last chunk) leaves in one write. A slow call's head and priming event
  // go out after the first-event wait, so the client can resume from then on.
  std::string head = sse_head(http11, keep, headers);
  // Another connection resuming this stream takes it over; the old one ends.
  stream->attach(conn.get(), &conn->wake);
  if (watch) start_watching(conn);
  // The priming event goes with the head: with the first events, or alone once the first-event
  // wait has passed.
  std::string priming;
  if (prime) priming = "id: " + session->event_id(*stream, 0) + "\nretry: 1000\ndata: \n\n";
  bool head_sent = false;
  bool head_due = long_lived;  // a GET's head goes at once
  const auto first_deadline = core::Clock::now() + first_event_wait(*conn, limits_);
  bool clean = true;
  bool done = false;
  std::string out;
  while (!done) {
    if (stream->writer != conn.get() || conn->peer_gone || stopping_) {
      clean = false;
      break;
    }
    const std::size_t fresh = new_event_bytes(*stream);
    done = stream->finished;
    if (done && !head_sent && stream->error_status) {
      // Nothing streamed yet and an answer with a status of its own: a plain JSON answer.
      take_new_events(*stream, nullptr);
      stream->detach(conn.get());
      co_return co_await write_reply(*conn, req, status_reply(*stream)) && keep;
    }
    const bool events_due = fresh > 0 || done || (!head_sent && head_due);
    if (events_due) {
      if (!head_sent) ++counters_.by_status[200];
      out = head_sent ? std::string() : std::move(head);
      out.reserve(out.size() + priming.size() + fresh + 32);
      append_events(out, http11, priming, *stream, fresh);
      priming.clear();
      if (done && http11) out += "0\r\n\r\n";
      head_sent = true;
    } else {
      std::optional<FirstEventWaits::Waiter> shared_wait;
      arm_stream_wait(*conn, head_sent, first_deadline, shared_wait);
      boost::system::error_code wait_ec;
      co_await conn->wake.async_wait(asio::redirect_error(kAwait, wait_ec));
      // The shared timer wakes a waiter like an event does: the clock tells them apart.
      const bool waited_out = shared_wait ? core::Clock::now() >= first_deadline : !wait_ec;
      if (!waited_out || stream->writer != conn.get() || conn->peer_gone) continue;
      if (!head_sent) {
        head_due = true;
        continue;
      }
      keepalive_chunk(out, http11);
    }
    const boost::system::error_code ec = co_await write_now(*conn, out);
    if (ec) {
      clean = false;
      break;
    }
    if (events_due) session->touch();  // a keepalive is no activity of the session
  }
  stream->detach(conn.get());
  co_return clean&& keep;
}

}  // namespace sluice::transport
