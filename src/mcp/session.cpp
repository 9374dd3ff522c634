#include "mcp/session.hpp"

#include "core/log.hpp"
#include "core/spawn.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <charconv>

namespace sluice::mcp {
namespace cj = core::json;

namespace {
// `timeout` from now; time_point::max() (no deadline) for one too long to add to the clock.
core::Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  constexpr std::chrono::hours kForever{24 * 365 * 100};
  if (timeout >= kForever) return core::Clock::time_point::max();
  return core::Clock::now() + timeout;
}
}  // namespace

IncomingRequest::IncomingRequest(std::shared_ptr<Session> session, rpc::Message message)
    : session_(std::move(session)), message_(std::move(message)) {}

void IncomingRequest::respond_result(std::string_view result_json) {
  if (answered_ || cancelled()) return;
  answered_ = true;
  if (!result_members_.empty()) {
    session_->send_response(
        rpc::make_result(message_.id(), with_members(result_json, result_members_)), message_.id());
    return;
  }
  session_->send_response(rpc::make_result(message_.id(), result_json), message_.id());
}

void IncomingRequest::respond_error(int code, std::string_view message) {
  if (stateless()) {
    // In the stateless revision's terms (see stateless_error), as a relayed error is.
    respond_error_raw(R"({"code":)" + std::to_string(code) + R"(,"message":)" + cj::quote(message) +
                      "}");
    return;
  }
  if (answered_ || cancelled()) return;
  answered_ = true;
  session_->send_response(rpc::make_error(message_.id(), code, message), message_.id());
}

void IncomingRequest::respond_error_raw(std::string_view error_json) {
  if (answered_ || cancelled()) return;
  answered_ = true;
  std::string frame = R"({"jsonrpc":"2.0","id":)";
  frame += message_.id();
  frame += R"(,"error":)";
  if (stateless()) {
    frame += stateless_error(message_, error_json);
  } else {
    frame += error_json;
  }
  frame += '}';
  session_->send_response(std::move(frame), message_.id());
}

Reply::Reply() = default;
Reply::Reply(Status status, std::optional<rpc::Message> message,
             std::unique_ptr<OutstandingRequest> late)
    : status(status), message(std::move(message)), late(std::move(late)) {}
Reply::Reply(Reply&&) noexcept = default;
Reply& Reply::operator=(Reply&&) noexcept = default;
Reply::~Reply() = default;

std::shared_ptr<Session> Session::create(asio::io_context& io, SessionOptions options) {
  return std::shared_ptr<Session>(new Session(io, std::move(options)));
}

Session::Session(asio::io_context& io, SessionOptions options)
    : io_(io),
      wakeups_(core::WakeupService::of(io)),
      options_(std::move(options)),
      deadline_timer_(io) {}

Session::~Session() = default;

void Session::attach(Outbox* outbox, Handler* handler) {
  outbox_ = outbox;
  handler_ = handler;
}

void Session::detach() {
  outbox_ = nullptr;
  handler_ = nullptr;
}

cj::ParseLimits Session::parse_limits() const {
  const core::Limits& l = options_.limits ? *options_.limits : default_limits_;
  return cj::ParseLimits{l.max_json_depth};
}

void Session::send_frame(std::string frame) {
  if (outbox_ && !closed_) outbox_->send(std::move(frame));
}

bool Session::peer_declares(std::string_view name) const {
  return cj::member_span(peer_capabilities_, name).has_value();
}

void Session::send_response(std::string frame, std::string_view request_id) {
  if (outbox_ && !closed_) outbox_->send_response(std::move(frame), request_id);
}

void Session::send_related(std::string frame, std::string_view related) {
  if (!outbox_ || closed_) return;
  if (related.empty()) {
    outbox_->send(std::move(frame));
  } else {
    outbox_->send_related(std::move(frame), related);
  }
}

void Session::notify(std::string_view method, std::string_view params_json,
                     std::string_view related) {
  send_related(rpc::make_notification(method, params_json), related);
}

