#pragma once
// The JSON-RPC/MCP session engine, used for both roles: sluice as server to its client and
// sluice as client of each downstream. It matches response ids to outgoing requests, times
// them out, sends and honours notifications/cancelled, answers ping, and runs each incoming
// request as its own coroutine on the loop. It knows nothing of the lifecycle beyond that:
// initialize is an ordinary request for the Handler (so a stateless revision can be added
// beside it).
//
// Threading: everything runs on the one io_context thread that owns the session.
// Ownership: held by shared_ptr; every coroutine it starts holds a reference, so a session
// closed while requests are suspended stays valid until they finish. The Outbox and Handler
// are borrowed; detach() drops them (after it, nothing is sent and nothing is dispatched).
#include "core/cancel.hpp"
#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/limits.hpp"
#include "core/wakeup.hpp"
#include "mcp/era.hpp"
#include "rpc/message.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sluice::mcp {

namespace asio = boost::asio;

// Where a session's outgoing frames go (a transport). send() queues one complete message
// (without newline) and never blocks; frames are written whole, in order, never interleaved.
class Outbox {
 public:
  virtual ~Outbox() = default;
  virtual void send(std::string frame) = 0;
  // A transport with several streams per session (Streamable HTTP) routes by these: the
  // response to the incoming request `request_id` (its raw id text), and a request or
  // notification that belongs to the work of incoming request `related_request_id`.
  // Single-stream transports need not override them.
  virtual void send_response(std::string frame, std::string_view /*request_id*/) {
    send(std::move(frame));
  }
  virtual void send_related(std::string frame, std::string_view /*related_request_id*/) {
    send(std::move(frame));
  }
  // The incoming request `request_id` is over, answered or not (a cancelled request gets
  // no answer): a per-request stream may end.
  virtual void request_finished(std::string_view /*request_id*/) {}
};

class OutstandingRequest;

struct Reply {
  enum class Status { result, error, timeout, cancelled, closed };
  Reply();
  Reply(Status status, std::optional<rpc::Message> message = std::nullopt,
        std::unique_ptr<OutstandingRequest> late = nullptr);
  Reply(Reply&&) noexcept;
  Reply& operator=(Reply&&) noexcept;
  ~Reply();

  Status status = Status::closed;
  std::optional<rpc::Message> message;  // set for result and error
  // A followed request (see CallTracking) that ended in timeout or cancelled: the request,
  // still pending under its id, so that its caller can wait on for the late answer.
  std::unique_ptr<OutstandingRequest> late;
  bool ok() const { return status == Status::result; }
};

// Passed to Session::request by a caller that follows its request past giving up on it
// (gateway calls: the slot belongs to the work, invariant C2). At the cancel or the timeout,
// notifications/cancelled goes to the peer with our id as for any request, and request()
// returns (cancelled or timeout) with Reply::late: the request stays pending under its id,
// so its answer, the close, or a bound of the caller's own can still be waited for. What
// happens then (the abandon bound, expiry) is the caller's policy, not the session's.
struct CallTracking {
  // The timeout as an inactivity timeout: when set, the time of the call's latest progress
  // (written by whoever sees its notifications/progress); the call times out `timeout` after
  // the later of its start and that, and never after `ceiling`.
  const std::chrono::steady_clock::time_point* last_progress = nullptr;
  std::chrono::steady_clock::time_point ceiling = std::chrono::steady_clock::time_point::max();
};

// An outgoing request not settled yet: its answer (or error), or the close, once one came.
// Internal to the session and OutstandingRequest.
// Its caller sleeps until the request settles, its caller cancels, or its deadline passes:
// Session::request on `woken`, which the answer resumes at once (no trip through the
// io_context's queue), an OutstandingRequest's holder on that request's own timer (`bounded`).
// Deadlines are kept by the session's one deadline timer (Session::watch_deadline), so a
// request neither arms nor disarms a timer of its own: no timer system call per request.
struct PendingAnswer {
  explicit PendingAnswer(core::WakeupService& wakeups) : woken(wakeups) {}
  core::Wakeup woken;
  core::Timer* bounded = nullptr;
  std::optional<rpc::Message> reply;
  Reply::Status status = Reply::Status::timeout;  // result, error or closed once settled
  bool cancel_requested = false;
  // Set by Session::request (a request's own wait); time_point::max() for a late request,
  // whose holder waits with a bound of its own.
  core::Clock::time_point deadline = core::Clock::time_point::max();
  std::chrono::milliseconds timeout{0};
  const CallTracking* tracking = nullptr;
  bool timed_out = false;  // the deadline passed (set by the deadline sweep)
  bool settled() const {
    return status == Reply::Status::result || status == Reply::Status::error ||
           status == Reply::Status::closed;
  }
  // Resumes the waiting caller before returning: this PendingAnswer may be gone after it.
  void wake_now() {
    if (bounded != nullptr) bounded->cancel();
    woken.wake_now();
  }
  // Queues the caller's resumption: for a waker that walks pending requests or goes on.
  void wake_later() {
    if (bounded != nullptr) bounded->cancel();
    woken.wake_later();
  }
};

