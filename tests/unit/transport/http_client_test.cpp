// The HTTP client against a scripted loopback server: bodies, keep-alive and its pool, caps
// enforced while reading, SSE delivered as it arrives, timeouts, a server that goes away, the
// caller's abort; and the URL helpers.
#include "transport/http_client.hpp"

#include "../run_until.hpp"
#include "core/clock.hpp"
#include "core/spawn.hpp"
#include "test_http_server.hpp"
#include "transport/http_url.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::transport {
namespace {

namespace asio = boost::asio;
using test::TestConnection;
using test::TestHttpServer;
using namespace std::chrono_literals;

asio::awaitable<void> answer_hello(TestConnection& c) {
  while (auto request = co_await c.read_request()) {
    if (!co_await c.write(
            test::http_response(200, "hello", "X-Echo-Method: " + request->method + "\r\n"))) {
      break;
    }
  }
}

std::string chunk(std::string_view data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

constexpr std::string_view kStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

class HttpClientTest : public ::testing::Test {
 protected:
  HttpResult<HttpResponse> run(HttpClient& client, HttpRequest request, SseSink sink = {},
                               std::shared_ptr<HttpAbort> abort = {}, HeadSink head = {}) {
    std::optional<HttpResult<HttpResponse>> result;
    core::spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          result.emplace(co_await client.exchange(std::move(request), std::move(sink), abort,
                                                  std::move(head)));
        },
        "a test exchange");
    EXPECT_TRUE(test::run_until(io_, [&] { return result.has_value(); }));
    if (!result) return HttpError{HttpFailure::bad_response, TlsFailure::none, "no result"};
    return *result;
  }

  static HttpRequest get(std::string url) { return HttpRequest{"GET", std::move(url), {}, {}}; }

  asio::io_context io_;
};

TEST_F(HttpClientTest, ReadsAContentLengthBodyAndItsFields) {
  TestHttpServer server(io_, answer_hello);
  HttpClient client(io_, {});
  auto result = run(client, get(server.url("/a?b=1")));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->body, "hello");
  EXPECT_EQ(field(result->headers, "x-echo-method"), "GET");
}

TEST_F(HttpClientTest, ReadsAChunkedBody) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk("hel") +
                     chunk("lo") + "0\r\n\r\n");
  });
  HttpClient client(io_, {});
  auto result = run(client, HttpRequest{"POST", server.url(), {{"Content-Type", "a/b"}}, "{}"});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->status, 201);
  EXPECT_EQ(result->body, "hello");
}

TEST_F(HttpClientTest, SendsTheMethodTargetHostAndBodyOnce) {
  std::vector<test::TestRequest> seen;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    while (auto request = co_await c.read_request()) {
      seen.push_back(*request);
      co_await c.write(test::http_response(204, ""));
    }
  });
  HttpClient client(io_, {});
  HttpRequest request{"POST", server.url("/mcp?x=1"), {{"Host", "evil"}, {"A", "b"}}, "[1]"};
  ASSERT_TRUE(run(client, request));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/mcp?x=1");
  EXPECT_NE(seen[0].head.find("\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n"),
            std::string::npos);
  EXPECT_EQ(seen[0].head.find("evil"), std::string::npos);
  EXPECT_NE(seen[0].head.find("\r\nA: b\r\n"), std::string::npos);
  EXPECT_EQ(seen[0].body, "[1]");
}

TEST_F(HttpClientTest, ReusesOneKeptAliveConnectionForThreeRequests) {
  TestHttpServer server(io_, answer_hello);
  HttpClient client(io_, {});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(client, get(server.url())));
  EXPECT_EQ(server.accepted(), 1u);
  EXPECT_EQ(client.connections_opened(), 1u);
  EXPECT_EQ(client.open_connections(), 1u);
}

TEST_F(HttpClientTest, KeepsAtMostTheIdleBoundOfConnectionsPerOrigin) {
  int arrived = 0;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    while (auto request = co_await c.read_request()) {
      ++arrived;
      while (arrived < 3) co_await c.pause(1ms);
      if (!co_await c.write(test::http_response(200, "x"))) break;
    }
  });
  HttpClientOptions options;
  options.max_idle_connections = 2;
  HttpClient client(io_, options);
  int done = 0;
  for (int i = 0; i < 3; ++i) {
    core::spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          auto result = co_await client.exchange(get(server.url()));
          EXPECT_TRUE(result);
          ++done;
        },
        "a test exchange");
  }
  ASSERT_TRUE(test::run_until(io_, [&] { return done == 3; }));
  EXPECT_EQ(server.accepted(), 3u);
  EXPECT_EQ(client.open_connections(), 2u);
  ASSERT_TRUE(run(client, get(server.url())));
  EXPECT_EQ(server.accepted(), 3u);
}

