// The request phases: admission by the head (shutdown, Host, Origin, rate), the endpoints
// that are not MCP (/health, the bearer token, /metrics, unknown paths), then POST, GET and
// DELETE on /mcp.
#include "core/ascii.hpp"
#include "transport/http_server_impl.hpp"

#include "core/json.hpp"
#include "mcp/protocol.hpp"
#include "rpc/message.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>

namespace sluice::transport {

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace cj = core::json;

namespace {

// A JSON-mode POST sleeps until its stream wakes it; the timer is re-armed, so this is no
// bound on the call (the gateway's call timeouts are).
constexpr auto kUntilWoken = std::chrono::hours(1);

bool accepts(std::string_view accept, std::string_view type) {
  return core::ascii::contains_in_any_case(accept, type);
}

// Last-Event-ID "<stream>-<seq>" as this server issues them.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_event_id(std::string_view id) {
  std::size_t dash = id.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::uint64_t number = 0, seq = 0;
  auto a = std::from_chars(id.data(), id.data() + dash, number);
  auto b = std::from_chars(id.data() + dash + 1, id.data() + id.size(), seq);
  if (a.ec != std::errc() || a.ptr != id.data() + dash || b.ec != std::errc() ||
      b.ptr != id.data() + id.size()) {
    return std::nullopt;
  }
  return std::pair{number, seq};
}

}  // namespace

Reply HttpServerImpl::error_reply(http::status status, int code, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = rpc::make_error("null", code, message);
  return r;
}

std::shared_ptr<HttpSession> HttpServerImpl::find_session(const RequestHeads& heads,
                                                          Reply& refusal) const {
  const std::string_view sid = heads.session_id;
  if (sid.empty()) {
    refusal = error_reply(http::status::bad_request, -32000,
                          "Bad Request: the Mcp-Session-Id header is required");
    return nullptr;
  }
  std::shared_ptr<HttpSession> session = sessions_.find(sid);
  if (!session) refusal = error_reply(http::status::not_found, -32001, "Session not found");
  return session;
}

