#include "transport/remote_mcp.hpp"

#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "rpc/message.hpp"
#include "transport/era_headers.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <exception>

namespace sluice::transport {
namespace asio = boost::asio;
namespace cj = core::json;

struct RemoteConnection::Stream {
  std::optional<std::string> last_id;  // of the last event that had one
  std::chrono::milliseconds retry;     // the server's `retry`, else the default
  bool any_event = false;              // since the stream was last (re)opened
};

namespace {

constexpr auto kDeleteBound = std::chrono::seconds(2);
constexpr auto kMaxRetryAfter = std::chrono::seconds(3600);
// A server's `retry` below this is raised to it: a stream that keeps closing is not reopened
// in a busy loop.
constexpr auto kMinRetry = std::chrono::milliseconds(100);

// An outgoing frame (ours, so well-formed): its method, raw id and params.
struct Outgoing {
  std::string method;
  std::string id;                          // empty for a notification or a response
  std::optional<std::string_view> params;  // a view into the frame: read before it moves
};

// One scan of the frame's members.
Outgoing classify(std::string_view frame) {
  static constexpr std::array<std::string_view, 3> kKeys = {"method", "id", "params"};
  std::array<std::optional<std::string_view>, 3> found;
  cj::scan_members(frame, kKeys, found);
  Outgoing out;
  if (!found[0]) return out;  // a response (to a request of the server's)
  std::string scratch;
  if (auto m = cj::string_value(*found[0], scratch)) out.method = std::string(*m);
  if (found[1]) out.id = std::string(*found[1]);
  out.params = found[2];
  return out;
}

RemoteFailure failure_of(const HttpError& error) {
  std::string kind(failure_name(error.failure));
  if (error.failure == HttpFailure::tls_failed) {
    return {kind, fmt::format("TLS failed ({}): {}", tls_failure_name(error.tls), error.message)};
  }
  return {kind, error.message};
}

RemoteFailure failure_of_status(int status) {
  if (status == 401 || status == 403) {
    return {"auth_required", fmt::format("the server requires authorization (HTTP {})", status)};
  }
  return {"http_error", fmt::format("the server answered HTTP {}", status)};
}

// Seconds of a Retry-After given as a number (an HTTP date is not waited for).
std::optional<std::chrono::seconds> retry_after(const HttpFields& headers) {
  auto value = field(headers, "Retry-After");
  if (!value) return std::nullopt;
  std::string_view text = cj::trim(*value);
  long long seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || seconds < 0) return std::nullopt;
  return std::min(std::chrono::seconds(seconds), std::chrono::seconds(kMaxRetryAfter));
}

bool is_event_stream(const HttpFields& headers) {
  auto type = field(headers, "Content-Type");
  return type && cj::trim(*type).substr(0, 17) == "text/event-stream";
}

// A session id is visible ASCII (0x21-0x7E), as the specification requires.
bool usable_session_id(std::string_view id) {
  return !id.empty() && id.size() <= 1024 &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// `reference` (the legacy endpoint event's data) resolved against `base`; empty when it is not
// a URL reference, or names another origin.
std::string resolve_endpoint(const std::string& base, std::string_view reference) {
  auto base_url = boost::urls::parse_uri(base);
  auto ref = boost::urls::parse_uri_reference(cj::trim(reference));
  if (!base_url || !ref) return {};
  boost::urls::url out;
  if (!boost::urls::resolve(*base_url, *ref, out)) return {};
  std::string resolved(out.buffer());
  return same_origin(resolved, base) ? resolved : std::string();
}

}  // namespace

std::shared_ptr<RemoteConnection> RemoteConnection::create(asio::io_context& io,
                                                           RemoteOptions options) {
  return std::shared_ptr<RemoteConnection>(new RemoteConnection(io, std::move(options)));
}

RemoteConnection::RemoteConnection(asio::io_context& io, RemoteOptions options)
    : io_(io), options_(std::move(options)), client_(io, options_.http) {}

RemoteConnection::~RemoteConnection() = default;

std::size_t RemoteConnection::connections_opened() const { return client_.connections_opened(); }

void RemoteConnection::start(std::shared_ptr<mcp::Session> session,
                             std::function<void()> on_closed) {
  session_ = std::move(session);
  on_closed_ = std::move(on_closed);
  if (options_.legacy_sse)
    core::spawn(io_, legacy_stream(), "a remote server's legacy event stream");
}

void RemoteConnection::send(std::string frame) {
  if (closed_ || ended_) return;  // the session fails what is pending when it closes
  if (options_.legacy_sse && post_url_.empty()) {
    waiting_.push_back(std::move(frame));
    return;
  }
  core::spawn(io_, post(std::move(frame)), "a POST to a remote server");
}

HttpRequest RemoteConnection::request_to(std::string method, std::string url, bool stream) const {
  HttpRequest request{std::move(method), std::move(url), options_.headers, {}};
  request.headers.emplace_back(
      "Accept", stream ? "text/event-stream" : "application/json, text/event-stream");
  if (!options_.legacy_sse) {
    if (!session_id_.empty()) request.headers.emplace_back("Mcp-Session-Id", session_id_);
    if (!protocol_version_.empty()) {
      request.headers.emplace_back("MCP-Protocol-Version", protocol_version_);
    }
  }
  return request;
}

bool RemoteConnection::held_by_retry_after(std::string& why) const {
  const auto now = core::Clock::now();
  if (now >= retry_after_until_) return false;
  const auto left = std::chrono::ceil<std::chrono::seconds>(retry_after_until_ - now);
  why = fmt::format("the server asked to wait before the next request (Retry-After, {} s left)",
                    left.count());
  return true;
}

void RemoteConnection::note_response_head(const HttpResponse& head) {
  if (options_.legacy_sse || !session_id_.empty()) return;
  auto id = field(head.headers, "Mcp-Session-Id");
  if (!id) return;
  if (usable_session_id(*id)) {
    session_id_ = std::string(*id);
  } else {
    core::log::warn("server {}: ignored a session id that is not visible ASCII", options_.label);
  }
}

asio::awaitable<void> RemoteConnection::post(std::string frame) {
  auto self = shared_from_this();
  const Outgoing what = classify(frame);
  if (what.method == "initialize") initialize_id_ = what.id;
  if (stream_ready_ && !stream_ready_->is_set() && what.method != "notifications/initialized") {
    co_await stream_ready_->wait_for(options_.http.connect_timeout);
    if (closed_ || ended_) co_return;
  }
  std::string why;
  if (!what.id.empty() && held_by_retry_after(why)) {
    answer_failed(what.id, {"http_error", why});
    co_return;
  }
  HttpRequest request = request_to("POST", options_.legacy_sse ? post_url_ : options_.url, false);
  request.headers.emplace_back("Content-Type", "application/json");
  // Of the 2026-07-28 revision: a request whose _meta says so, and a notification while the
  // last request was and no initialize has been answered.
  const bool era = add_era_headers(request.headers, what.params, what.method, !what.id.empty(),
                                   modern_ && protocol_version_.empty(),
                                   protocol_version_.empty() ? param_headers_.get() : nullptr);
  if (!what.id.empty()) modern_ = era;
  request.body = std::move(frame);
  auto abort = std::make_shared<HttpAbort>();
  exchanges_.push_back(abort);
  Stream stream{std::nullopt, options_.default_retry};
  bool answered = false;
  SseSink sink = [this, &stream, &what, &answered](SseEvent event) {
    on_event(std::move(event), stream, what.id, answered);
  };
  std::optional<RemoteFailure> refused;
  auto result = co_await exchange_authorized(std::move(request), std::move(sink), abort, refused);
  std::erase(exchanges_, abort);
  if (closed_ || ended_) co_return;
  if (refused) {
    if (!what.id.empty()) answer_failed(what.id, *refused);
    end(std::move(*refused));
    co_return;
  }
  // A JSON answer (an SSE one went to on_event as it came).
  if (result && !result->body.empty() && !options_.legacy_sse &&
      !is_event_stream(result->headers)) {
    deliver(std::move(result->body), what.id, answered);
  }
  // An SSE answer that broke before the response: resumed from its last event, never resent.
  const bool broke = !result || (result->status / 100 == 2 && is_event_stream(result->headers));
  if (!what.id.empty() && !answered && broke && stream.last_id && !options_.legacy_sse) {
    answered = co_await resume(stream, what.id);
    if (closed_ || ended_) co_return;
  }
  after_post(result, what.method, what.id, answered);
}

void RemoteConnection::after_post(const HttpResult<HttpResponse>& result, const std::string& method,
                                  const std::string& request_id, bool answered) {
  if (!result) {
    RemoteFailure failure = failure_of(result.error());
    if (result.error().failure == HttpFailure::too_large) violation_ = true;
    if (!request_id.empty() && !answered) answer_failed(request_id, failure);
    failure_ = failure;
    if (++consecutive_failures_ >= kMaxConsecutiveFailures) end(std::move(failure));
    return;
  }
  const int status = result->status;
  if (status / 100 == 2) {
    consecutive_failures_ = 0;
    if (!request_id.empty() && !answered && !options_.legacy_sse) {
      answer_failed(request_id, {"http_error", fmt::format("the server answered HTTP {} without "
                                                           "a response to the request",
                                                           status)});
    }
    if (method == "notifications/initialized" && !options_.legacy_sse && !standalone_opened_) {
      standalone_opened_ = true;
      stream_ready_ = std::make_unique<core::Event>(io_);
      core::spawn(io_, standalone_stream(), "a remote server's event stream");
    }
    return;
  }
  if (status == 404 && !session_id_.empty()) {
    end({"session_expired", "the server no longer knows the session (HTTP 404)"});
    return;
  }
  if (answered && status / 100 == 4 && status != 401 && status != 403) {
    // A JSON-RPC error the server sent with an HTTP status of its own (400 or 404 in the
    // 2026-07-28 revision): the request's answer, not a failure of the connection.
    consecutive_failures_ = 0;
    return;
  }
  RemoteFailure failure = failure_of_status(status);
  if (!request_id.empty()) answer_failed(request_id, failure);
  if (status == 404 && !session_id_.empty()) {
    end({"session_expired", "the server no longer knows the session (HTTP 404)"});
  } else if (failure.kind == "auth_required") {
    end(std::move(failure));
  } else {
    if (auto wait = retry_after(result->headers); wait && (status == 429 || status == 503)) {
      retry_after_until_ = core::Clock::now() + *wait;
    }
    failure_ = failure;
    if (++consecutive_failures_ >= kMaxConsecutiveFailures) end(std::move(failure));
  }
}

void RemoteConnection::on_event(SseEvent event, Stream& stream, const std::string& request_id,
                                bool& answered) {
  stream.any_event = true;
  if (event.retry) stream.retry = *event.retry;
  if (event.id) stream.last_id = std::move(*event.id);
  if (options_.legacy_sse && event.event == "endpoint") {
    if (!post_url_.empty()) return;  // named once
    post_url_ = resolve_endpoint(options_.url, event.data);
    if (post_url_.empty()) {
      end({"bad_endpoint", "the server's endpoint event is not a URL of its own origin"});
      return;
    }
    for (std::string& frame : std::exchange(waiting_, {})) send(std::move(frame));
    return;
  }
  if (event.event == "message" && !event.data.empty()) {
    deliver(std::move(event.data), request_id, answered);
  }
}

void RemoteConnection::deliver(std::string frame, const std::string& request_id, bool& answered) {
  if (!session_) return;
  auto parsed = rpc::parse(std::move(frame), {options_.max_json_depth}, rpc::Strictness::peer);
  if (const auto* bad = std::get_if<rpc::ParseFailure>(&parsed)) {
    core::log::debug("server {}: refused a frame: {}", options_.label, bad->message);
    return;
  }
  rpc::Message& message = std::get<rpc::Message>(parsed);
  if (message.is_response()) {
    if (!request_id.empty() && message.id() == request_id) answered = true;
    if (!initialize_id_.empty() && message.id() == initialize_id_) {
      initialize_id_.clear();
      std::string scratch;
      auto version = message.kind() == rpc::Kind::result
                         ? cj::member_span(message.result(), "protocolVersion")
                         : std::nullopt;
      auto text = version ? cj::string_value(*version, scratch) : std::nullopt;
      if (text && usable_session_id(*text)) protocol_version_ = std::string(*text);
    }
  }
  session_->on_message(std::move(message));
}

void RemoteConnection::answer_failed(const std::string& request_id, const RemoteFailure& failure) {
  if (!session_ || request_id.empty()) return;
  core::log::warn("server {}: a request failed: {}", options_.label, failure.message);
  session_->on_frame(rpc::make_error(request_id, rpc::code::kInternalError,
                                     "remote server: " + failure.kind + ": " + failure.message));
}

asio::awaitable<std::string> RemoteConnection::token(std::optional<RemoteFailure>& failure) {
  if (!options_.auth) co_return std::string();
  auto self = shared_from_this();
  core::Result<std::string> got = co_await options_.auth->bearer();
  if (!got) {
    failure = RemoteFailure{"auth_required", got.error().message};
    co_return std::string();
  }
  co_return std::move(*got);
}

asio::awaitable<HttpResult<HttpResponse>> RemoteConnection::exchange_authorized(
    HttpRequest request, SseSink sink, std::shared_ptr<HttpAbort> abort,
    std::optional<RemoteFailure>& refused, HeadSink opened) {
  auto self = shared_from_this();
  HeadSink head = [this, opened = std::move(opened)](const HttpResponse& response) {
    note_response_head(response);
    if (opened) opened(response);
  };
  std::string bearer = co_await token(refused);
  if (refused) co_return HttpError{HttpFailure::cancelled, TlsFailure::none, refused->message};
  std::optional<HttpRequest> again;
  if (options_.auth) {
    // Kept for one retry with a new token, its body shared rather than copied.
    if (!request.shared_body) {
      request.shared_body = std::make_shared<const std::string>(std::move(request.body));
      request.body.clear();
    }
    again = request;
  }
  if (!bearer.empty()) request.headers.emplace_back("Authorization", "Bearer " + bearer);
  auto result = co_await client_.exchange(std::move(request), sink, abort, head);
  if (!again || !result || (result->status != 401 && result->status != 403)) co_return result;
  std::string challenge(field(result->headers, "WWW-Authenticate").value_or(""));
  core::Result<std::string> retry =
      co_await options_.auth->refused(result->status, std::move(challenge), std::move(bearer));
  if (!retry) {
    refused = RemoteFailure{"auth_required", retry.error().message};
    co_return result;
  }
  again->headers.emplace_back("Authorization", "Bearer " + *retry);
  co_return co_await client_.exchange(std::move(*again), std::move(sink), abort, std::move(head));
}

asio::awaitable<bool> RemoteConnection::pause(std::chrono::milliseconds delay) {
  core::Timer timer(io_);
  timer.expires_after(std::max(delay, kMinRetry));
  pauses_.push_back(&timer);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  std::erase(pauses_, &timer);
  co_return !closed_ && !ended_;
}

asio::awaitable<int> RemoteConnection::read_stream(const std::string& url, Stream& stream,
                                                   const std::string& request_id, bool& answered,
                                                   HeadSink opened) {
  HttpRequest request = request_to("GET", url, true);
  if (stream.last_id) request.headers.emplace_back("Last-Event-ID", *stream.last_id);
  auto abort = std::make_shared<HttpAbort>();
  exchanges_.push_back(abort);
  stream.any_event = false;
  SseSink sink = [this, &stream, &request_id, &answered](SseEvent event) {
    on_event(std::move(event), stream, request_id, answered);
  };
  std::optional<RemoteFailure> refused;
  auto result = co_await exchange_authorized(std::move(request), std::move(sink), abort, refused,
                                             std::move(opened));
  std::erase(exchanges_, abort);
  if (refused && !closed_) {
    end(std::move(*refused));
    co_return 0;
  }
  if (!result) {
    if (result.error().failure == HttpFailure::too_large) violation_ = true;
    if (result.error().failure != HttpFailure::cancelled) failure_ = failure_of(result.error());
    co_return 0;
  }
  co_return result->status;
}

asio::awaitable<bool> RemoteConnection::resume(Stream& stream, const std::string& request_id) {
  bool answered = false;
  for (std::size_t attempt = 0; !answered && attempt < options_.max_resumptions; ++attempt) {
    const bool go_on = co_await pause(stream.retry);
    if (!go_on) co_return false;
    const int status = co_await read_stream(options_.url, stream, request_id, answered);
    if (closed_ || ended_) co_return answered;
    if (status != 0 && status / 100 != 2) break;  // the server cannot resume it
  }
  co_return answered;
}

asio::awaitable<void> RemoteConnection::standalone_stream() {
  auto self = shared_from_this();
  Stream stream{std::nullopt, options_.default_retry};
  std::size_t quiet = 0;  // reconnects in a row that delivered nothing
  bool unused = false;
  HeadSink opened = [this](const HttpResponse&) {
    if (stream_ready_) stream_ready_->set();
  };
  for (;;) {
    const int status = co_await read_stream(options_.url, stream, {}, unused, opened);
    if (stream_ready_) stream_ready_->set();  // no head came: nothing to wait for
    if (closed_ || ended_) co_return;
    if (status == 404 && !session_id_.empty()) {
      end({"session_expired", "the server no longer knows the session (HTTP 404)"});
      co_return;
    }
    if (status != 0 && status / 100 != 2) co_return;  // 405: the server offers no such stream
    quiet = stream.any_event ? 0 : quiet + 1;
    if (quiet > options_.max_resumptions) {
      core::log::info("server {}: its event stream keeps closing; not reopened", options_.label);
      co_return;
    }
    const bool go_on = co_await pause(stream.retry);
    if (!go_on) co_return;
  }
}

asio::awaitable<void> RemoteConnection::legacy_stream() {
  auto self = shared_from_this();
  Stream stream{std::nullopt, options_.default_retry};
  bool unused = false;
  const int status = co_await read_stream(options_.url, stream, {}, unused);
  if (closed_ || ended_) co_return;
  if (status == 0 && failure_ && failure_->kind != "closed") {
    end(*failure_);
  } else if (status == 401 || status == 403) {
    end(failure_of_status(status));
  } else {
    end({"stream_ended",
         status == 0 || status / 100 == 2
             ? std::string("the server closed its event stream")
             : fmt::format("the server answered HTTP {} to its event stream", status)});
  }
}

void RemoteConnection::end(RemoteFailure failure) {
  if (ended_ || closed_) return;
  ended_ = true;
  core::log::warn("server {}: the connection ended: {}", options_.label, failure.message);
  failure_ = std::move(failure);
  for (auto& abort : std::exchange(exchanges_, {})) abort->cancel();
  for (core::Timer* timer : pauses_) timer->cancel();
  if (stream_ready_) stream_ready_->set();
  if (session_) session_->on_closed();
  if (auto done = std::exchange(on_closed_, {})) done();
}

void RemoteConnection::abandon() {
  closed_ = true;
  for (auto& abort : std::exchange(exchanges_, {})) abort->cancel();
  for (core::Timer* timer : pauses_) timer->cancel();
  if (stream_ready_) stream_ready_->set();
  session_.reset();
  on_closed_ = {};
}

asio::awaitable<void> RemoteConnection::close(bool orderly) {
  if (closed_) co_return;
  auto self = shared_from_this();
  closed_ = true;
  for (auto& abort : std::exchange(exchanges_, {})) abort->cancel();
  for (core::Timer* timer : pauses_) timer->cancel();
  if (stream_ready_) stream_ready_->set();
  if (!orderly || options_.legacy_sse || session_id_.empty() || ended_) co_return;
  HttpRequest request = request_to("DELETE", options_.url, false);
  auto abort = std::make_shared<HttpAbort>();
  core::Timer bound(io_);
  bound.expires_after(kDeleteBound);
  bound.async_wait([abort](boost::system::error_code ec) {
    if (!ec) abort->cancel();
  });
  std::optional<RemoteFailure> refused;
  SseSink no_sink;
  auto result =
      co_await exchange_authorized(std::move(request), std::move(no_sink), abort, refused);
  bound.cancel();
  if (!result) {
    core::log::debug("server {}: the session's DELETE failed: {}", options_.label,
                     result.error().message);
  }
}

}  // namespace sluice::transport
