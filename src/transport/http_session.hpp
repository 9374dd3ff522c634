#pragma once
// One Streamable HTTP session (see http_server.hpp): the mcp::Session with its handler, and
// the SSE streams its frames go to. As the session's Outbox it routes every frame to exactly
// one stream: a response to the stream of the POST that carried its request, a request or
// notification related to a call to that call's stream, anything else to the standalone
// stream (number 0). Each stream keeps a bounded replay buffer of formatted events for
// resumption with Last-Event-ID (Limits::sse_replay_*); a session keeps its newest
// finished streams (Limits::sse_retained_streams).
//
// No socket here: a connection writing a stream attaches itself with the timer that wakes
// it; a newer connection (a resumption) takes the stream over.
//
// Threading: the owning io_context thread only. Ownership: held by shared_ptr by the
// SessionTable and by the connections serving it; the Handler is owned here and borrowed by the
// mcp::Session until end().
#include "core/clock.hpp"
#include "core/limits.hpp"
#include "mcp/session.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/container/devector.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace sluice::transport {

// One SSE stream (or a JSON-mode request waiting for its answer). Owned by its HttpSession
// and shared with the connection writing it, which reads `events` past `written`; the
// session appends and finishes it. Loop thread only.
struct SseStream {
  std::uint64_t number = 0;
  std::string request_key;  // rpc::id_key of the request; empty for the standalone stream
  bool sse = true;
  bool finished = false;    // the response was routed (or the session ended)
  std::string json_body;    // JSON mode: the response
  bool unanswered = false;  // the request ended without a response (it was cancelled)
  // A 2026-07-28 request answered with an error the revision sends with an HTTP status of
  // its own (-32021: 400): that status, and the response in `json_body` too, so that an SSE
  // answer that has sent nothing yet can be a plain JSON one instead. 0: none.
  unsigned error_status = 0;
  // (seq, formatted event), oldest first. A devector takes no memory until the first event
  // (a std::deque allocates two blocks, 576 bytes, for every stream it is in).
  boost::container::devector<std::pair<std::uint64_t, std::string>> events;
  std::size_t bytes = 0;
  std::uint64_t next_seq = 1;
  std::uint64_t written = 0;  // the newest seq handed to a connection

  // The connection writing it (an identity only) and the timer that wakes that writer.
  const void* writer = nullptr;
  core::Timer* waker = nullptr;
  // Attaches `owner`; a writer already attached is woken to notice it was replaced.
  void attach(const void* owner, core::Timer* timer) {
    if (writer && writer != owner) wake();
    writer = owner;
    waker = timer;
  }
  void detach(const void* owner) {
    if (writer != owner) return;
    writer = nullptr;
    waker = nullptr;
  }
  void wake() {
    if (waker) waker->cancel();
  }
};

class HttpSession : public mcp::Outbox {
 public:
  // `number` names the session in logs ("http#N"; the id is a credential and is never
  // logged). Replay events dropped before they were delivered are added to
  // `replay_dropped`, which must outlive the session.
  HttpSession(boost::asio::io_context& io, std::uint64_t number, const core::Limits& limits,
              std::uint64_t& replay_dropped);

  void attach(std::unique_ptr<mcp::Handler> handler);
  // Ends the session: its calls are cancelled (invariant C8) and every stream finishes.
  void end();
  // Requests being served, or work they started that still holds this session's permits
  // (the handler is borrowed by both).
  bool calls_running() const {
    return session_->pending_incoming() > 0 || (handler_ && handler_->has_work());
  }
  // No request being served and no stream attached to a connection.
  bool idle() const;

  // A new stream for a POSTed request, or nullptr when that id is still in use.
  std::shared_ptr<SseStream> open_stream(const std::string& key, bool sse);
  std::shared_ptr<SseStream> stream(std::uint64_t number) const;
  const std::shared_ptr<SseStream>& standalone() const { return standalone_; }
  std::string event_id(const SseStream& s, std::uint64_t seq) const;

  // mcp::Outbox
  void send(std::string frame) override { push(*standalone_, frame); }
  void send_response(std::string frame, std::string_view request_id) override;
  void request_finished(std::string_view request_id) override;
  void send_related(std::string frame, std::string_view related) override;

  void touch() { last_activity_ = core::Clock::now(); }
  core::Clock::time_point last_activity() const { return last_activity_; }
  const std::shared_ptr<mcp::Session>& session() const { return session_; }
  std::string protocol_version;  // the negotiated revision (from initialize)

 private:
  void push(SseStream& stream, std::string_view frame);
  // Removes and returns the stream of request `request_id` while it is served, else nullptr.
  std::shared_ptr<SseStream> take_request_stream(std::string_view request_id);

  const core::Limits& limits_;
  std::uint64_t& replay_dropped_;
  std::shared_ptr<mcp::Session> session_;
  std::unique_ptr<mcp::Handler> handler_;
  std::map<std::uint64_t, std::shared_ptr<SseStream>> streams_;
  std::unordered_map<std::string, std::shared_ptr<SseStream>> by_request_;
  std::shared_ptr<SseStream> standalone_;
  std::uint64_t next_stream_ = 1;
  core::Clock::time_point last_activity_;
  bool ended_ = false;
};

// A session id: 128 bits from the kernel's CSPRNG, as 32 hex digits (visible ASCII);
// nullopt when the kernel gives none (a sandbox forbidding getrandom).
std::optional<std::string> new_session_id();

}  // namespace sluice::transport