class Session;

// An incoming request being served. The response is sent at most once; after a cancel
// nothing is sent for this id (the client already gave up on it).
class IncomingRequest {
 public:
  IncomingRequest(std::shared_ptr<Session> session, rpc::Message message);
  const rpc::Message& message() const { return message_; }
  const std::shared_ptr<Session>& session() const { return session_; }
  core::CancelSignal& cancel_signal() { return cancel_; }
  bool cancelled() const { return cancel_.cancelled(); }
  bool answered() const { return answered_; }
  void respond_result(std::string_view result_json);
  void respond_error(int code, std::string_view message);
  // An error object passed through as sent (a relayed answer).
  void respond_error_raw(std::string_view error_json);
  // A stateless (2026-07-28) request: its result, whoever answers it, gets these members
  // where it lacks them (mcp::with_members).
  void add_result_members(std::vector<ResultMember> members) {
    result_members_ = std::move(members);
  }
  bool stateless() const { return !result_members_.empty(); }

 private:
  std::shared_ptr<Session> session_;
  rpc::Message message_;
  core::CancelSignal cancel_;
  bool answered_ = false;
  std::vector<ResultMember> result_members_;
};

class Handler {
 public:
  virtual ~Handler() = default;
  // Serve one request; must answer it (unless it was cancelled). Exceptions are caught by
  // the session and answered with a value-free internal error.
  virtual asio::awaitable<void> on_request(IncomingRequest& request) = 0;
  virtual void on_notification(const rpc::Message& message) = 0;
  // A frame that could not be parsed or was too large (already answered when answerable).
  virtual void on_bad_frame(std::string_view /*reason*/) {}
  // Work this handler started that outlives the requests it served (a cancelled call whose
  // permit is still held until the server answers): while true, the handler must be kept.
  virtual bool has_work() const { return false; }
};

struct SessionOptions {
  std::string label;  // for logs: "client" or the server's name
  rpc::Strictness strictness = rpc::Strictness::client;
  const core::Limits* limits = nullptr;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  static std::shared_ptr<Session> create(asio::io_context& io, SessionOptions options);
  ~Session();

  void attach(Outbox* outbox, Handler* handler);
  void detach();

  // Transport callbacks. on_message takes a frame the transport already parsed (strictly,
  // with this session's limits), so it is parsed once.
  void on_frame(std::string frame);
  void on_message(rpc::Message message);
  void on_oversized_frame(std::string_view head, std::size_t total_bytes);
  void on_closed();
  bool closed() const { return closed_; }

  // Sends a request and waits for its answer, the timeout, a cancel (then
  // notifications/cancelled is sent to the peer with our id) or the transport closing.
  // `id_out`, when given, receives the id this request was sent with. `tracking`: the
  // caller follows the request past a cancel or timeout (Reply::late). `related`: the raw
  // id of the incoming request whose work this belongs to (empty: none).
  asio::awaitable<Reply> request(std::string method, std::string params_json,
                                 std::chrono::milliseconds timeout,
                                 core::CancelSignal* cancel = nullptr,
                                 std::uint64_t* id_out = nullptr,
                                 const CallTracking* tracking = nullptr, std::string related = {});
  // The same for a request whose frame the caller wrote (rpc::request_head) with an id it
  // took from take_request_id() just before: a large request's params are not copied again.
  asio::awaitable<Reply> request_frame(std::uint64_t id, std::string method, std::string frame,
                                       std::chrono::milliseconds timeout,
                                       core::CancelSignal* cancel = nullptr,
                                       std::uint64_t* id_out = nullptr,
                                       const CallTracking* tracking = nullptr,
                                       std::string related = {});
  std::uint64_t take_request_id() { return next_id_++; }
  void notify(std::string_view method, std::string_view params_json, std::string_view related = {});