void Session::on_frame(std::string frame) {
  ++counters_.frames_in;
  if (cj::trim(frame).empty()) return;  // blank lines between frames are tolerated
  auto parsed = rpc::parse(std::move(frame), parse_limits(), options_.strictness);
  if (auto* failure = std::get_if<rpc::ParseFailure>(&parsed)) {
    ++counters_.bad_frames;
    core::log::debug("{}: refused a frame: {}", options_.label, failure->message);
    // Only the client role answers malformed frames; a downstream's garbage is dropped.
    if (options_.strictness == rpc::Strictness::client) {
      send_frame(rpc::make_error(failure->id, failure->code, failure->message));
    }
    if (handler_) handler_->on_bad_frame(failure->message);
    return;
  }
  on_message(std::move(std::get<rpc::Message>(parsed)));
}

void Session::on_message(rpc::Message message) {
  if (message.is_response()) {
    handle_response(std::move(message));
    return;
  }
  if (message.is_notification()) {
    if (message.method() == "notifications/cancelled") handle_cancel(message);
    if (handler_) handler_->on_notification(message);
    return;
  }
  // ping is answered here, except in a stateless request: the 2026-07-28 revision removed
  // it, and the handler refuses it as the revision says.
  if (message.method() == "ping" && !classify(message).stateless) {
    send_response(rpc::make_result(message.id(), "{}"), message.id());
    return;
  }
  if (!handler_ || closed_) return;
  auto key = rpc::id_key(message.id());
  const core::Limits& l = options_.limits ? *options_.limits : default_limits_;
  if (incoming_.size() >= l.max_pending_requests) {
    send_response(rpc::make_error(message.id(), rpc::code::kInternalError,
                                  "too many requests in flight on this session"),
                  message.id());
    return;
  }
  if (key && incoming_.count(*key)) {
    send_response(rpc::make_error(message.id(), rpc::code::kInvalidRequest,
                                  "Invalid request: this id is already in use"),
                  message.id());
    return;
  }
  auto request = std::make_shared<IncomingRequest>(shared_from_this(), std::move(message));
  if (key) incoming_[*key] = request.get();
  core::spawn(io_, serve(request), "a request being served");
}

void Session::on_oversized_frame(std::string_view head, std::size_t total_bytes) {
  ++counters_.oversized_frames;
  core::log::warn("{}: refused a message of {} bytes (over the {} byte limit)", options_.label,
                  total_bytes,
                  (options_.limits ? *options_.limits : default_limits_).max_message_bytes);
  // The head is cut at an arbitrary byte: an id is trusted only when its value ends
  // inside the head (a ',' or '}' follows it), never when the cut may have shortened it.
  auto id = cj::member_span(head, "id");
  if (id) {
    std::size_t end = static_cast<std::size_t>(id->data() - head.data()) + id->size();
    std::string_view rest = cj::trim(head.substr(end));
    if (rest.empty() || (rest.front() != ',' && rest.front() != '}')) id.reset();
  }
  std::optional<std::string> key = id ? rpc::id_key(*id) : std::nullopt;
  if (options_.strictness == rpc::Strictness::client) {
    send_frame(rpc::make_error(key ? cj::trim(*id) : "null", rpc::code::kInvalidRequest,
                               "Invalid request: message too large"));
  } else if (key && key->rfind("n:", 0) == 0) {
    // A downstream answer too large to take: fail only the request it answers.
    std::uint64_t n = 0;
    std::string_view digits = std::string_view(*key).substr(2);
    std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (auto it = pending_.find(n); it != pending_.end() && !it->second->settled()) {
      it->second->status = Reply::Status::error;
      auto err = rpc::parse(
          rpc::make_error(std::to_string(n), rpc::code::kInternalError, "response too large"),
          parse_limits(), rpc::Strictness::peer);
      it->second->reply = std::move(std::get<rpc::Message>(err));
      it->second->wake_later();  // the session goes on below
    }
  }
  if (handler_) handler_->on_bad_frame("message too large");
}

void Session::on_closed() {
  if (closed_) return;
  closed_ = true;
  for (auto& [id, call] : pending_) {
    if (call->settled()) continue;  // its answer arrived first: keep it
    call->status = Reply::Status::closed;
    call->wake_later();  // a caller resumed now would change pending_ during this walk
  }
  deadline_timer_.cancel();
  deadline_armed_ = core::Clock::time_point::max();
  // Requests being served can no longer be answered; their work is cancelled.
  std::vector<IncomingRequest*> serving;
  for (auto& [key, req] : incoming_) serving.push_back(req);
  for (auto* req : serving) req->cancel_signal().cancel();
}

