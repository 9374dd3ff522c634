// The Streamable HTTP front end refusing bad input: every refusal with its status and
// without echoing what was sent, slow and flooding clients, and the limits. Every test ends
// by checking that sluice still answers a good request.
#include "http_fixture.hpp"

namespace sluice::test {
namespace {
// --- refusals --------------------------------------------------------------------------

TEST_F(HttpFrontEnd, MalformedJsonIsAParseErrorThatDoesNotEchoTheBody) {
  start();
  auto sid = initialize();
  auto r = post(std::string(R"({"jsonrpc":"2.0","id":1,"method":")") + kSentinel, headers(sid));
  expect_refused(r, 400);
  EXPECT_EQ(error_code(r.body), -32700) << r.body;
  EXPECT_TRUE(bj::parse(r.body).at("id").is_null());
  auto batch = post(std::string(R"([{"jsonrpc":"2.0","id":1,"method":")") + kSentinel + "\"}]",
                    headers(sid));
  expect_refused(batch, 400);
  EXPECT_EQ(error_code(batch.body), -32600) << batch.body;
  auto invalid =
      post(std::string(R"({"jsonrpc":"1.0","id":2,"method":")") + kSentinel + "\"}", headers(sid));
  expect_refused(invalid, 400);
  EXPECT_EQ(error_code(invalid.body), -32600) << invalid.body;
  expect_serving();
}

TEST_F(HttpFrontEnd, ARawLineBreakInsideAStringIsAParseError) {
  start();
  auto sid = initialize();
  // Invalid JSON (a control character inside a string), not a string with a space in it.
  for (std::string brk : {"\n", "\r", "\r\n"}) {
    SCOPED_TRACE("break of " + std::to_string(brk.size()) + " byte(s)");
    auto r = post(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":)"
                  R"("gateway.invoke","arguments":{"tool_id":"fx::echo","arguments":)"
                  R"({"text":")" +
                      std::string(kSentinel) + brk + R"(b"}}}})",
                  headers(sid));
    expect_refused(r, 400);
    EXPECT_EQ(error_code(r.body), -32700) << r.body;
  }
  // Line breaks between tokens are whitespace and fine.
  auto ok = post("{\n\"jsonrpc\":\"2.0\",\r\n\"id\":4,\n\"method\":\"ping\"}\n", headers(sid));
  EXPECT_EQ(ok.status, 200) << ok.all();
  expect_serving();
}

TEST_F(HttpFrontEnd, AWrongContentTypeIs415) {
  start();
  auto sid = initialize();
  auto h = headers(sid);
  set_header(h, "Content-Type", std::string("text/") + kSentinel);
  expect_refused(post(rpc("1", "ping"), h), 415);
  drop_header(h, "Content-Type");
  expect_refused(post(rpc("1", "ping"), h), 415);
  // Parameters on the right type are fine.
  set_header(h, "Content-Type", "application/json; charset=utf-8");
  EXPECT_EQ(post(rpc("1", "ping"), h).status, 200);
  expect_serving();
}

TEST_F(HttpFrontEnd, AContentTypeThatOnlyStartsLikeJsonIs415) {
  start();
  auto sid = initialize();
  auto h = headers(sid);
  for (const std::string& type :
       {std::string("application/json") + kSentinel, std::string("application/json-seq"),
        std::string("application/jsonl")}) {
    SCOPED_TRACE(type);
    set_header(h, "Content-Type", type);
    expect_refused(post(rpc("1", "ping"), h), 415);
  }
  expect_serving();
}

TEST_F(HttpFrontEnd, AnAcceptNamingNeitherJsonNorEventStreamIs406) {
  start();
  auto sid = initialize();
  expect_refused(post(rpc("1", "ping"), headers(sid, std::string("text/") + kSentinel)), 406);
  EXPECT_EQ(post(rpc("1", "ping"), headers(sid, "*/*")).status, 200);
  expect_serving();
}

TEST_F(HttpFrontEnd, ARequestWithoutASessionIdIs400) {
  start();
  initialize();
  expect_refused(post(rpc("1", "tools/list", "{}"), headers()), 400);
  expect_serving();
}