TEST_F(HttpClientTest, ConnectionCloseFromTheServerMeansANewConnection) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write(test::http_response(200, "x", "Connection: close\r\n"));
    // Left open: the client must not reuse it because of the header alone.
    co_await c.read_request();
  });
  HttpClient client(io_, {});
  ASSERT_TRUE(run(client, get(server.url())));
  EXPECT_EQ(client.open_connections(), 0u);
  ASSERT_TRUE(run(client, get(server.url())));
  EXPECT_EQ(server.accepted(), 2u);
}

TEST_F(HttpClientTest, APooledConnectionTheServerClosedDoesNotCostARequest) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write(test::http_response(200, "x"));
  });  // and the server closes it
  HttpClient client(io_, {});
  ASSERT_TRUE(run(client, get(server.url())));
  ASSERT_TRUE(test::run_until(io_, [&] { return server.finished() == 1; }));
  auto second = run(client, HttpRequest{"POST", server.url(), {}, "{}"});
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(server.accepted(), 2u);
}

TEST_F(HttpClientTest, APostTheServerDroppedAfterReadingIsNeverReplayed) {
  int posts = 0;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write(test::http_response(200, "x"));
    if (co_await c.read_request()) ++posts;
  });  // closed without an answer
  HttpClient client(io_, {});
  ASSERT_TRUE(run(client, get(server.url())));
  auto second = run(client, HttpRequest{"POST", server.url(), {}, "{\"id\":1}"});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().failure, HttpFailure::closed);
  EXPECT_EQ(posts, 1);
  EXPECT_EQ(server.accepted(), 1u);
}

TEST_F(HttpClientTest, AServerThatClosesMidBodyGivesClosed) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
  });
  HttpClient client(io_, {});
  auto result = run(client, get(server.url()));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::closed);
  EXPECT_EQ(client.open_connections(), 0u);
}

TEST_F(HttpClientTest, AChunkedBodyOverTheCapIsRefusedBeforeTheServerFinishedSending) {
  constexpr std::size_t kTotal = 64u << 20;
  std::size_t sent = 0;
  bool sender_done = false;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    const std::string piece = chunk(std::string(64 * 1024, 'a'));
    bool ok = co_await c.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (std::size_t body = 0; ok && body < kTotal; body += 64 * 1024) ok = co_await c.write(piece);
    sent = c.bytes_written();
    sender_done = true;
  });
  HttpClientOptions options;
  options.max_body_bytes = 1u << 20;
  HttpClient client(io_, options);
  auto result = run(client, get(server.url()));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::too_large);
  ASSERT_TRUE(test::run_until(io_, [&] { return sender_done; }));
  EXPECT_LT(sent, kTotal);
  EXPECT_EQ(client.open_connections(), 0u);
}

TEST_F(HttpClientTest, AContentLengthOverTheCapIsRefusedAtTheHead) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write("HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n");
    co_await c.read_request();
  });
  HttpClientOptions options;
  options.max_body_bytes = 1u << 20;
  HttpClient client(io_, options);
  auto result = run(client, get(server.url()));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::too_large);
}

TEST_F(HttpClientTest, AHeadOverTheCapIsRefused) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write("HTTP/1.1 200 OK\r\nX-Big: " + std::string(100 * 1024, 'h') + "\r\n\r\n");
  });
  HttpClient client(io_, {});
  auto result = run(client, get(server.url()));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::too_large);
}

TEST_F(HttpClientTest, AResponseThatIsNotHttpIsABadResponse) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write("SSH-2.0-OpenSSH\r\n\r\n");
  });
  HttpClient client(io_, {});
  auto result = run(client, get(server.url()));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::bad_response);
}