  // Used by IncomingRequest.
  void send_frame(std::string frame);
  void send_response(std::string frame, std::string_view request_id);
  void send_related(std::string frame, std::string_view related);
  void finish_incoming(const rpc::Message& message);

  const std::string& label() const { return options_.label; }
  // Who the peer is, as its transport names it (an HTTP client's address; the label when the
  // transport says nothing): what a 2026-07-28 requestState is bound to.
  const std::string& peer() const { return peer_.empty() ? options_.label : peer_; }
  void set_peer(std::string peer) { peer_ = std::move(peer); }
  // The client this session speaks for when several sessions are one client (the exchanges
  // of one 2026-07-28 caller, which has no session of its own); empty: the session itself.
  const std::string& client_key() const { return client_key_; }
  void set_client_key(std::string key) { client_key_ = std::move(key); }
  // The peer's declared capabilities (the raw `capabilities` object of its initialize),
  // kept by the server role so that requests the peer cannot serve are not sent to it.
  void set_peer_capabilities(std::string json) { peer_capabilities_ = std::move(json); }
  // Whether the peer declared capability `name` (a top-level key).
  bool peer_declares(std::string_view name) const;
  // Whether the peer initialized (the stateful era): only then does it take notifications that
  // belong to no request of its own (list changes, a server's unattributed logs).
  bool initialized() const { return !peer_capabilities_.empty(); }
  std::size_t pending_outgoing() const { return pending_.size(); }
  std::size_t pending_incoming() const { return incoming_.size(); }
  asio::io_context& io() { return io_; }

  struct Counters {
    std::uint64_t frames_in = 0;
    std::uint64_t bad_frames = 0;
    std::uint64_t oversized_frames = 0;
    std::uint64_t unmatched_responses = 0;
    std::uint64_t timeouts = 0;
  };
  const Counters& counters() const { return counters_; }

 private:
  Session(asio::io_context& io, SessionOptions options);

  friend class OutstandingRequest;
  void send_cancelled(const std::string& id_text, Reply::Status why, std::string_view related);

  asio::awaitable<void> serve(std::shared_ptr<IncomingRequest> request);
  void handle_response(rpc::Message message);
  void handle_cancel(const rpc::Message& message);
  core::json::ParseLimits parse_limits() const;
  // Makes sure the deadline timer fires by `deadline` (it is moved only to an earlier time).
  void watch_deadline(core::Clock::time_point deadline);
  // The deadline timer fired: wakes each waiting request whose deadline passed (after moving
  // the deadline of one that made progress) and sets the timer for the next deadline.
  void sweep_deadlines();

  asio::io_context& io_;
  core::WakeupService& wakeups_;
  SessionOptions options_;
  core::Limits default_limits_;
  Outbox* outbox_ = nullptr;
  Handler* handler_ = nullptr;
  bool closed_ = false;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, PendingAnswer*> pending_;
  std::unordered_map<std::string, IncomingRequest*> incoming_;
  Counters counters_;
  std::string peer_capabilities_;
  std::string peer_;
  std::string client_key_;
  core::Timer deadline_timer_;
  // The expiry the deadline timer waits for; time_point::max() when it does not wait.
  core::Clock::time_point deadline_armed_ = core::Clock::time_point::max();
};

// A request whose caller gave up on it (Reply::late), still pending under its id: the answer
// that comes late, the transport closing, or a bound the holder chooses ends the wait.
// Destroying it forgets the id: an answer after that is dropped as unmatched.
// Ownership: held by the caller that follows the request; it keeps the session alive.
// Threading: the session's io_context thread.
class OutstandingRequest {
 public:
  OutstandingRequest(std::shared_ptr<Session> session, std::uint64_t id);
  ~OutstandingRequest();
  OutstandingRequest(const OutstandingRequest&) = delete;
  OutstandingRequest& operator=(const OutstandingRequest&) = delete;

  // The id the request was sent with.
  std::uint64_t id() const { return id_; }
  // Waits for the answer (result or error, with its message) or the close (closed); when
  // `until` passes first, returns timeout and the request stays pending.
  asio::awaitable<Reply> wait_until(std::chrono::steady_clock::time_point until);

 private:
  friend class Session;
  void forget();
  std::shared_ptr<Session> session_;
  std::uint64_t id_;
  core::Timer timer_;  // bounds a wait_until
  PendingAnswer answer_;
};

}  // namespace sluice::mcp