TEST_F(HttpFrontEnd, AnUnknownSessionIdIs404) {
  start();
  initialize();
  expect_refused(post(rpc("1", "ping"), headers(std::string(kSentinel) + "-0123456789abcdef")),
                 404);
  expect_serving();
}

TEST_F(HttpFrontEnd, AnEndedSessionIs404) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  EXPECT_EQ(end_session(sid).status, 204);
  auto r = post(rpc("1", "ping"), headers(sid));
  EXPECT_EQ(r.status, 404) << r.all();
  EXPECT_EQ(end_session(sid).status, 404);
  Headers g{{"Host", host()}, {"Accept", "text/event-stream"}, {"Mcp-Session-Id", sid}};
  EXPECT_EQ(exchange("GET", "/mcp", g).status, 404);
  expect_serving();
}

TEST_F(HttpFrontEnd, AnOversizedBodyIs413BeforeItIsRead) {
  // The cap applies to downstream messages too: room for the fixture's tools/list.
  start({"--max-message-bytes", "65536"});
  auto sid = initialize();
  std::string big =
      rpc("1", "ping", R"({"pad":")" + std::string(kSentinel) + std::string(100000, 'x') + "\"}");
  expect_refused(post(big, headers(sid)), 413);
  // A length announced over the cap is refused without sending (or reading) the body.
  auto h = headers(sid);
  set_header(h, "Content-Length", std::to_string(1u << 30));
  HttpConnection c(port_);
  ASSERT_TRUE(c.send(http_request("POST", "/mcp", h)));
  auto r = c.read_response();
  ASSERT_TRUE(r.has_value()) << "no answer to an announced 1 GiB body";
  EXPECT_EQ(r->status, 413);
  // Just under the cap is fine.
  std::string fits = rpc("1", "ping", R"({"pad":")" + std::string(60000, 'y') + "\"}");
  EXPECT_EQ(post(fits, headers(sid)).status, 200);
  expect_serving();
}

TEST_F(HttpFrontEnd, AForeignOriginIs403) {
  start();
  auto sid = initialize();
  for (const std::string& origin :
       {std::string("http://") + kSentinel + ".example", std::string("null-") + kSentinel,
        std::string("null"), std::string("http://localhost.") + kSentinel + ".example",
        std::string("http://127.0.0.1.") + kSentinel + ".example",
        std::string("http://localhost@") + kSentinel + ".example",
        std::string("ftp://localhost/") + kSentinel}) {
    SCOPED_TRACE(origin);
    auto h = headers(sid);
    h.emplace_back("Origin", origin);
    expect_refused(post(rpc("1", "ping"), h), 403);
    auto i = headers();
    i.emplace_back("Origin", origin);
    expect_refused(post(rpc("1", "initialize", kInitParams), i), 403);
  }
  for (std::string origin : {"http://localhost:5173", "https://127.0.0.1", "http://[::1]:8080"}) {
    SCOPED_TRACE(origin);
    auto h = headers(sid);
    h.emplace_back("Origin", origin);
    EXPECT_EQ(post(rpc("1", "ping"), h).status, 200);
  }
  expect_serving();
}

TEST_F(HttpFrontEnd, AnAllowedOriginIsServed) {
  start({"--allow-origin", "https://app.example.test"});
  auto sid = initialize();
  auto h = headers(sid);
  h.emplace_back("Origin", "https://app.example.test");
  EXPECT_EQ(post(rpc("1", "ping"), h).status, 200);
  set_header(h, "Origin", std::string("https://app.example.test.") + kSentinel);
  expect_refused(post(rpc("1", "ping"), h), 403);
  expect_serving();
}

