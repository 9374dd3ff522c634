#pragma once
// sluice's HTTP/1.1 client (Beast over Asio, TLS through OpenSSL): what the remote downstream
// transports (Streamable HTTP, legacy HTTP+SSE) and the OAuth flows send their requests with.
//
// One HttpClient per remote server: it keeps a bounded pool of kept-alive connections per
// origin (scheme, host, port) and reuses an idle one for the next request. A response body is
// either read whole (capped while reading: a larger one is refused, never buffered) or, when
// it is an SSE stream (Content-Type text/event-stream) and the request gave an event sink,
// delivered event by event as it arrives.
//
// Errors are value-free: they name the kind of failure (HttpFailure) and the origin, never a
// header value, a body or a query string.
//
// Ownership: the client owns its connections; destroying it closes them at once (requests in
// progress complete with HttpFailure::closed). Threading: the io_context thread given to it;
// every member function is called there.
#include "core/clock.hpp"
#include "core/error.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::transport {

// Header fields in the order given; names compared ignoring case.
using HttpFields = std::vector<std::pair<std::string, std::string>>;

// The value of the first field named `name` (ignoring case), if any.
std::optional<std::string_view> field(const HttpFields& fields, std::string_view name);

struct HttpRequest {
  std::string method;  // "GET", "POST", "DELETE"
  std::string url;     // absolute http:// or https:// URL
  HttpFields headers;  // Host, Content-Length and Connection are set by the client
  std::string body;
  // When set, the body instead of `body`: shared by copies of a request kept for a retry,
  // so a large body is not copied for one.
  std::shared_ptr<const std::string> shared_body{};
  std::string_view payload() const { return shared_body ? *shared_body : body; }
};

struct HttpResponse {
  int status = 0;
  HttpFields headers;
  std::string body;  // empty when the body went to an event sink
};

// One event of an SSE stream (the fields of the WHATWG EventSource format).
struct SseEvent {
  std::string event;  // "message" when the stream named none
  std::string data;   // data lines joined with '\n'
  std::optional<std::string> id;
  std::optional<std::chrono::milliseconds> retry;
};

// What went wrong, as a class the caller can act on and health can show.
enum class HttpFailure {
  bad_url,         // not an absolute http(s) URL, or a host that cannot be used
  bad_request,     // a method or header field the client will not send (not a token; CR, LF, NUL)
  resolve_failed,  // the host name did not resolve
  connect_failed,  // refused, unreachable
  connect_timeout,
  tls_failed,    // see TlsFailure
  read_timeout,  // no byte for the read-idle bound, or the whole exchange over its deadline
  too_large,     // a head or body over its cap (refused while reading)
  bad_response,  // not HTTP/1.1 the client can parse
  closed,        // the server closed the connection before the response was complete
  cancelled,     // the caller's abort ran
};
std::string_view failure_name(HttpFailure failure);

// Why a TLS connection failed, from the handshake's result only.
enum class TlsFailure {
  none,
  certificate_untrusted,  // no chain to a trusted CA (the system store or the given CA file)
  certificate_expired,    // or not yet valid
  hostname_mismatch,      // the certificate does not name the host
  protocol_version,       // the server offers nothing at or above TLS 1.2
  handshake_failed,       // anything else
};
std::string_view tls_failure_name(TlsFailure failure);

struct HttpError {
  HttpFailure failure = HttpFailure::bad_response;
  TlsFailure tls = TlsFailure::none;
  std::string message;  // value-free, for logs and health
};

template <class T>
using HttpResult = boost::system::result<T, HttpError>;

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  // No byte read for this long: read_timeout.
  std::chrono::milliseconds read_idle_timeout{60'000};
  // A whole buffered exchange (connect to last body byte); an SSE stream delivered to a sink
  // has only the idle bound once its head is read. A slow-drip server cannot hold a request
  // past this.
  std::chrono::milliseconds request_deadline{120'000};
  std::size_t max_head_bytes = 64u * 1024u;
  std::size_t max_body_bytes = 16u * 1024u * 1024u;  // and one SSE event's data
  std::size_t max_idle_connections = 4;              // kept alive per origin
  // PEM file of CAs trusted for https:// instead of the system store (set_default_verify_paths).
  std::string ca_file;
};

// Receives the events of an SSE response as they arrive.
using SseSink = std::function<void(SseEvent)>;

// Receives a response's status and header fields (its body empty) as soon as its head is read,
// before its body or its first event: a session id that the events need, say.
using HeadSink = std::function<void(const HttpResponse&)>;

// Ends an exchange in progress from outside (the caller's cancel): the exchange completes
// with HttpFailure::cancelled and its connection is closed, not pooled. Shared (shared_ptr)
// by the caller and the exchange; used on the client's io_context thread only.
class HttpAbort {
 public:
  void cancel();
  bool aborted() const { return aborted_; }
  // Set by the client while an exchange runs (and cleared at its end); runs once on cancel(),
  // or at once when cancel() already ran.
  void on_abort(std::function<void()> callback);

 private:
  bool aborted_ = false;
  std::function<void()> callback_;
};

struct HttpClientImpl;  // private to http_client.cpp

class HttpClient {
 public:
  HttpClient(boost::asio::io_context& io, HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` and reads the response. With a sink and an SSE response, the events go
  // to the sink and the call completes when the stream ends (the server closed it, or the
  // idle bound passed: then read_timeout). `abort`, when given, may end it early.
  // Never follows a redirect: a 3xx is returned as it is (see redirect_target).
  // Pass a named HttpRequest (std::move it in): GCC 12 mis-copies an aggregate temporary
  // built inside a co_await expression (`co_await exchange(HttpRequest{...})`).
  // `head`, when given, sees the response's head first.
  boost::asio::awaitable<HttpResult<HttpResponse>> exchange(HttpRequest request, SseSink sink = {},
                                                            std::shared_ptr<HttpAbort> abort = {},
                                                            HeadSink head = {});

  // Connections open now (pooled idle ones included), and connections opened in all.
  std::size_t open_connections() const;
  std::size_t connections_opened() const;

 private:
  // Shared with the exchanges in progress, which may resume after the client is gone.
  std::shared_ptr<HttpClientImpl> impl_;
};

// The absolute URL a 3xx response points to (its Location resolved against `from`), when
// there is one. A caller that follows it must drop credentials (Authorization, and the
// server's configured headers) when the origin changes: same_origin() says.
std::optional<std::string> redirect_target(std::string_view from, const HttpResponse& response);
bool same_origin(std::string_view a, std::string_view b);

// Whether `url`'s host is a loopback address or "localhost" (plain http:// is allowed to
// those only unless the server entry says otherwise).
bool is_loopback_url(std::string_view url);
// Whether `url` is an absolute http:// or https:// URL sluice can connect to: a host, a valid
// port, and no user:password@ (credentials go in headers).
bool is_usable_http_url(std::string_view url);
// Whether `url` is an absolute https:// URL.
bool is_https_url(std::string_view url);

}  // namespace sluice::transport
