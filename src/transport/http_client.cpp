// The HTTP/1.1 client (see http_client.hpp): connections and their pool, the exchange (connect,
// write the request, read the response whole or as an SSE stream), and the watchdog that
// holds every exchange to its bounds. The one translation unit with Beast and asio::ssl code.
//
// An exchange's I/O state (its resolver, its connection, its watchdog timer, why it was
// stopped) is an Exchange held by the coroutine; the watchdog, the caller's abort and the
// client's destructor reach it only to stop it: they close its socket, so whatever the
// coroutine awaits completes at once, and the coroutine reads `stop` to say why.
#include "transport/http_client.hpp"

#include "transport/http_read_buffer.hpp"
#include "transport/http_url.hpp"
#include "transport/sse_parser.hpp"
#include "transport/tls_context.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <fmt/format.h>

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace sluice::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kNever = core::Clock::time_point::max();
// What one read of an SSE stream takes at most (the parser keeps only unfinished events).
constexpr std::size_t kStreamChunk = 16 * 1024;

// One TCP connection (with TLS over it for https), kept alive between exchanges.
struct ClientConnection {
  explicit ClientConnection(asio::io_context& io) : socket(io) {}

  void close() {
    error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  // Whether an idle connection can carry the next request: nothing unread (the server neither
  // closed it nor sent anything unasked).
  bool idle_and_open() {
    if (!socket.is_open() || buffer.size() != 0) return false;
    if (tls && SSL_pending(tls->native_handle()) > 0) return false;
    char byte = 0;
    const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  tcp::socket socket;
  std::unique_ptr<ssl::stream<tcp::socket&>> tls;
  beast::flat_buffer buffer;  // reused by every response read on this connection
};

// Why an exchange was stopped from outside its own I/O.
enum class Stop { none, connect_timeout, read_timeout, cancelled, client_closed };

struct Exchange : std::enable_shared_from_this<Exchange> {
  explicit Exchange(asio::io_context& io) : resolver(io), timer(io) {}

  void halt(Stop why) {
    if (stop != Stop::none) return;
    stop = why;
    resolver.cancel();
    if (conn) conn->close();
    timer.cancel();
  }

  // (Re)arms the timer for the nearest bound. A bound that moved later is seen when the timer
  // fires, so a read costs only the clock reading in `last_read`.
  void watch() {
    auto next = std::min(connect_by, deadline);
    if (idle.count() > 0) next = std::min(next, last_read + idle);
    if (next == kNever || stop != Stop::none) return;
    timer.expires_at(next);
    timer.async_wait([weak = weak_from_this()](const error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->stop != Stop::none) return;
      const auto now = core::Clock::now();
      if (now >= self->connect_by) {
        self->halt(Stop::connect_timeout);
      } else if (now >= self->deadline ||
                 (self->idle.count() > 0 && now >= self->last_read + self->idle)) {
        self->halt(Stop::read_timeout);
      } else {
        self->watch();
      }
    });
  }

  tcp::resolver resolver;
  core::Timer timer;
  std::shared_ptr<ClientConnection> conn;
  Stop stop = Stop::none;
  core::Clock::time_point connect_by = kNever;
  core::Clock::time_point deadline = kNever;
  core::Clock::duration idle{0};
  core::Clock::time_point last_read{};
};

HttpError make_error(HttpFailure failure, const HttpUrl& url, std::string_view what,
                     TlsFailure tls = TlsFailure::none) {
  return HttpError{failure, tls, fmt::format("{}: {}", url.origin(), what)};
}

HttpError stopped(Stop stop, const HttpUrl& url) {
  switch (stop) {
    case Stop::connect_timeout:
      return make_error(HttpFailure::connect_timeout, url, "no connection within the bound");
    case Stop::read_timeout:
      return make_error(HttpFailure::read_timeout, url, "the response did not arrive in time");
    case Stop::cancelled:
      return make_error(HttpFailure::cancelled, url, "the exchange was cancelled");
    case Stop::none:
    case Stop::client_closed:
      break;
  }
  return make_error(HttpFailure::closed, url, "the client was closed");
}

// A read or write error of an exchange that was not stopped from outside.
HttpError io_failure(const error_code& ec, const HttpUrl& url, std::size_t max_head,
                     std::size_t max_body) {
  if (ec == http::error::body_limit) {
    return make_error(HttpFailure::too_large, url,
                      fmt::format("the response body is over the cap of {} bytes", max_body));
  }
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    return make_error(HttpFailure::too_large, url,
                      fmt::format("the response head is over the cap of {} bytes", max_head));
  }
  if (ec.category() == http::make_error_code(http::error::bad_version).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return make_error(HttpFailure::bad_response, url, "the response is not valid HTTP/1.1");
  }
  return make_error(HttpFailure::closed, url, "the server closed the connection");
}