TEST_F(HttpFrontEnd, AForeignHostIs403) {
  start({"--allow-host", "sluice.test"});
  auto sid = initialize();
  for (const std::string& host_value :
       {std::string(kSentinel) + ".example", std::string("localhost.") + kSentinel + ".example",
        std::string("127.0.0.1.") + kSentinel, std::string("sluice.test.") + kSentinel}) {
    SCOPED_TRACE(host_value);
    auto h = headers(sid);
    set_header(h, "Host", host_value);
    expect_refused(post(rpc("1", "ping"), h), 403);
  }
  for (const std::string& host_value :
       {std::string("localhost:") + std::to_string(port_),
        std::string("[::1]:") + std::to_string(port_), std::string("127.0.0.1"),
        std::string("sluice.test:") + std::to_string(port_)}) {
    SCOPED_TRACE(host_value);
    auto h = headers(sid);
    set_header(h, "Host", host_value);
    EXPECT_EQ(post(rpc("1", "ping"), h).status, 200);
  }
  auto h = headers(sid);
  drop_header(h, "Host");
  auto r = post(rpc("1", "ping"), h);
  EXPECT_GE(r.status, 400) << "HTTP/1.1 without Host: " << r.all();
  EXPECT_LT(r.status, 500) << r.all();
  expect_serving();
}

TEST_F(HttpFrontEnd, AMissingOrWrongBearerTokenIs401) {
  start({"--auth-token", "tok-good-8c1e"});
  for (const std::string& auth :
       {std::string(""), std::string("Bearer ") + kSentinel, std::string("Bearer tok-good-8c1"),
        std::string("Bearer tok-good-8c1e0"), std::string("Basic ") + kSentinel,
        std::string("tok-good-8c1e"), std::string("Bearer ")}) {
    SCOPED_TRACE(auth);
    Headers h{
        {"Host", host()}, {"Content-Type", "application/json"}, {"Accept", "application/json"}};
    if (!auth.empty()) h.emplace_back("Authorization", auth);
    auto r = post(rpc("1", "initialize", kInitParams), h);
    expect_refused(r, 401);
    EXPECT_EQ(r.header("WWW-Authenticate").value_or("").rfind("Bearer", 0), 0u) << r.head;
    EXPECT_FALSE(r.header("Mcp-Session-Id").has_value());
  }
  token_ = "tok-good-8c1e";
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  // The session id alone is no credential.
  Headers h{{"Host", host()},
            {"Content-Type", "application/json"},
            {"Accept", "application/json"},
            {"Mcp-Session-Id", sid}};
  expect_refused(post(rpc("1", "ping"), h), 401);
  expect_serving();
}

TEST_F(HttpFrontEnd, AnUnsupportedProtocolVersionHeaderIs400) {
  start();
  auto sid = initialize();
  auto h = headers(sid);
  h.emplace_back("MCP-Protocol-Version", kSentinel);
  expect_refused(post(rpc("1", "ping"), h), 400);
  set_header(h, "MCP-Protocol-Version", "2025-06-19");
  expect_refused(post(rpc("1", "ping"), h), 400, "2025-06-19");
  for (std::string v : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
    set_header(h, "MCP-Protocol-Version", v);
    EXPECT_EQ(post(rpc("1", "ping"), h).status, 200) << v;
  }
  expect_serving();
}

TEST_F(HttpFrontEnd, AStreamRequestWithoutEventStreamAcceptIs406) {
  start();
  auto sid = initialize();
  Headers h{{"Host", host()}, {"Accept", "application/json"}, {"Mcp-Session-Id", sid}};
  EXPECT_EQ(exchange("GET", "/mcp", h).status, 406);
  expect_serving();
}

TEST_F(HttpFrontEnd, OtherPathsAre404AndOtherMethods405) {
  start();
  auto sid = initialize();
  expect_refused(exchange("GET", std::string("/") + kSentinel, headers(sid)), 404);
  expect_refused(exchange("POST", std::string("/mcp/") + kSentinel, headers(sid), rpc("1", "ping")),
                 404);
  EXPECT_EQ(exchange("POST", "/mcpx", headers(sid), rpc("1", "ping")).status, 404);
  EXPECT_EQ(exchange("PUT", "/mcp", headers(sid), rpc("1", "ping")).status, 405);
  EXPECT_EQ(exchange("PATCH", "/mcp", headers(sid), rpc("1", "ping")).status, 405);
  expect_serving();
}

