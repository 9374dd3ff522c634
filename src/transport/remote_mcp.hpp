#pragma once
// The MCP client side of a remote server, over transport::HttpClient: Streamable HTTP
// (protocol 2025-11-25, 2025-06-18 and 2025-03-26) or the legacy HTTP+SSE transport
// (2024-11-05). A RemoteConnection is the mcp::Outbox of the downstream's client session:
// every frame the session sends is POSTed, and every frame the server sends (a JSON response,
// the events of an SSE response, the standalone GET stream, the legacy event stream) goes to
// the session.
//
// Streamable HTTP: each frame is one POST (Accept: application/json, text/event-stream), with
// Mcp-Session-Id once the server gave one and MCP-Protocol-Version once initialize answered.
// After notifications/initialized the standalone GET stream is opened (405: the server has
// none). A broken SSE stream is resumed by a GET with Last-Event-ID after the server's
// `retry` (or RemoteOptions::default_retry). close() DELETEs the session.
// Legacy HTTP+SSE: start() opens the GET event stream; its `endpoint` event names where
// frames are POSTed (frames wait until then); answers come on that stream. The stream's end
// is the connection's end (the session is tied to it).
//
// Failures are never replayed: a request whose POST failed (refused, an HTTP error, a stream
// broken with nothing to resume from) is answered to the session once, as a JSON-RPC error
// naming the failure's class, and the frame is not sent again. An expired session (404), a
// refused credential (401/403), a server failing kMaxConsecutiveFailures times in a row, or a
// legacy stream's end ends the connection: `on_closed` runs and failure() says why. A server's
// Retry-After (429, 503) holds further requests until then: they fail at once, not queued.
//
// Ownership: create() returns a shared object; its exchanges hold it while they run, and
// close() ends them. Threading: the io_context thread only.
#include "core/error.hpp"
#include "core/event.hpp"
#include "mcp/era.hpp"
#include "mcp/session.hpp"
#include "transport/http_client.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice::transport {

// Where a connection gets the bearer token of a protected server (the gateway's OAuth client).
// Called on the io_context thread; each may wait (a refresh, an authorization).
class RemoteAuth {
 public:
  virtual ~RemoteAuth() = default;
  // The token to send ("" for none yet: the server's 401 then says how to get one), or why
  // there is none (value-free).
  virtual boost::asio::awaitable<core::Result<std::string>> bearer() = 0;
  // After a 401 or 403: the token to retry the request with, once, or why there is none.
  virtual boost::asio::awaitable<core::Result<std::string>> refused(int status,
                                                                    std::string www_authenticate,
                                                                    std::string sent) = 0;
};

struct RemoteOptions {
  std::string label;  // the server's name, for logs
  std::string url;
  bool legacy_sse = false;
  HttpFields headers;      // the server entry's, interpolated
  HttpClientOptions http;  // max_body_bytes: the message cap
  std::size_t max_json_depth = 64;
  // The GET stream's reconnect delay when the server sent no `retry`.
  std::chrono::milliseconds default_retry{1000};
  // Reconnects of a stream in a row that delivered no event before the stream is given up.
  std::size_t max_resumptions = 5;
  // Bearer tokens for a protected server; none: only the entry's headers are sent.
  std::shared_ptr<RemoteAuth> auth;
};

// Why the connection ended or a request failed, value-free: `kind` is a class health can
// show (tls_failed, auth_required, http_error, session_expired, connect_failed, ...), and
// `message` a sentence naming it (never a header value, a body or a query string).
struct RemoteFailure {
  std::string kind;
  std::string message;
};

using mcp::ParamHeaders;

class RemoteConnection : public mcp::Outbox, public std::enable_shared_from_this<RemoteConnection> {
 public:
  static constexpr std::size_t kMaxConsecutiveFailures = 5;

  static std::shared_ptr<RemoteConnection> create(boost::asio::io_context& io,
                                                  RemoteOptions options);
  ~RemoteConnection() override;
  RemoteConnection(const RemoteConnection&) = delete;
  RemoteConnection& operator=(const RemoteConnection&) = delete;