TEST_F(HttpClientTest, SseEventsReachTheSinkAsSoonAsEachIsComplete) {
  std::vector<SseEvent> events;
  bool second_sent = false;
  std::vector<bool> before_second;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write(std::string(kStreamHead) + chunk(": hello\n\nid: 1\ndata: first\n\n"));
    while (events.empty()) co_await c.pause(1ms);
    second_sent = true;
    co_await c.write(chunk("retry: 500\nid: 2\ndata: sec"));
    co_await c.pause(5ms);
    co_await c.write(chunk("ond\r\n\r\n") + "0\r\n\r\n");
    co_await c.read_request();
  });
  HttpClient client(io_, {});
  std::optional<bool> head_before_events;
  auto result = run(
      client, get(server.url()),
      [&](SseEvent e) {
        before_second.push_back(!second_sent);
        events.push_back(std::move(e));
      },
      {},
      [&](const HttpResponse& head) {
        head_before_events = events.empty() && head.status == 200 &&
                             field(head.headers, "Content-Type") == "text/event-stream";
      });
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(head_before_events, true) << "the head reaches its sink before the first event";
  EXPECT_TRUE(result->body.empty());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(before_second[0]);
  EXPECT_EQ(events[0].id, "1");
  EXPECT_EQ(events[0].data, "first");
  EXPECT_EQ(events[1].data, "second");
  EXPECT_EQ(events[1].id, "2");
  EXPECT_EQ(events[1].retry, 500ms);
  EXPECT_EQ(client.open_connections(), 1u);  // the stream ended cleanly: kept alive
}

TEST_F(HttpClientTest, AStreamIsNotBoundByTheBodyCapButEachEventIs) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write(kStreamHead);
    for (int i = 0; i < 40; ++i) co_await c.write(chunk("data: " + std::string(100, 'e') + "\n\n"));
    co_await c.write(chunk("data: " + std::string(2000, 'e') + "\n\n"));
    co_await c.read_request();
  });
  HttpClientOptions options;
  options.max_body_bytes = 1024;
  HttpClient client(io_, options);
  int count = 0;
  auto result = run(client, get(server.url()), [&](SseEvent) { ++count; });
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::too_large);
  EXPECT_EQ(count, 40);
}

TEST_F(HttpClientTest, WithoutASinkAnEventStreamIsReadWhole) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    co_await c.write(
        test::http_response(200, "data: x\n\n", "Content-Type: text/event-stream\r\n"));
  });
  HttpClient client(io_, {});
  auto result = run(client, get(server.url()));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->body, "data: x\n\n");
}

TEST_F(HttpClientTest, AnAbortMidStreamEndsTheExchangeAndTheConnectionIsNotPooled) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    // Two events in one read: the second must not reach the sink after its abort.
    bool ok = co_await c.write(std::string(kStreamHead) + chunk("data: one\n\ndata: two\n\n"));
    while (ok) {
      co_await c.pause(5ms);
      ok = co_await c.write(chunk(": still here\n"));
    }
  });
  HttpClient client(io_, {});
  auto abort = std::make_shared<HttpAbort>();
  int count = 0;
  auto result = run(
      client, get(server.url()),
      [&](SseEvent) {
        ++count;
        abort->cancel();
      },
      abort);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::cancelled);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(client.open_connections(), 0u);
}

TEST_F(HttpClientTest, AnAbortBeforeTheExchangeConnectsToNothing) {
  TestHttpServer server(io_, answer_hello);
  HttpClient client(io_, {});
  auto abort = std::make_shared<HttpAbort>();
  abort->cancel();
  auto result = run(client, get(server.url()), {}, abort);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::cancelled);
  EXPECT_EQ(client.connections_opened(), 0u);
}

TEST_F(HttpClientTest, AServerThatStallsEndsTheExchangeAtTheIdleBound) {
  core::SimulatedTime time;
  bool got_request = false;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    got_request = true;
    co_await c.read_request();  // never answers
  });
  HttpClientOptions options;
  options.read_idle_timeout = 5s;
  HttpClient client(io_, options);
  std::optional<HttpResult<HttpResponse>> result;
  core::spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        result.emplace(co_await client.exchange(get(server.url())));
      },
      "a test exchange");
  ASSERT_TRUE(test::run_until(io_, [&] { return got_request; }));
  time.advance(4s);
  io_.run_for(20ms);
  EXPECT_FALSE(result.has_value());
  time.advance(2s);
  ASSERT_TRUE(test::run_until(io_, [&] { return result.has_value(); }));
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error().failure, HttpFailure::read_timeout);
}

