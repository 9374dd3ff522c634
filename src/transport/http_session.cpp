#include "transport/http_session.hpp"

#include "core/hex.hpp"
#include "core/json.hpp"
#include "core/random.hpp"
#include "mcp/era.hpp"
#include "rpc/message.hpp"

#include <fmt/format.h>

#include <array>

namespace sluice::transport {
namespace cj = core::json;

namespace {

// Formats one SSE event; a frame with line breaks (never produced by sluice, which writes
// single-line JSON) is split over several data lines as SSE requires.
std::string sse_event(std::string_view id, std::string_view data) {
  std::string out;
  out.reserve(data.size() + id.size() + 32);
  if (!id.empty()) {
    out += "id: ";
    out += id;
    out += '\n';
  }
  out += "event: message\n";
  std::size_t start = 0;
  for (;;) {
    std::size_t nl = data.find('\n', start);
    out += "data: ";
    out += data.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out += '\n';
  return out;
}

}  // namespace

HttpSession::HttpSession(boost::asio::io_context& io, std::uint64_t number,
                         const core::Limits& limits, std::uint64_t& replay_dropped)
    : limits_(limits), replay_dropped_(replay_dropped) {
  mcp::SessionOptions o;
  o.label = fmt::format("http#{}", number);
  o.strictness = rpc::Strictness::client;
  o.limits = &limits;
  session_ = mcp::Session::create(io, o);
  standalone_ = std::make_shared<SseStream>();
  streams_[0] = standalone_;
  touch();
}

void HttpSession::attach(std::unique_ptr<mcp::Handler> handler) {
  handler_ = std::move(handler);
  session_->attach(this, handler_.get());
}

void HttpSession::end() {
  if (ended_) return;
  ended_ = true;
  session_->on_closed();
  session_->detach();
  for (auto& [n, s] : streams_) {
    s->finished = true;
    s->wake();
  }
  by_request_.clear();
}

bool HttpSession::idle() const {
  if (session_->pending_incoming() > 0) return false;
  for (const auto& [n, s] : streams_) {
    if (s->writer) return false;
  }
  return true;
}

std::shared_ptr<SseStream> HttpSession::open_stream(const std::string& key, bool sse) {
  if (by_request_.count(key)) return nullptr;
  auto s = std::make_shared<SseStream>();
  s->number = next_stream_++;
  s->request_key = key;
  s->sse = sse;
  streams_[s->number] = s;
  by_request_[key] = s;
  // Finished streams beyond the retention bound go, oldest first.
  std::size_t finished = 0;
  for (auto& [n, st] : streams_) finished += (n != 0 && st->finished) ? 1 : 0;
  const std::size_t keep = limits_.sse_retained_streams;
  for (auto it = streams_.begin(); it != streams_.end() && finished > keep;) {
    if (it->first != 0 && it->second->finished && !it->second->writer) {
      it = streams_.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
  return s;
}

std::shared_ptr<SseStream> HttpSession::stream(std::uint64_t number) const {
  auto it = streams_.find(number);
  return it == streams_.end() ? nullptr : it->second;
}

std::string HttpSession::event_id(const SseStream& s, std::uint64_t seq) const {
  return fmt::format("{}-{}", s.number, seq);
}

std::shared_ptr<SseStream> HttpSession::take_request_stream(std::string_view request_id) {
  auto key = rpc::id_key(request_id);
  auto it = key ? by_request_.find(*key) : by_request_.end();
  if (it == by_request_.end()) return nullptr;
  std::shared_ptr<SseStream> s = std::move(it->second);
  by_request_.erase(it);
  return s;
}

void HttpSession::send_response(std::string frame, std::string_view request_id) {
  std::shared_ptr<SseStream> s = take_request_stream(request_id);
  if (!s) {
    push(*standalone_, frame);
    return;
  }
  if (protocol_version == mcp::kStatelessVersion) {
    auto error = cj::member_span(frame, "error");
    auto code = error ? cj::member_span(*error, "code") : std::nullopt;
    if (code &&
        cj::trim(*code) == std::to_string(mcp::era_code::kMissingRequiredClientCapability)) {
      s->error_status = 400;
      if (s->sse) s->json_body = frame;
    }
  }
  if (s->sse) {
    push(*s, frame);
  } else {
    s->json_body = std::move(frame);
  }
  s->finished = true;
  s->wake();
}

void HttpSession::request_finished(std::string_view request_id) {
  // Ended without an answer (cancelled): its stream ends with nothing more.
  std::shared_ptr<SseStream> s = take_request_stream(request_id);
  if (!s) return;
  s->finished = true;
  s->unanswered = true;
  s->wake();
}

void HttpSession::send_related(std::string frame, std::string_view related) {
  auto key = rpc::id_key(related);
  auto it = key ? by_request_.find(*key) : by_request_.end();
  SseStream& target = (it != by_request_.end() && it->second->sse) ? *it->second : *standalone_;
  push(target, frame);
}

void HttpSession::push(SseStream& stream, std::string_view frame) {
  std::uint64_t seq = stream.next_seq++;
  // The 2026-07-28 revision has no resumption, so its events carry no id.
  std::string event = sse_event(
      protocol_version == mcp::kStatelessVersion ? std::string() : event_id(stream, seq), frame);
  stream.bytes += event.size();
  stream.events.emplace_back(seq, std::move(event));
  // Bounded replay: the oldest events go first; the newest is always kept.
  while (stream.events.size() > 1 && (stream.events.size() > limits_.sse_replay_events ||
                                      stream.bytes > limits_.sse_replay_bytes)) {
    if (stream.events.front().first > stream.written) ++replay_dropped_;
    stream.bytes -= stream.events.front().second.size();
    stream.events.pop_front();
  }
  stream.wake();
}

std::optional<std::string> new_session_id() {
  std::array<unsigned char, 16> bytes{};
  if (!core::fill_random(bytes)) return std::nullopt;
  return core::to_hex(bytes);
}

}  // namespace sluice::transport