TEST_F(HttpFrontEnd, MalformedHttpIsRefusedAndTheServerKeepsServing) {
  start();
  std::string h = "Host: " + host() + "\r\n";
  std::string ct = "Content-Type: application/json\r\nAccept: application/json\r\n";
  std::vector<std::string> garbage{
      std::string(kSentinel) + "\r\n\r\n",
      "GET / HTTP/9.9\r\n" + h + "\r\n",
      "POST /mcp HTTP/1.1\r\n" + h + ct + "Content-Length: -5\r\n\r\n",
      "POST /mcp HTTP/1.1\r\n" + h + ct + "Content-Length: abc\r\n\r\n{}",
      "POST /mcp HTTP/1.1\r\n" + h + ct + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
      "POST /mcp HTTP/1.1\r\n" + h + ct +
          "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST /mcp HTTP/1.1\r\n" + h + ct + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
      "POST /mcp HTTP/1.1\r\n" + h + ct + "X-Long: " + std::string(1 << 20, 'a') + "\r\n\r\n",
      "POST /mcp HTTP/1.1\r\n" + h + ct + "X-Nul: a" + std::string(1, '\0') + "b\r\n\r\n",
      "GET /" + std::string(1 << 20, 'p') + " HTTP/1.1\r\n" + h + "\r\n",
  };
  std::string many = "POST /mcp HTTP/1.1\r\n" + h;
  for (int i = 0; i < 20000; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  garbage.push_back(many + "\r\n");
  for (std::size_t i = 0; i < garbage.size(); ++i) {
    SCOPED_TRACE("garbage case " + std::to_string(i));
    HttpConnection c(port_);
    c.send(garbage[i]);
    auto r = c.read_response();
    if (r) {
      EXPECT_GE(r->status, 400) << r->head;
      EXPECT_TRUE(r->status < 500 || r->status == 505) << r->head;
      EXPECT_EQ(r->all().find(kSentinel), std::string::npos) << r->all();
    } else {
      EXPECT_TRUE(c.wait_closed()) << "neither an answer nor a close";
    }
  }
  if (!kSanitized) {
    long rss = vm_rss_kib(sluice_->pid());
    EXPECT_GT(rss, 0);
    EXPECT_LT(rss, 64 * 1024) << "VmRSS KiB after malformed requests";
  }
  sentinels_.insert(kSentinel);
  expect_serving();
}

// --- slow and flooding clients ---------------------------------------------------------

TEST_F(HttpFrontEnd, HalfARequestLineIsClosedAfterTheHeaderTimeout) {
  start({"--http-header-timeout-ms", "300"});
  HttpConnection c(port_);
  ASSERT_TRUE(c.send("POST /mc"));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.wait_closed(kGuard)) << "the connection was never closed";
  // Well under the 10 s default: the flag is what closed it.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  expect_serving();
}

TEST_F(HttpFrontEnd, TricklingHeadersDoNotExtendTheHeaderTimeout) {
  start({"--http-header-timeout-ms", "300"});
  HttpConnection c(port_);
  std::string request =
      http_request("GET", "/health", {{"Host", host()}, {"X-Pad", std::string(200, 'a')}});
  auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  // One byte, then up to 50 ms of waiting for the close, per round: about 12 s for the
  // whole head, so a timer restarted by each byte cannot close it within 5 s.
  for (std::size_t i = 0; i < request.size() - 4 && !closed; ++i) {
    if (!c.send(request.substr(i, 1))) closed = true;
    if (!closed) closed = c.wait_closed(50ms);
  }
  if (!closed) closed = c.wait_closed(kGuard);
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s) << "each byte restarted the timer";
  expect_serving();
}

TEST_F(HttpFrontEnd, AStalledBodyIsClosedAfterTheBodyTimeout) {
  start({"--http-body-timeout-ms", "300"});
  auto sid = initialize();
  auto h = headers(sid);
  set_header(h, "Content-Length", "100");
  HttpConnection c(port_);
  ASSERT_TRUE(c.send(http_request("POST", "/mcp", h) + R"({"jsonrpc")"));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.wait_closed(kGuard)) << "the connection was never closed";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  expect_serving();
}