void Session::handle_response(rpc::Message message) {
  auto key = rpc::id_key(message.id());
  std::uint64_t n = 0;
  bool numeric = key && key->rfind("n:", 0) == 0;
  if (numeric) {
    std::string_view digits = std::string_view(*key).substr(2);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    numeric = ec == std::errc() && ptr == digits.data() + digits.size();
  }
  auto it = numeric ? pending_.find(n) : pending_.end();
  if (it == pending_.end()) {
    // A late answer to a cancelled or timed-out request, or a stray: recorded and dropped.
    ++counters_.unmatched_responses;
    core::log::debug("{}: dropped a response that matches no pending request", options_.label);
    return;
  }
  PendingAnswer* call = it->second;
  if (call->settled()) {
    // A second answer to a call already answered (it waits to resume): the first one wins.
    ++counters_.unmatched_responses;
    core::log::debug("{}: dropped a second response to one request", options_.label);
    return;
  }
  call->status = message.kind() == rpc::Kind::result ? Reply::Status::result : Reply::Status::error;
  call->reply = std::move(message);
  // The caller goes on at once (to its answer, often a write that the read batch this came
  // in holds, see transport::WriteBatch). It may drop the last other hold on this session.
  auto keep = shared_from_this();
  call->wake_now();
}

void Session::handle_cancel(const rpc::Message& message) {
  auto request_id = cj::member_span(message.params(), "requestId");
  if (!request_id) return;
  auto key = rpc::id_key(*request_id);
  if (!key) return;
  auto it = incoming_.find(*key);
  if (it == incoming_.end()) return;
  if (it->second->message().method() == "initialize") return;  // never cancelled
  it->second->cancel_signal().cancel();
}

void Session::finish_incoming(const rpc::Message& message) {
  if (auto key = rpc::id_key(message.id())) {
    auto it = incoming_.find(*key);
    if (it != incoming_.end() && &it->second->message() == &message) incoming_.erase(it);
  }
  if (outbox_ && !closed_) outbox_->request_finished(message.id());
}

asio::awaitable<void> Session::serve(std::shared_ptr<IncomingRequest> request) {
  auto self = shared_from_this();
  try {
    if (handler_) co_await handler_->on_request(*request);
    if (!request->answered() && !request->cancelled()) {
      request->respond_error(rpc::code::kInternalError, "the request was not answered");
    }
  } catch (...) {
    // The request's own boundary: reported by type only (the text may quote input) and
    // counted with the coroutine failures; the request is answered and the session goes on.
    core::report_coroutine_failure(options_.label + ": a request handler",
                                   std::current_exception());
    request->respond_error(rpc::code::kInternalError, "internal error");
  }
  finish_incoming(request->message());
}

void Session::watch_deadline(core::Clock::time_point deadline) {
  if (deadline >= deadline_armed_) return;
  deadline_armed_ = deadline;
  deadline_timer_.expires_at(deadline);  // a wait for a later expiry ends as aborted
  deadline_timer_.async_wait([weak = weak_from_this(), deadline](boost::system::error_code ec) {
    auto self = weak.lock();
    // Aborted: moved to an earlier deadline, the session closed, or it is being destroyed.
    if (!self || ec || self->deadline_armed_ != deadline) return;
    self->deadline_armed_ = core::Clock::time_point::max();
    self->sweep_deadlines();
  });
}

void Session::sweep_deadlines() {
  const auto now = core::Clock::now();
  auto next = core::Clock::time_point::max();
  for (auto& [id, call] : pending_) {
    if (call->settled() || call->cancel_requested || call->timed_out ||
        call->deadline == core::Clock::time_point::max()) {
      continue;
    }
    if (call->tracking && call->tracking->last_progress) {
      // Progress since the deadline was set moves it (up to the ceiling).
      auto moved =
          std::min(*call->tracking->last_progress + call->timeout, call->tracking->ceiling);
      call->deadline = std::max(call->deadline, moved);
    }
    if (call->deadline <= now) {
      call->timed_out = true;
      call->wake_later();
    } else {
      next = std::min(next, call->deadline);
    }
  }
  if (next != core::Clock::time_point::max()) watch_deadline(next);
}