TEST_F(HttpClientTest, ADripFeedingServerCannotHoldARequestPastItsDeadline) {
  TestHttpServer server(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    bool ok = co_await c.write("HTTP/1.1 200 OK\r\nX-Drip: ");
    while (ok) {
      co_await c.pause(20ms);
      ok = co_await c.write("a");
    }
  });
  HttpClientOptions options;
  options.read_idle_timeout = 10s;
  options.request_deadline = 300ms;
  HttpClient client(io_, options);
  auto result = run(client, get(server.url()));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::read_timeout);
}

TEST_F(HttpClientTest, AConnectThatHangsEndsAtTheConnectBound) {
  core::SimulatedTime time;
  // A listener with a full accept queue drops the next SYN, so that connect never completes.
  TestHttpServer server(io_, answer_hello, "127.0.0.1", {}, 0, false);
  asio::ip::tcp::socket filler(io_);
  filler.connect({asio::ip::make_address("127.0.0.1"), server.port()});
  HttpClientOptions options;
  options.connect_timeout = 3s;
  HttpClient client(io_, options);
  std::optional<HttpResult<HttpResponse>> result;
  core::spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        result.emplace(co_await client.exchange(get(server.url())));
      },
      "a test exchange");
  io_.run_for(50ms);
  ASSERT_FALSE(result.has_value()) << "the connect was not held";
  time.advance(4s);
  ASSERT_TRUE(test::run_until(io_, [&] { return result.has_value(); }));
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error().failure, HttpFailure::connect_timeout);
}

TEST_F(HttpClientTest, ARefusedConnectionIsConnectFailed) {
  std::uint16_t port = 0;
  {
    TestHttpServer gone(io_, answer_hello);
    port = gone.port();
  }
  HttpClient client(io_, {});
  auto result = run(client, get("http://127.0.0.1:" + std::to_string(port) + "/?token=secret"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().failure, HttpFailure::connect_failed);
  EXPECT_EQ(result.error().message.find("secret"), std::string::npos) << "value-free";
}

TEST_F(HttpClientTest, DestroyingTheClientEndsItsExchangesAsClosed) {
  bool got_request = false;
  TestHttpServer server(io_, [&](TestConnection& c) -> asio::awaitable<void> {
    co_await c.read_request();
    got_request = true;
    co_await c.read_request();
  });
  auto client = std::make_unique<HttpClient>(io_, HttpClientOptions{});
  std::optional<HttpResult<HttpResponse>> result;
  core::spawn(
      io_,
      [&, c = client.get()]() -> asio::awaitable<void> {
        result.emplace(co_await c->exchange(get(server.url())));
      },
      "a test exchange");
  ASSERT_TRUE(test::run_until(io_, [&] { return got_request; }));
  client.reset();
  ASSERT_TRUE(test::run_until(io_, [&] { return result.has_value(); }));
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error().failure, HttpFailure::closed);
}

TEST_F(HttpClientTest, LocalhostReachesAServerOnOnlyOneOfItsAddresses) {
  for (std::string address : {"127.0.0.1", "::1"}) {
    std::unique_ptr<TestHttpServer> server;
    try {
      server = std::make_unique<TestHttpServer>(io_, answer_hello, address);
    } catch (const std::exception&) {
      std::cout << "[ SKIPPED  ] " << address << " is not available here\n";
      continue;
    }
    HttpClient client(io_, {});
    auto result = run(client, get(server->url("/", "localhost")));
    ASSERT_TRUE(result) << address << ": " << result.error().message;
    EXPECT_EQ(result->body, "hello");
  }
}

TEST_F(HttpClientTest, RefusesAUrlOrAFieldItCannotSend) {
  HttpClient client(io_, {});
  for (std::string url : {"ftp://example.com/", "http://user:pw@example.com/", "mcp", "http:/x"}) {
    auto result = run(client, get(url));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().failure, HttpFailure::bad_url) << url;
    EXPECT_EQ(result.error().message.find("user"), std::string::npos);
  }
  auto injected = run(client, HttpRequest{"GET", "http://127.0.0.1:1/", {{"A", "b\r\nC: d"}}, {}});
  ASSERT_FALSE(injected);
  EXPECT_EQ(injected.error().failure, HttpFailure::bad_request);
  auto method = run(client, HttpRequest{"GE T", "http://127.0.0.1:1/", {}, {}});
  ASSERT_FALSE(method);
  EXPECT_EQ(method.error().failure, HttpFailure::bad_request);
}