TEST_F(HttpFrontEnd, AFloodOfSessionsIsCappedAndMemoryStaysBounded) {
  start({"--max-sessions", "8"});
  std::vector<std::string> sessions;
  int refused = 0;
  for (int i = 0; i < 50; ++i) {
    auto r = post(rpc(std::to_string(i), "initialize", kInitParams), headers());
    if (i < 8) {
      ASSERT_EQ(r.status, 200) << "initialize " << i << ": " << r.all();
      sessions.push_back(r.header("Mcp-Session-Id").value_or(""));
    } else {
      EXPECT_EQ(r.status, 503) << "initialize " << i << ": " << r.all();
      EXPECT_TRUE(r.header("Retry-After").has_value()) << r.head;
      EXPECT_FALSE(r.header("Mcp-Session-Id").has_value()) << r.head;
      refused += r.status == 503;
    }
  }
  EXPECT_EQ(refused, 42);
  if (!kSanitized) {
    long rss = vm_rss_kib(sluice_->pid());
    EXPECT_GT(rss, 0);
    EXPECT_LT(rss, 64 * 1024) << "VmRSS KiB with 8 sessions after 50 initializes";
  }
  // The sessions that got in still work.
  EXPECT_EQ(post(rpc("1", "ping"), headers(sessions.front())).status, 200);
  for (const auto& s : sessions) EXPECT_EQ(end_session(s).status, 204);
  expect_serving();
  for (int i = 0; i < 8; ++i) EXPECT_FALSE(initialize().empty()) << "after the DELETEs, " << i;
  EXPECT_EQ(post(rpc("1", "initialize", kInitParams), headers()).status, 503);
}

TEST_F(HttpFrontEnd, ABurstOverTheRateLimitGets429PerClientAddress) {
  start({"--rate-limit", "5", "--rate-limit-loopback"});
  int ok = 0, limited = 0;
  for (int i = 0; i < 50; ++i) {
    auto r = exchange("GET", "/health", {{"Host", host()}});
    if (r.status == 200) ++ok;
    if (r.status == 429) {
      ++limited;
      EXPECT_TRUE(r.header("Retry-After").has_value()) << r.head;
    }
    EXPECT_TRUE(r.status == 200 || r.status == 429) << r.all();
  }
  EXPECT_GT(ok, 0);
  EXPECT_GE(limited, 20) << "a burst of 50 at 5/s (bursts up to 10)";
  // Another client address is not limited by this one's burst...
  auto other = exchange("GET", "/health", {{"Host", host()}}, "", "127.0.0.2");
  EXPECT_EQ(other.status, 200) << other.all();
  // ...and this one is served again once its budget refills (bounded wait on that state).
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  int status = 0;
  while (status != 200 && std::chrono::steady_clock::now() < deadline) {
    status = exchange("GET", "/health", {{"Host", host()}}).status;
    if (status != 200) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(status, 200);
  expect_serving("127.0.0.3");
}

TEST_F(HttpFrontEnd, LoopbackClientsShareOneAddressSoTheRateLimitLeavesThemAlone) {
  // The same burst as above without --rate-limit-loopback: every local agent is 127.0.0.1,
  // and one busy one must not throttle the others.
  start({"--rate-limit", "5"});
  for (int i = 0; i < 50; ++i) {
    auto r = exchange("GET", "/health", {{"Host", host()}});
    ASSERT_EQ(r.status, 200) << i << r.all();
  }
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(post(rpc(std::to_string(i), "ping"), headers(sid)).status, 200) << i;
  }
}

TEST_F(HttpFrontEnd, AnIdleSessionExpiresAndIsThen404) {
  start({"--session-idle-ms", "300"});
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  // Wait on the session gauge (reading /metrics touches no session), bounded by the guard.
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    auto m = exchange("GET", "/metrics", {{"Host", host()}});
    gone = m.body.find("\nsluice_http_sessions 0\n") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(gone) << "the idle session never expired";
  EXPECT_EQ(post(rpc("1", "ping"), headers(sid)).status, 404);
  expect_serving();
}

}  // namespace
}  // namespace sluice::test