void Session::send_cancelled(const std::string& id_text, Reply::Status why,
                             std::string_view related) {
  std::string params =
      R"({"requestId":)" + id_text + R"(,"reason":)" +
      cj::quote(why == Reply::Status::timeout ? "timed out" : "cancelled by the client") + "}";
  notify("notifications/cancelled", params, related);
}

asio::awaitable<Reply> Session::request(std::string method, std::string params_json,
                                        std::chrono::milliseconds timeout,
                                        core::CancelSignal* cancel, std::uint64_t* id_out,
                                        const CallTracking* tracking, std::string related) {
  const std::uint64_t id = take_request_id();
  std::string frame = rpc::make_request(std::to_string(id), method, params_json);
  return request_frame(id, std::move(method), std::move(frame), timeout, cancel, id_out, tracking,
                       std::move(related));
}

asio::awaitable<Reply> Session::request_frame(std::uint64_t id, std::string method,
                                              std::string frame, std::chrono::milliseconds timeout,
                                              core::CancelSignal* cancel, std::uint64_t* id_out,
                                              const CallTracking* tracking, std::string related) {
  auto self = shared_from_this();
  if (closed_ || !outbox_) co_return Reply{Reply::Status::closed};
  if (cancel && cancel->cancelled()) co_return Reply{Reply::Status::cancelled};
  if (id_out) *id_out = id;
  PendingAnswer call(wakeups_);
  call.timeout = timeout;
  call.tracking = tracking;
  call.deadline = deadline_after(timeout);
  if (tracking && tracking->ceiling < call.deadline) call.deadline = tracking->ceiling;
  pending_.emplace(id, &call);
  std::string id_text = std::to_string(id);
  send_related(std::move(frame), related);
  if (closed_) {
    // The transport closed while sending (a stuck peer, EPIPE): on_closed() ran before this
    // wait could start, so its wake-up would be lost.
    pending_.erase(id);
    co_return Reply{Reply::Status::closed};
  }
  std::uint64_t registration = 0;
  if (cancel) {
    registration = cancel->on_cancel([&call] {
      call.cancel_requested = true;
      call.wake_later();
    });
  }
  watch_deadline(call.deadline);
  while (!call.settled() && !call.cancel_requested && !call.timed_out) {
    co_await call.woken.sleep();
  }
  if (cancel) cancel->remove(registration);
  if (call.settled()) {
    pending_.erase(id);
    Reply reply{call.status};
    if (call.status != Reply::Status::closed) reply.message = std::move(call.reply);
    co_return reply;
  }
  const Reply::Status why =
      call.cancel_requested ? Reply::Status::cancelled : Reply::Status::timeout;
  if (why == Reply::Status::timeout) ++counters_.timeouts;
  // initialize is never cancelled: a timeout just ends it.
  if (method != "initialize") send_cancelled(id_text, why, related);
  if (!tracking) {
    pending_.erase(id);
    co_return Reply{why};
  }
  // Followed: the request stays pending under its id, in the caller's hands now (the
  // transport may have closed while notifications/cancelled was sent: that is kept).
  auto late = std::make_unique<OutstandingRequest>(self, id);
  late->answer_.status = call.status;
  late->answer_.reply = std::move(call.reply);
  pending_[id] = &late->answer_;
  co_return Reply{why, std::nullopt, std::move(late)};
}

OutstandingRequest::OutstandingRequest(std::shared_ptr<Session> session, std::uint64_t id)
    : session_(std::move(session)),
      id_(id),
      timer_(session_->io()),
      answer_(core::WakeupService::of(session_->io())) {
  answer_.bounded = &timer_;
}

OutstandingRequest::~OutstandingRequest() { forget(); }

void OutstandingRequest::forget() {
  auto it = session_->pending_.find(id_);
  if (it != session_->pending_.end() && it->second == &answer_) session_->pending_.erase(it);
}

asio::awaitable<Reply> OutstandingRequest::wait_until(std::chrono::steady_clock::time_point until) {
  for (;;) {
    if (answer_.settled()) {
      forget();
      Reply reply{answer_.status};
      if (answer_.status != Reply::Status::closed) reply.message = std::move(answer_.reply);
      co_return reply;
    }
    if (core::Clock::now() >= until) co_return Reply{Reply::Status::timeout};
    timer_.expires_at(until);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace sluice::mcp