asio::awaitable<bool> HttpServerImpl::handle(std::shared_ptr<Connection> conn, Request& req) {
  const RequestHeads heads = read_heads(req);
  if (auto refusal = admission_refusal(*conn, heads)) {
    co_return co_await write_reply(*conn, req, std::move(*refusal));
  }
  std::string_view target = req.target();
  if (auto answer = plain_answer(req, heads, target.substr(0, target.find('?')))) {
    co_return co_await write_reply(*conn, req, std::move(*answer));
  }
  // POST checks the MCP-Protocol-Version header with its message (a 2026-07-28 request
  // answers an unknown one with its own error); the other methods here.
  if (std::string_view v = heads.protocol_version;
      req.method() != http::verb::post && !v.empty() && !mcp::is_supported_version(v)) {
    co_return co_await write_reply(*conn, req,
                                   error_reply(http::status::bad_request, -32000,
                                               "Bad Request: unsupported MCP-Protocol-Version"));
  }
  switch (req.method()) {
    case http::verb::post:
      co_return co_await handle_post(conn, req, heads);
    case http::verb::get:
      co_return co_await handle_get(conn, req, heads);
    case http::verb::delete_: {
      Reply reply;
      if (find_session(heads, reply)) {
        sessions_.end(std::string(heads.session_id), false);
        reply.status = http::status::no_content;
      }
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    default: {
      Reply r = error_reply(http::status::method_not_allowed, -32000, "Method not allowed");
      r.headers.emplace_back("Allow", "GET, POST, DELETE");
      co_return co_await write_reply(*conn, req, std::move(r));
    }
  }
}

std::optional<Reply> HttpServerImpl::admission_refusal(const Connection& conn,
                                                       const RequestHeads& heads) {
  if (stopping_) {
    return error_reply(http::status::service_unavailable, -32000,
                       "Service Unavailable: the server is shutting down");
  }
  // DNS rebinding: a page on another origin reaching a loopback service.
  if (!guard_.host_allowed(heads.host)) {
    return error_reply(http::status::forbidden, rpc::code::kInvalidRequest,
                       "Forbidden: the Host header names a host this server does not serve");
  }
  // At most one Origin (checked with the head); one sent empty is refused like a foreign one.
  if (heads.origin && !guard_.origin_allowed(*heads.origin)) {
    return error_reply(http::status::forbidden, rpc::code::kInvalidRequest,
                       "Forbidden: the Origin is not allowed");
  }
  if (!guard_.rate_allowed(conn.address)) {
    Reply r = error_reply(http::status::too_many_requests, -32000,
                          "Too many requests from this address; retry later");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  return std::nullopt;
}

std::optional<Reply> HttpServerImpl::plain_answer(const Request& req, const RequestHeads& heads,
                                                  std::string_view path) {
  if (path == "/health") {
    if (req.method() != http::verb::get) {
      Reply r = error_reply(http::status::method_not_allowed, -32000, "Method not allowed");
      r.headers.emplace_back("Allow", "GET");
      return r;
    }
    Reply r;
    r.body = hooks_.health(guard_.token_required() && guard_.authorized(heads.authorization));
    return r;
  }
  if (!guard_.authorized(heads.authorization)) {
    bool sent = !heads.authorization.empty();
    Reply r = error_reply(http::status::unauthorized, -32000,
                          sent ? "Unauthorized: the bearer token is not valid"
                               : "Unauthorized: a bearer token is required");
    r.headers.emplace_back(
        "WWW-Authenticate",
        sent ? R"(Bearer realm="sluice", error="invalid_token")" : R"(Bearer realm="sluice")");
    return r;
  }
  if (path == "/metrics") {
    Reply r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = (hooks_.metrics ? hooks_.metrics() : std::string()) +
             http_metrics_text(counters_, sessions_, connections_.size());
    return r;
  }
  if (path != "/mcp") {
    return error_reply(http::status::not_found, -32000, "Not found: the MCP endpoint is /mcp");
  }
  return std::nullopt;
}

asio::awaitable<bool> HttpServerImpl::handle_post(std::shared_ptr<Connection> conn, Request& req,
                                                  const RequestHeads& heads) {
  Reply reply;
  bool wants_sse = false;
  std::optional<rpc::Message> message = read_post(req, heads, wants_sse, reply);
  if (!message) co_return co_await write_reply(*conn, req, std::move(reply));
  std::string_view header_version = heads.protocol_version;
  if (message->is_request()) {
    // Stateless (2026-07-28): the message's _meta says so, or a request outside a session
    // names no stateful revision in its header.
    const bool outside_session = heads.session_id.empty() && message->method() != "initialize";
    const bool stateful_header = mcp::is_supported_version(header_version);
    const bool stateless = outside_session && !header_version.empty() && !stateful_header;
    std::optional<std::string_view> header;
    if (!header_version.empty() || stateless) header = header_version;
    mcp::RequestEra era = mcp::classify(*message, stateless, header);
    if (era.stateless) {
      co_return co_await handle_stateless(conn, req, std::move(*message), era, wants_sse);
    }
  }
  if (!header_version.empty() && !mcp::is_supported_version(header_version)) {
    reply = error_reply(http::status::bad_request, -32000,
                        "Bad Request: unsupported MCP-Protocol-Version");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  Headers headers;
  std::shared_ptr<HttpSession> session = post_session(heads, *message, headers, reply);
  if (!session) co_return co_await write_reply(*conn, req, std::move(reply));
  session->touch();
  if (!message->is_request()) {
    session->session()->on_message(std::move(*message));
    reply.status = http::status::accepted;
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::shared_ptr<SseStream> stream = session->open_stream(*rpc::id_key(message->id()), wants_sse);
  if (!stream) {
    reply.status = http::status::bad_request;
    reply.body = rpc::make_error(message->id(), rpc::code::kInvalidRequest,
                                 "Invalid request: this id is already in use");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  const std::string_view version =
      header_version.empty() ? std::string_view(session->protocol_version) : header_version;
  const bool prime = wants_sse && version >= "2025-11-25";
  session->session()->on_message(std::move(*message));
  if (wants_sse) co_return co_await run_sse(conn, req, session, stream, prime, std::move(headers));
  co_return co_await answer_json(conn, req, std::move(stream), std::move(headers));
}

std::optional<rpc::Message> HttpServerImpl::read_post(Request& req, const RequestHeads& heads,
                                                      bool& wants_sse, Reply& refusal) const {
  const std::string_view content_type = heads.content_type;
  const std::string_view media = cj::trim(content_type.substr(0, content_type.find(';')));
  if (!core::ascii::iequals(media, "application/json")) {
    refusal = error_reply(http::status::unsupported_media_type, -32000,
                          "Unsupported Media Type: the body must be application/json");
    return std::nullopt;
  }
  const std::string_view accept = heads.accept;
  wants_sse = accepts(accept, "text/event-stream");
  if (!wants_sse && !accepts(accept, "application/json") && !accepts(accept, "*/*")) {
    refusal = error_reply(http::status::not_acceptable, -32000,
                          "Not Acceptable: the client must accept application/json or "
                          "text/event-stream");
    return std::nullopt;
  }
  // Line breaks between tokens are whitespace: they become spaces, so that the message is
  // single-line and can be spliced into a stdio frame downstream. One inside a string is
  // left for the parser to refuse.
  std::string body = std::move(req.body());
  cj::single_line(body);
  auto parsed =
      rpc::parse(std::move(body), cj::ParseLimits{limits_.max_json_depth}, rpc::Strictness::client);
  if (auto* failure = std::get_if<rpc::ParseFailure>(&parsed)) {
    refusal.status = http::status::bad_request;
    refusal.body = rpc::make_error(failure->id, failure->code, failure->message);
    return std::nullopt;
  }
  return std::move(std::get<rpc::Message>(parsed));
}

std::shared_ptr<HttpSession> HttpServerImpl::post_session(const RequestHeads& heads,
                                                          const rpc::Message& message,
                                                          Headers& headers, Reply& refusal) {
  if (!(message.is_request() && message.method() == "initialize")) {
    return find_session(heads, refusal);
  }
  if (!heads.session_id.empty()) {
    refusal = error_reply(http::status::bad_request, rpc::code::kInvalidRequest,
                          "Bad Request: initialize must not carry an Mcp-Session-Id");
    return nullptr;
  }
  SessionTable::Opened opened = sessions_.open();
  if (!opened.session) {
    refusal = session_refusal(opened);
    return nullptr;
  }
  opened.session->protocol_version = std::string(mcp::negotiate_initialize(message.params()));
  headers.emplace_back("Mcp-Session-Id", std::move(opened.id));
  return std::move(opened.session);
}

Reply HttpServerImpl::session_refusal(const SessionTable::Opened& opened) {
  if (!opened.at_capacity) {
    return error_reply(http::status::service_unavailable, -32000,
                       "Service Unavailable: cannot create a session");
  }
  Reply refusal = error_reply(http::status::service_unavailable, -32000,
                              "Service Unavailable: too many sessions; retry later");
  refusal.headers.emplace_back("Retry-After", "5");
  return refusal;
}

asio::awaitable<bool> HttpServerImpl::answer_json(std::shared_ptr<Connection> conn,
                                                  const Request& req,
                                                  std::shared_ptr<SseStream> stream,
                                                  Headers headers) {
  stream->attach(conn.get(), &conn->wake);
  if (conn->cancel_on_close) start_watching(conn);
  while (!stream->finished && !conn->peer_gone) {
    boost::system::error_code ec;
    conn->wake.expires_after(kUntilWoken);
    co_await conn->wake.async_wait(asio::redirect_error(kAwait, ec));
  }
  stream->detach(conn.get());
  if (conn->peer_gone) co_return false;  // the client left: nobody to answer
  Reply reply;
  if (stream->unanswered) {
    // Cancelled by the client: no response is sent for it (invariant C4), the POST is just
    // accepted.
    reply.status = http::status::accepted;
  } else if (stream->json_body.empty()) {
    reply = error_reply(http::status::not_found, -32001, "Session not found (it ended)");
  } else {
    if (stream->error_status) reply.status = static_cast<http::status>(stream->error_status);
    reply.body = std::move(stream->json_body);
    reply.headers = std::move(headers);
  }
  const bool keep = co_await write_reply(*conn, req, std::move(reply));
  co_return keep && !conn->watched;  // a watched connection has a read pending: it closes
}

asio::awaitable<bool> HttpServerImpl::handle_get(std::shared_ptr<Connection> conn, Request& req,
                                                 const RequestHeads& heads) {
  Reply reply;
  if (!accepts(heads.accept, "text/event-stream")) {
    reply = error_reply(http::status::not_acceptable, -32000,
                        "Not Acceptable: the client must accept text/event-stream");
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  std::shared_ptr<HttpSession> session = find_session(heads, reply);
  if (!session) co_return co_await write_reply(*conn, req, std::move(reply));
  session->touch();
  std::shared_ptr<SseStream> stream = session->standalone();
  // Last-Event-ID "<stream>-<seq>": resume that stream after that event.
  if (std::string_view last = heads.last_event_id; !last.empty()) {
    auto id = parse_event_id(last);
    if (!id) {
      reply = error_reply(http::status::bad_request, -32000,
                          "Bad Request: Last-Event-ID is not an event id this server issued");
      co_return co_await write_reply(*conn, req, std::move(reply));
    }
    auto [number, seq] = *id;
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

}  // namespace sluice::transport