  // Frames from now on go to `session`; `on_closed` runs once when the connection ends by
  // itself (never after close()).
  void start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed);
  void send(std::string frame) override;
  // Ends every exchange at once, then, when `orderly` (Streamable HTTP, a session given),
  // DELETEs the session within a short bound. Idempotent; on_closed does not run.
  boost::asio::awaitable<void> close(bool orderly);
  // The same without the DELETE, at once (an owner going away): the session and on_closed
  // are forgotten.
  void abandon();

  // The last failure met (of a request, or of the connection); empty while none.
  const std::optional<RemoteFailure>& failure() const { return failure_; }
  // Whether a message over the size cap ended it.
  bool protocol_violation() const { return violation_; }
  const std::string& session_id() const { return session_id_; }
  std::size_t connections_opened() const;
  // The x-mcp-header parameters of the server's tools, from its latest listing: a tools/call
  // of the 2026-07-28 revision mirrors each argument given (not null) into its header.
  void set_param_headers(std::shared_ptr<const ParamHeaders> headers) {
    param_headers_ = std::move(headers);
  }

 private:
  struct Stream;  // one SSE stream being read: the events' last id, the retry delay
  RemoteConnection(boost::asio::io_context& io, RemoteOptions options);

  boost::asio::awaitable<void> post(std::string frame);
  // What a POST's answer means, once its exchange is over.
  void after_post(const HttpResult<HttpResponse>& result, const std::string& method,
                  const std::string& request_id, bool answered);
  boost::asio::awaitable<void> standalone_stream();
  boost::asio::awaitable<void> legacy_stream();
  // Reads one GET stream (from `stream`'s last event id when it has one), delivering its
  // events; the response's status, or 0 when the exchange failed.
  boost::asio::awaitable<int> read_stream(const std::string& url, Stream& stream,
                                          const std::string& request_id, bool& answered,
                                          HeadSink opened = {});
  // Resumes a POST's broken SSE stream until `request_id` is answered; whether it was.
  boost::asio::awaitable<bool> resume(Stream& stream, const std::string& request_id);
  // Waits `delay`; false when the connection closed or ended meanwhile.
  boost::asio::awaitable<bool> pause(std::chrono::milliseconds delay);
  HttpRequest request_to(std::string method, std::string url, bool stream) const;
  // The bearer token to send (options_.auth), "" for none; sets `failure` when it cannot.
  boost::asio::awaitable<std::string> token(std::optional<RemoteFailure>& failure);
  // One exchange of `request` with `token` added; on a 401/403 with options_.auth, the token
  // it gives is tried once more (the server refused the request: nothing was done).
  // `refused` is set when no token can be had (then the result is the server's refusal, or a
  // cancelled exchange when none was sent).
  boost::asio::awaitable<HttpResult<HttpResponse>> exchange_authorized(
      HttpRequest request, SseSink sink, std::shared_ptr<HttpAbort> abort,
      std::optional<RemoteFailure>& refused, HeadSink opened = {});
  // Parses a frame of the server's and passes it to the session; `answered` is set when it is
  // the response to `request_id`.
  void deliver(std::string frame, const std::string& request_id, bool& answered);
  void on_event(SseEvent event, Stream& stream, const std::string& request_id, bool& answered);
  void answer_failed(const std::string& request_id, const RemoteFailure& failure);
  void note_response_head(const HttpResponse& head);
  // Records a failure of the connection as a whole and ends it (on_closed).
  void end(RemoteFailure failure);
  bool held_by_retry_after(std::string& why) const;

  boost::asio::io_context& io_;
  RemoteOptions options_;
  HttpClient client_;
  std::shared_ptr<mcp::Session> session_;
  std::function<void()> on_closed_;
  std::vector<std::shared_ptr<HttpAbort>> exchanges_;  // in progress, ended by close()
  std::vector<core::Timer*> pauses_;                   // likewise
  std::optional<RemoteFailure> failure_;
  std::string session_id_;
  std::string protocol_version_;
  std::shared_ptr<const ParamHeaders> param_headers_;
  // The last request sent was of the 2026-07-28 revision (its notifications name it too).
  bool modern_ = false;
  std::string initialize_id_;         // the raw id of initialize while it waits for its answer
  std::string post_url_;              // legacy: the endpoint, once the stream named it
  std::vector<std::string> waiting_;  // legacy: frames sent before the endpoint was known
  std::size_t consecutive_failures_ = 0;
  core::Clock::time_point retry_after_until_{};
  bool standalone_opened_ = false;
  // Set once the standalone GET stream's head came (or it failed): requests after
  // notifications/initialized wait for it, so the server sees the stream before them.
  std::unique_ptr<core::Event> stream_ready_;
  bool violation_ = false;
  bool closed_ = false;
  bool ended_ = false;
};

}  // namespace sluice::transport