template <class Parser>
asio::awaitable<error_code> read_some(ClientConnection& c, Parser& parser) {
  error_code ec;
  if (c.tls) {
    co_await http::async_read_some(*c.tls, c.buffer, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
  } else {
    co_await http::async_read_some(c.socket, c.buffer, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
  }
  // A TLS server that ends a body-until-close without close_notify ends it all the same.
  if (ec == ssl::error::stream_truncated && parser.need_eof()) parser.put_eof(ec);
  co_return ec;
}

}  // namespace

struct HttpClientImpl {
  HttpClientImpl(asio::io_context& io, HttpClientOptions options)
      : io(io), options(std::move(options)) {}

  ClientTls& tls() {
    if (!client_tls) client_tls.emplace(options.ca_file);
    return *client_tls;
  }

  std::shared_ptr<ClientConnection> take_idle(const std::string& origin) {
    auto found = idle.find(origin);
    if (found == idle.end()) return nullptr;
    auto& list = found->second;
    while (!list.empty()) {
      auto conn = std::move(list.back());
      list.pop_back();
      if (conn->idle_and_open()) return conn;
      conn->close();
    }
    return nullptr;
  }

  // `text` parsed: the last parse again when it is the last URL (a client sends to its
  // server's endpoint again and again, and a parse with Boost.URL costs thousands of
  // instructions).
  std::optional<HttpUrl> url_of(const std::string& text) {
    if (!last_url_parsed || text != last_url_text) {
      last_url_text = text;
      last_url = parse_http_url(text);
      last_url_parsed = true;
    }
    return last_url;
  }

  void put_idle(const std::string& origin, std::shared_ptr<ClientConnection> conn) {
    auto& list = idle[origin];
    if (closed || list.size() >= options.max_idle_connections) {
      conn->close();
      return;
    }
    list.push_back(std::move(conn));
  }

  void shutdown() {
    closed = true;
    for (auto& [origin, list] : idle) {
      for (auto& conn : list) conn->close();
    }
    idle.clear();
    for (Exchange* ex : active) ex->halt(Stop::client_closed);
  }

  asio::awaitable<HttpResult<std::shared_ptr<ClientConnection>>> connect(Exchange& ex,
                                                                         const HttpUrl& url);
  // A failure, or nothing when the connection is ready.
  asio::awaitable<std::optional<HttpError>> handshake(Exchange& ex, ClientConnection& conn,
                                                      const HttpUrl& url);
  asio::awaitable<HttpResult<HttpResponse>> read_response(Exchange& ex, const HttpUrl& url,
                                                          const SseSink& sink,
                                                          const HeadSink& on_head, bool& reusable);
  template <class Parser>
  asio::awaitable<std::optional<HttpError>> read_until_done(Exchange& ex, const HttpUrl& url,
                                                            Parser& parser);
  asio::awaitable<std::optional<HttpError>> read_stream(
      Exchange& ex, const HttpUrl& url, http::response_parser<http::buffer_body>& parser,
      const SseSink& sink);

  asio::io_context& io;
  HttpClientOptions options;
  std::optional<ClientTls> client_tls;  // made at the first https exchange
  std::unordered_map<std::string, std::vector<std::shared_ptr<ClientConnection>>> idle;
  std::unordered_set<Exchange*> active;
  std::size_t opened = 0;
  bool closed = false;
  std::string last_url_text;  // url_of's last URL and its parse
  std::optional<HttpUrl> last_url;
  bool last_url_parsed = false;
};

namespace {

HttpResponse response_of(const http::response_header<>& head) {
  HttpResponse response;
  response.status = static_cast<int>(head.result_int());
  response.headers.reserve(std::distance(head.begin(), head.end()));
  for (const auto& f : head) response.headers.emplace_back(f.name_string(), f.value());
  return response;
}

// Registers an exchange with its client while it runs (so the destructor can stop it) and
// with the caller's abort; forgets both at the end.
class ExchangeScope {
 public:
  ExchangeScope(HttpClientImpl& impl, const std::shared_ptr<Exchange>& ex,
                std::shared_ptr<HttpAbort> abort)
      : impl_(impl), ex_(ex.get()), abort_(std::move(abort)) {
    impl_.active.insert(ex_);
    if (abort_) {
      abort_->on_abort([weak = std::weak_ptr<Exchange>(ex)] {
        if (auto self = weak.lock()) self->halt(Stop::cancelled);
      });
    }
  }
  ~ExchangeScope() {
    impl_.active.erase(ex_);
    if (abort_) abort_->on_abort({});
  }
  ExchangeScope(const ExchangeScope&) = delete;
  ExchangeScope& operator=(const ExchangeScope&) = delete;

 private:
  HttpClientImpl& impl_;
  Exchange* ex_;
  std::shared_ptr<HttpAbort> abort_;
};

}  // namespace

asio::awaitable<HttpResult<std::shared_ptr<ClientConnection>>> HttpClientImpl::connect(
    Exchange& ex, const HttpUrl& url) {
  error_code ec;
  std::vector<tcp::endpoint> endpoints;
  if (url.host == "localhost") {
    // Both loopback addresses, whatever /etc/hosts says: a local server often listens on one.
    endpoints = {{asio::ip::address_v6::loopback(), url.port},
                 {asio::ip::address_v4::loopback(), url.port}};
  } else {
    auto flags = tcp::resolver::numeric_service;
    if (url.host_is_ip) flags |= tcp::resolver::numeric_host;
    auto results = co_await ex.resolver.async_resolve(
        url.host, std::to_string(url.port), flags, asio::redirect_error(asio::use_awaitable, ec));
    if (ex.stop != Stop::none) co_return stopped(ex.stop, url);
    if (ec) co_return make_error(HttpFailure::resolve_failed, url, "the host did not resolve");
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  auto conn = std::make_shared<ClientConnection>(io);
  ex.conn = conn;
  // Every address in turn until one accepts; none after a stop.
  auto still_going = [&ex](const error_code&, const tcp::endpoint&) {
    return ex.stop == Stop::none;
  };
  co_await asio::async_connect(conn->socket, endpoints, still_going,
                               asio::redirect_error(asio::use_awaitable, ec));
  if (ex.stop != Stop::none) co_return stopped(ex.stop, url);
  if (ec) co_return make_error(HttpFailure::connect_failed, url, "the connection was refused");
  ++opened;
  conn->socket.set_option(tcp::no_delay(true), ec);
  if (url.tls) {
    std::optional<HttpError> failed = co_await handshake(ex, *conn, url);
    if (failed) co_return std::move(*failed);
  }
  co_return conn;
}

asio::awaitable<std::optional<HttpError>> HttpClientImpl::handshake(Exchange& ex,
                                                                    ClientConnection& conn,
                                                                    const HttpUrl& url) {
  ClientTls& context = tls();
  if (context.problem()) {
    co_return make_error(HttpFailure::tls_failed, url, *context.problem(),
                         TlsFailure::handshake_failed);
  }
  conn.tls = std::make_unique<ssl::stream<tcp::socket&>>(conn.socket, context.context());
  if (!prepare_tls_connection(conn.tls->native_handle(), url)) {
    co_return make_error(HttpFailure::tls_failed, url, "the host cannot be verified",
                         TlsFailure::handshake_failed);
  }
  error_code ec;
  co_await conn.tls->async_handshake(ssl::stream_base::client,
                                     asio::redirect_error(asio::use_awaitable, ec));
  if (ex.stop != Stop::none) co_return stopped(ex.stop, url);
  if (ec) {
    const TlsFailure why = classify_tls_failure(conn.tls->native_handle(), ec);
    co_return make_error(HttpFailure::tls_failed, url,
                         fmt::format("the TLS handshake failed ({})", tls_failure_name(why)), why);
  }
  co_return std::nullopt;
}

template <class Parser>
asio::awaitable<std::optional<HttpError>> HttpClientImpl::read_until_done(Exchange& ex,
                                                                          const HttpUrl& url,
                                                                          Parser& parser) {
  while (!parser.is_done()) {
    const error_code ec = co_await read_some(*ex.conn, parser);
    if (ex.stop != Stop::none) co_return stopped(ex.stop, url);
    if (ec) co_return io_failure(ec, url, options.max_head_bytes, options.max_body_bytes);
    ex.last_read = core::Clock::now();
    if constexpr (std::is_same_v<Parser, http::response_parser<http::empty_body>>) {
      if (parser.is_header_done()) break;
    }
  }
  co_return std::nullopt;
}

asio::awaitable<std::optional<HttpError>> HttpClientImpl::read_stream(
    Exchange& ex, const HttpUrl& url, http::response_parser<http::buffer_body>& parser,
    const SseSink& sink) {
  SseParser events(options.max_body_bytes);
  // Nothing more reaches the sink once the exchange was stopped (by the sink's own abort, say).
  const SseSink deliver = [&ex, &sink](SseEvent event) {
    if (ex.stop == Stop::none) sink(std::move(event));
  };
  std::array<char, kStreamChunk> chunk{};
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    error_code ec = co_await read_some(*ex.conn, parser);
    if (ec == http::error::need_buffer) ec = {};
    if (ex.stop != Stop::none) co_return stopped(ex.stop, url);
    if (ec) co_return io_failure(ec, url, options.max_head_bytes, options.max_body_bytes);
    ex.last_read = core::Clock::now();
    const std::size_t got = chunk.size() - parser.get().body().size;
    if (!events.feed(std::string_view(chunk.data(), got), deliver)) {
      co_return make_error(HttpFailure::too_large, url,
                           fmt::format("an event of the stream is over the cap of {} bytes",
                                       options.max_body_bytes));
    }
  }
  co_return std::nullopt;
}

asio::awaitable<HttpResult<HttpResponse>> HttpClientImpl::read_response(Exchange& ex,
                                                                        const HttpUrl& url,
                                                                        const SseSink& sink,
                                                                        const HeadSink& on_head,
                                                                        bool& reusable) {
  http::response_parser<http::empty_body> head;
  head.header_limit(static_cast<std::uint32_t>(options.max_head_bytes));
  head.body_limit(options.max_body_bytes);
  if (auto failed = co_await read_until_done(ex, url, head)) co_return std::move(*failed);
  HttpResponse response = response_of(head.get());
  if (on_head) on_head(response);
  if (ex.stop != Stop::none) co_return stopped(ex.stop, url);
  auto type = field(response.headers, "Content-Type");
  if (sink && type && is_event_stream(*type)) {
    http::response_parser<http::buffer_body> body(std::move(head));
    body.body_limit(boost::none);  // a stream is bounded per event, and by the idle bound
    ex.deadline = kNever;
    ex.watch();
    // Events are taken a chunk at a time; the reads get that much room.
    make_room(ex.conn->buffer, kStreamChunk);
    if (auto failed = co_await read_stream(ex, url, body, sink)) co_return std::move(*failed);
    reusable = body.keep_alive();
  } else {
    http::response_parser<http::string_body> body(std::move(head));
    // A server sluice was configured to call is taken at its word about its body's length.
    if (!body.is_done()) {
      make_room_for_body(ex.conn->buffer, kBodyReadBytes, body.content_length_remaining());
    }
    if (auto failed = co_await read_until_done(ex, url, body)) co_return std::move(*failed);
    response.body = std::move(body.get().body());
    reusable = body.keep_alive();
  }
  release_body_room(ex.conn->buffer);
  co_return response;
}

namespace {

asio::awaitable<error_code> write_request(ClientConnection& c, const std::string& head,
                                          std::string_view body, std::size_t& written) {
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(head), asio::buffer(body)};
  error_code ec;
  if (c.tls) {
    written =
        co_await asio::async_write(*c.tls, buffers, asio::redirect_error(asio::use_awaitable, ec));
  } else {
    written = co_await asio::async_write(c.socket, buffers,
                                         asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return ec;
}

// The exchange itself, as a free coroutine holding its client's state alive.
asio::awaitable<HttpResult<HttpResponse>> run_exchange(std::shared_ptr<HttpClientImpl> impl,
                                                       HttpRequest request, SseSink sink,
                                                       std::shared_ptr<HttpAbort> abort,
                                                       HeadSink on_head) {
  std::optional<HttpUrl> url = impl->url_of(request.url);
  if (!url) co_return HttpError{HttpFailure::bad_url, TlsFailure::none, "not an http(s) URL"};
  auto head = request_head(request, *url);
  if (!head) co_return make_error(HttpFailure::bad_request, *url, "a header cannot be sent");
  if (abort && abort->aborted()) co_return stopped(Stop::cancelled, *url);
  if (impl->closed) co_return stopped(Stop::client_closed, *url);
  const HttpClientOptions& options = impl->options;
  const std::string origin = url->origin();
  auto ex = std::make_shared<Exchange>(impl->io);
  ExchangeScope scope(*impl, ex, abort);
  const auto start = core::Clock::now();
  ex->deadline = start + options.request_deadline;
  for (bool retry = false;; retry = true) {
    ex->conn = retry ? nullptr : impl->take_idle(origin);
    const bool reused = ex->conn != nullptr;
    if (!reused) {
      ex->connect_by = core::Clock::now() + options.connect_timeout;
      ex->watch();
      auto conn = co_await impl->connect(*ex, *url);
      if (!conn) co_return conn.error();
      ex->connect_by = kNever;
    }
    ex->idle = options.read_idle_timeout;
    ex->last_read = core::Clock::now();
    ex->watch();
    std::size_t written = 0;
    const error_code ec = co_await write_request(*ex->conn, *head, request.payload(), written);
    if (ex->stop != Stop::none) co_return stopped(ex->stop, *url);
    if (!ec) break;
    ex->conn->close();
    // A kept-alive connection that failed before taking a byte costs nothing: one fresh try.
    if (!reused || written > 0) co_return io_failure(ec, *url, 0, 0);
  }
  bool reusable = false;
  auto response = co_await impl->read_response(*ex, *url, sink, on_head, reusable);
  ex->timer.cancel();
  if (response && reusable && ex->stop == Stop::none) {
    impl->put_idle(origin, std::move(ex->conn));
  } else {
    ex->conn->close();
  }
  co_return response;
}

}  // namespace

HttpClient::HttpClient(asio::io_context& io, HttpClientOptions options)
    : impl_(std::make_shared<HttpClientImpl>(io, std::move(options))) {}

HttpClient::~HttpClient() { impl_->shutdown(); }

asio::awaitable<HttpResult<HttpResponse>> HttpClient::exchange(HttpRequest request, SseSink sink,
                                                               std::shared_ptr<HttpAbort> abort,
                                                               HeadSink head) {
  return run_exchange(impl_, std::move(request), std::move(sink), std::move(abort),
                      std::move(head));
}

std::size_t HttpClient::open_connections() const {
  std::size_t open = 0;
  for (const auto& [origin, list] : impl_->idle) open += list.size();
  for (const Exchange* ex : impl_->active) {
    if (ex->conn && ex->conn->socket.is_open()) ++open;
  }
  return open;
}

std::size_t HttpClient::connections_opened() const { return impl_->opened; }

void HttpAbort::cancel() {
  if (aborted_) return;
  aborted_ = true;
  if (callback_) std::exchange(callback_, nullptr)();
}

void HttpAbort::on_abort(std::function<void()> callback) {
  callback_ = std::move(callback);
  if (aborted_ && callback_) std::exchange(callback_, nullptr)();
}

std::string_view failure_name(HttpFailure failure) {
  switch (failure) {
    case HttpFailure::bad_url:
      return "bad_url";
    case HttpFailure::bad_request:
      return "bad_request";
    case HttpFailure::resolve_failed:
      return "resolve_failed";
    case HttpFailure::connect_failed:
      return "connect_failed";
    case HttpFailure::connect_timeout:
      return "connect_timeout";
    case HttpFailure::tls_failed:
      return "tls_failed";
    case HttpFailure::read_timeout:
      return "read_timeout";
    case HttpFailure::too_large:
      return "too_large";
    case HttpFailure::bad_response:
      return "bad_response";
    case HttpFailure::closed:
      return "closed";
    case HttpFailure::cancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string_view tls_failure_name(TlsFailure failure) {
  switch (failure) {
    case TlsFailure::none:
      return "none";
    case TlsFailure::certificate_untrusted:
      return "certificate_untrusted";
    case TlsFailure::certificate_expired:
      return "certificate_expired";
    case TlsFailure::hostname_mismatch:
      return "hostname_mismatch";
    case TlsFailure::protocol_version:
      return "protocol_version";
    case TlsFailure::handshake_failed:
      return "handshake_failed";
  }
  return "unknown";
}

}  // namespace sluice::transport