TEST(HttpUrl, ParsesHostPortAndTarget) {
  auto a = parse_http_url("HTTPS://Example.COM/a/b?x=1#frag");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "example.com");
  EXPECT_EQ(a->port, 443);
  EXPECT_EQ(a->target, "/a/b?x=1");
  EXPECT_EQ(a->host_header(), "example.com");
  auto b = parse_http_url("http://[::1]:8080");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_TRUE(b->host_is_ip);
  EXPECT_EQ(b->port, 8080);
  EXPECT_EQ(b->target, "/");
  EXPECT_EQ(b->host_header(), "[::1]:8080");
  EXPECT_EQ(b->origin(), "http://[::1]:8080");
  EXPECT_FALSE(parse_http_url("http://example.com:0/"));
  EXPECT_FALSE(parse_http_url("http://example.com:70000/"));
  EXPECT_FALSE(parse_http_url("/relative"));
}

TEST(HttpUrl, ARedirectIsResolvedAgainstTheRequestUrl) {
  HttpResponse moved{302, {{"location", "../auth?y=2"}}, {}};
  EXPECT_EQ(redirect_target("https://a.example/mcp/x", moved), "https://a.example/auth?y=2");
  moved.headers = {{"Location", "http://b.example/z#f"}};
  EXPECT_EQ(redirect_target("https://a.example/", moved), "http://b.example/z");
  moved.headers = {{"Location", "javascript:alert(1)"}};
  EXPECT_FALSE(redirect_target("https://a.example/", moved));
  HttpResponse ok{200, {{"Location", "/x"}}, {}};
  EXPECT_FALSE(redirect_target("https://a.example/", ok));
}

TEST(HttpUrl, SameOriginComparesSchemeHostAndEffectivePort) {
  EXPECT_TRUE(same_origin("https://a.example/x", "https://A.example:443/y"));
  EXPECT_FALSE(same_origin("https://a.example/", "http://a.example/"));
  EXPECT_FALSE(same_origin("https://a.example/", "https://a.example:8443/"));
  EXPECT_FALSE(same_origin("https://a.example/", "https://b.example/"));
  EXPECT_FALSE(same_origin("nonsense", "nonsense"));
}

TEST(HttpUrl, LoopbackIsLocalhostAnd127Slash8AndColonColon1) {
  for (auto url : {"http://localhost:3000/", "http://127.5.6.7/", "http://[::1]/"}) {
    EXPECT_TRUE(is_loopback_url(url)) << url;
  }
  for (auto url : {"http://10.0.0.1/", "http://localhost.evil.example/", "http://[::2]/", "x"}) {
    EXPECT_FALSE(is_loopback_url(url)) << url;
  }
}

TEST(HttpUrl, HttpsIsTheSchemeInAnyCaseOfAnAbsoluteUrl) {
  for (auto url : {"https://a.example/mcp", "HTTPS://a.example:8443/"}) {
    EXPECT_TRUE(is_https_url(url)) << url;
  }
  for (auto url : {"http://a.example/", "https:/a.example", "httpsx://a.example/", ""}) {
    EXPECT_FALSE(is_https_url(url)) << url;
  }
}

TEST(HttpUrl, AUsableUrlIsHttpOrHttpsWithAHostAndNoCredentials) {
  for (auto url : {"http://127.0.0.1:3000/mcp", "https://a.example/", "http://[::1]/"}) {
    EXPECT_TRUE(is_usable_http_url(url)) << url;
  }
  for (auto url : {"http://user:pw@127.0.0.1/", "https://token@a.example/", "ftp://a.example/",
                   "http://127.0.0.1:99999/", "http:///mcp", ""}) {
    EXPECT_FALSE(is_usable_http_url(url)) << url;
  }
}

TEST(HttpUrl, FieldsAreFoundIgnoringCase) {
  HttpFields fields{{"Content-Type", "a"}, {"content-type", "b"}};
  EXPECT_EQ(field(fields, "CONTENT-TYPE"), "a");
  EXPECT_FALSE(field(fields, "Content-Length"));
}

TEST(HttpFailureNames, EveryFailureHasAName) {
  EXPECT_EQ(failure_name(HttpFailure::too_large), "too_large");
  EXPECT_EQ(failure_name(HttpFailure::bad_request), "bad_request");
  EXPECT_EQ(tls_failure_name(TlsFailure::hostname_mismatch), "hostname_mismatch");
}

}  // namespace
}  // namespace sluice::transport
