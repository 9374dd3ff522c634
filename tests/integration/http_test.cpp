// The Streamable HTTP front end (`sluice serve --transport http`) driven over raw loopback
// sockets: the session lifecycle, JSON and SSE answers, resumability, health and metrics, the
// singleton lock, cancellation and an orderly teardown. Refusals and limits are in
// http_refusals_test.cpp.
#include "http_fixture.hpp"

namespace sluice::test {
namespace {
// --- the happy path --------------------------------------------------------------------

TEST_F(HttpFrontEnd, InitializeOpensASessionAndACallAnswersAsJson) {
  start();
  auto init = post(rpc("1", "initialize", kInitParams), headers());
  ASSERT_EQ(init.status, 200) << init.all();
  EXPECT_EQ(init.header("Content-Type").value_or("").rfind("application/json", 0), 0u);
  auto sid = init.header("Mcp-Session-Id").value_or("");
  EXPECT_GE(sid.size(), 16u) << sid;
  EXPECT_TRUE(visible_ascii(sid)) << sid;
  auto v = bj::parse(init.body);
  EXPECT_EQ(v.at("id"), 1);
  EXPECT_EQ(v.at("result").at("protocolVersion"), "2025-11-25");

  auto note = post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", headers(sid));
  EXPECT_EQ(note.status, 202) << note.all();
  EXPECT_TRUE(note.body.empty()) << note.body;

  auto call = post(invoke_echo("\"call-1\"", "hello over http"), headers(sid));
  ASSERT_EQ(call.status, 200) << call.all();
  EXPECT_EQ(call.header("Content-Type").value_or("").rfind("application/json", 0), 0u);
  EXPECT_EQ(bj::parse(call.body).at("id"), "call-1");
  EXPECT_EQ(result_text(call.body), "hello over http");

  // A second session is independent of the first.
  auto other = initialize();
  EXPECT_NE(other, sid);
  expect_serving();
}

TEST_F(HttpFrontEnd, ExposeAllCallsTheDownstreamToolByItsPrefixedName) {
  start({"--expose", "all"});
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto list = post(rpc("3", "tools/list", "{}"), headers(sid));
  ASSERT_EQ(list.status, 200) << list.all();
  std::vector<std::string> names;
  auto listed = bj::parse(list.body);
  for (const auto& t : listed.at("result").at("tools").as_array()) {
    names.emplace_back(t.at("name").as_string());
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "fx__echo"), names.end());
  auto call = post(rpc("4", "tools/call", R"({"name":"fx__echo","arguments":{"text":"direct"}})"),
                   headers(sid));
  ASSERT_EQ(call.status, 200) << call.all();
  EXPECT_EQ(result_text(call.body), "direct");
  expect_serving();
}

TEST_F(HttpFrontEnd, RequestsOnOneKeepAliveConnectionAreAllAnswered) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  HttpConnection c(port_);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.send(http_request("POST", "/mcp", headers(sid),
                                    invoke_echo(std::to_string(i), "ka" + std::to_string(i)))));
    auto r = c.read_response();
    ASSERT_TRUE(r.has_value()) << "request " << i << " on the same connection";
    EXPECT_EQ(r->status, 200) << r->all();
    EXPECT_EQ(result_text(r->body), "ka" + std::to_string(i));
  }
  expect_serving();
}

TEST_F(HttpFrontEnd, AnEventStreamAcceptGetsAPrimingEventThenTheResponse) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto r = post(invoke_echo("7", "streamed"), headers(sid, "application/json, text/event-stream"));
  ASSERT_EQ(r.status, 200) << r.all();
  EXPECT_EQ(r.header("Content-Type").value_or("").rfind("text/event-stream", 0), 0u) << r.head;
  auto events = parse_sse(r.body);
  ASSERT_EQ(events.size(), 2u) << r.body;
  ASSERT_TRUE(events[0].id.has_value()) << "the priming event carries an id";
  EXPECT_FALSE(events[0].id->empty());
  EXPECT_TRUE(events[0].data.empty()) << events[0].data;
  EXPECT_EQ(events[1].event, "message");
  ASSERT_TRUE(events[1].id.has_value());
  EXPECT_NE(*events[1].id, *events[0].id);
  auto msg = bj::parse(events[1].data);
  EXPECT_EQ(msg.at("id"), 7);
  EXPECT_EQ(result_text(events[1].data), "streamed");
  expect_serving();
}

// An answer larger than any socket send buffer leaves in part at once and in part as the
// client reads: it arrives whole and in order, as JSON and as an event stream.
TEST_F(HttpFrontEnd, AnAnswerLargerThanTheSocketBufferArrivesWhole) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  std::string text;
  text.reserve(6u << 20);
  for (std::size_t i = 0; text.size() < (6u << 20); ++i) text += std::to_string(i) + ',';
  // A client with a small receive buffer: the answer cannot all be written at once.
  auto post_slowly = [&](const std::string& body, const Headers& h) {
    HttpConnection c(port_);
    c.limit_receive_buffer(16 * 1024);
    EXPECT_TRUE(c.send(http_request("POST", "/mcp", h, body)));
    return c.read_response().value_or(HttpResponse{});
  };
  auto json = post_slowly(invoke_echo("1", text), headers(sid));
  ASSERT_EQ(json.status, 200) << json.head;
  EXPECT_TRUE(result_text(json.body) == text) << "the JSON answer differs from what was sent";
  auto sse =
      post_slowly(invoke_echo("2", text), headers(sid, "application/json, text/event-stream"));
  ASSERT_EQ(sse.status, 200) << sse.head;
  auto events = parse_sse(sse.body);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(result_text(events[1].data) == text) << "the streamed answer differs";
  expect_serving();
}

TEST_F(HttpFrontEnd, ProgressOfACallArrivesOnItsStreamBeforeTheResponse) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto r = post(rpc("8", "tools/call",
                    R"({"name":"gateway.invoke","_meta":{"progressToken":"tok-1"},)"
                    R"("arguments":{"tool_id":"fx::progress","arguments":{"steps":3}}})"),
                headers(sid, "text/event-stream, application/json"));
  ASSERT_EQ(r.status, 200) << r.all();
  auto events = parse_sse(r.body);
  ASSERT_EQ(events.size(), 5u) << r.body;  // priming, 3 progress, the response
  std::set<std::string> ids;
  for (const auto& e : events) {
    ASSERT_TRUE(e.id.has_value()) << r.body;
    ids.insert(*e.id);
  }
  EXPECT_EQ(ids.size(), events.size()) << "event ids are unique";
  for (int i = 1; i <= 3; ++i) {
    auto p = bj::parse(events[static_cast<std::size_t>(i)].data);
    EXPECT_EQ(p.at("method"), "notifications/progress");
    EXPECT_EQ(p.at("params").at("progressToken"), "tok-1");
    EXPECT_EQ(p.at("params").at("progress"), i);
  }
  EXPECT_EQ(result_text(events[4].data), "progress sent");
  expect_serving();
}

// --- resumability ----------------------------------------------------------------------

TEST_F(HttpFrontEnd, ACompletedCallStreamIsReplayedAfterItsPrimingEvent) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto r = post(invoke_echo("\"r-1\"", "replay me"),
                headers(sid, "text/event-stream, application/json"));
  ASSERT_EQ(r.status, 200) << r.all();
  auto events = parse_sse(r.body);
  ASSERT_EQ(events.size(), 2u) << r.body;
  ASSERT_TRUE(events[0].id && events[1].id);

  Headers h{{"Host", host()},
            {"Accept", "text/event-stream"},
            {"Mcp-Session-Id", sid},
            {"Last-Event-ID", *events[0].id}};
  HttpConnection c(port_);
  ASSERT_TRUE(c.send(http_request("GET", "/mcp", h)));
  auto head = c.read_head();
  ASSERT_TRUE(head.has_value());
  ASSERT_EQ(head->status, 200) << head->head;
  EXPECT_EQ(head->header("Content-Type").value_or("").rfind("text/event-stream", 0), 0u);
  std::optional<SseEvent> replayed;
  for (int i = 0; i < 16 && !replayed; ++i) {  // bounded: the replay buffer holds a few events
    auto e = c.read_event();
    if (!e) break;
    if (e->data.find("r-1") != std::string::npos) replayed = e;
  }
  ASSERT_TRUE(replayed.has_value()) << "the response was not replayed";
  EXPECT_EQ(replayed->data, events[1].data) << "the replay is byte-exact";
  EXPECT_EQ(replayed->id, events[1].id);
  expect_serving();
}

// Sends a gateway.invoke of fx::slow (`ms` long) on `c` with `h` and reads its stream's head
// and priming event: that event, or nullopt (the failure recorded).
std::optional<SseEvent> open_slow_call(HttpConnection& c, const Headers& h, int ms) {
  std::string call =
      rpc("\"slow-1\"", "tools/call",
          R"({"name":"gateway.invoke","arguments":{"tool_id":"fx::slow","arguments":)"
          R"({"ms":)" +
              std::to_string(ms) + "}}}");
  EXPECT_TRUE(c.send(http_request("POST", "/mcp", h, call)));
  auto head = c.read_head();
  EXPECT_TRUE(head && head->status == 200);
  if (!head || head->status != 200) return std::nullopt;
  auto priming = c.read_event();
  EXPECT_TRUE(priming && priming->id) << "the call's stream opens with its priming event";
  if (!priming || !priming->id) return std::nullopt;
  return priming;
}

// A call that takes a while: its head and priming event leave once the short first-event
// wait is over, while it still runs (so the client can resume from then on), not with its
// answer. Ordered by state: the call is still pending when the priming event has arrived.
TEST_F(HttpFrontEnd, ASlowCallsHeadAndPrimingEventLeaveWhileItRuns) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  // The server runs first: a call waiting for its server to start is not listed as pending.
  ASSERT_EQ(post(invoke_echo("1", "started"), headers(sid)).status, 200);
  HttpConnection c(port_);
  auto priming = open_slow_call(c, headers(sid, "text/event-stream"), 2000);
  ASSERT_TRUE(priming);
  EXPECT_EQ(priming->data, "");
  auto pending = post(rpc("2", "tools/call", R"({"name":"gateway.list_pending","arguments":{}})"),
                      headers(sid));
  ASSERT_EQ(pending.status, 200) << pending.all();
  auto listed = bj::parse(pending.body).at("result").at("structuredContent");
  EXPECT_EQ(listed.at("count"), 1) << "the head and priming event waited for the answer";
}

TEST_F(HttpFrontEnd, ACallWhoseStreamBrokeIsResumedAndItsResponseArrives) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  std::string priming_id;
  {
    HttpConnection c(port_);
    auto priming = open_slow_call(c, headers(sid, "text/event-stream"), 1000);
    ASSERT_TRUE(priming);
    priming_id = *priming->id;
  }  // the connection breaks; the call goes on
  HttpConnection again(port_);
  ASSERT_TRUE(again.send(http_request("GET", "/mcp",
                                      {{"Host", host()},
                                       {"Accept", "text/event-stream"},
                                       {"Mcp-Session-Id", sid},
                                       {"Last-Event-ID", priming_id}})));
  auto head = again.read_head();
  ASSERT_TRUE(head.has_value());
  ASSERT_EQ(head->status, 200) << head->head;
  std::optional<SseEvent> response;
  for (int i = 0; i < 16 && !response; ++i) {
    auto e = again.read_event();
    if (!e) break;
    if (e->data.find("slow-1") != std::string::npos) response = e;
  }
  ASSERT_TRUE(response.has_value()) << "the response never arrived on the resumed stream";
  EXPECT_EQ(result_text(response->data), "slept 1000 ms");
  // An id this server never issued is refused without being echoed.
  auto bad = exchange("GET", "/mcp",
                      {{"Host", host()},
                       {"Accept", "text/event-stream"},
                       {"Mcp-Session-Id", sid},
                       {"Last-Event-ID", kSentinel}});
  EXPECT_GE(bad.status, 400) << bad.all();
  EXPECT_LT(bad.status, 500) << bad.all();
  EXPECT_EQ(bad.all().find(kSentinel), std::string::npos) << bad.all();
  sentinels_.insert(kSentinel);
  expect_serving();
}

TEST_F(HttpFrontEnd, ASecondStandaloneStreamIsAConflict) {
  start({"--expose", "all"});
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  Headers h{{"Host", host()}, {"Accept", "text/event-stream"}, {"Mcp-Session-Id", sid}};
  HttpConnection first(port_);
  ASSERT_TRUE(first.send(http_request("GET", "/mcp", h)));
  auto head = first.read_head();
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200) << head->head;
  HttpConnection second(port_);
  ASSERT_TRUE(second.send(http_request("GET", "/mcp", h)));
  auto second_head = second.read_head();
  ASSERT_TRUE(second_head.has_value());
  EXPECT_EQ(second_head->status, 409) << second_head->head;
  // The standalone stream carries server-initiated notifications.
  auto call =
      post(rpc("9", "tools/call", R"({"name":"fx__list_changed","arguments":{}})"), headers(sid));
  EXPECT_EQ(call.status, 200) << call.all();
  std::optional<SseEvent> changed;
  for (int i = 0; i < 16 && !changed; ++i) {
    auto e = first.read_event();
    if (!e) break;
    if (e->data.find("notifications/tools/list_changed") != std::string::npos) changed = e;
  }
  EXPECT_TRUE(changed.has_value()) << "list_changed never reached the standalone stream";
  expect_serving();
}

// --- health and metrics ----------------------------------------------------------------

TEST_F(HttpFrontEnd, HealthShowsServerNamesOnlyWithTheToken) {
  start({"--auth-token", "tok-health-5b2"}, "quietfixture");
  auto anon = exchange("GET", "/health", {{"Host", host()}});
  ASSERT_EQ(anon.status, 200) << anon.all();
  EXPECT_EQ(bj::parse(anon.body).at("status"), "ok");
  EXPECT_EQ(anon.body.find("quietfixture"), std::string::npos) << anon.body;
  auto full =
      exchange("GET", "/health", {{"Host", host()}, {"Authorization", "Bearer tok-health-5b2"}});
  ASSERT_EQ(full.status, 200) << full.all();
  EXPECT_NE(full.body.find("quietfixture"), std::string::npos) << full.body;
  auto wrong = exchange("GET", "/health",  // refused or the summary, never the details
                        {{"Host", host()}, {"Authorization", std::string("Bearer ") + kSentinel}});
  EXPECT_EQ(wrong.all().find(kSentinel), std::string::npos);
  EXPECT_EQ(wrong.body.find("quietfixture"), std::string::npos) << wrong.body;
  sentinels_.insert(kSentinel);
  token_ = "tok-health-5b2";
  expect_serving();
}

TEST_F(HttpFrontEnd, MetricsNeedTheTokenWhenOneIsConfigured) {
  start({"--auth-token", "tok-metrics-3d7"});
  auto anon = exchange("GET", "/metrics", {{"Host", host()}});
  EXPECT_EQ(anon.status, 401) << anon.all();
  EXPECT_EQ(anon.body.find("sluice_"), std::string::npos) << anon.body;
  auto m =
      exchange("GET", "/metrics", {{"Host", host()}, {"Authorization", "Bearer tok-metrics-3d7"}});
  ASSERT_EQ(m.status, 200) << m.all();
  EXPECT_NE(m.body.find("\nsluice_"), std::string::npos) << m.body;
  token_ = "tok-metrics-3d7";
  expect_serving();
}

TEST_F(HttpFrontEnd, MetricsAreOpenWithoutAToken) {
  start();
  auto before = exchange("GET", "/metrics", {{"Host", host()}});
  ASSERT_EQ(before.status, 200) << before.all();
  EXPECT_EQ(before.header("Content-Type").value_or("").rfind("text/plain", 0), 0u) << before.head;
  bool metric_line = false;
  std::size_t pos = 0;
  while (pos < before.body.size()) {
    auto nl = before.body.find('\n', pos);
    std::string line = before.body.substr(pos, nl == std::string::npos ? nl : nl - pos);
    if (line.rfind("sluice_", 0) == 0) metric_line = true;
    pos = nl == std::string::npos ? before.body.size() : nl + 1;
  }
  EXPECT_TRUE(metric_line) << before.body;
  expect_serving();
}

// --- process lifetime ------------------------------------------------------------------

TEST_F(HttpFrontEnd, ASecondInstanceOnTheSameStateDirExits3AndTheFirstKeepsServing) {
  start();
  auto second = launch({}, "fx", "port2");
  auto code = second->wait_exit(kGuard);
  EXPECT_EQ(code, 3);
  if (!code) {  // it is serving beside the first: stop it
    second->signal(SIGTERM);
    second->wait_exit(kGuard);
  }
  second->join_stderr();
  EXPECT_NE(second->stderr_text().find("already running"), std::string::npos)
      << second->stderr_text();
  EXPECT_FALSE(fs::exists(dir_.path() / "port2"));
  second.reset();
  expect_serving();
}

TEST_F(HttpFrontEnd, ALockLeftByAKilledInstanceDoesNotBlockTheNext) {
  start();
  sluice_->signal(SIGKILL);
  EXPECT_TRUE(sluice_->wait_exit(kGuard).has_value());
  sluice_.reset();
  fs::remove(dir_.path() / "port");
  start();
  expect_serving();
}

TEST_F(HttpFrontEnd, SigtermEndsOpenStreamsAndCallsAndLeavesNoChildBehind) {
  // A header timeout far beyond the guard: only the shutdown can close idle connections.
  start({"--http-header-timeout-ms", "600000"});
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  // An idle keep-alive connection (one request answered, no next one) and a half-sent head.
  HttpConnection idle(port_);
  ASSERT_TRUE(idle.send(http_request("POST", "/mcp", headers(sid), invoke_echo("1", "child up"))));
  auto echo = idle.read_response();
  ASSERT_TRUE(echo && echo->status == 200);
  EXPECT_EQ(result_text(echo->body), "child up");
  EXPECT_FALSE(processes_with_marker(marker_).empty()) << "the fixture runs";
  HttpConnection partial(port_);
  ASSERT_TRUE(partial.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  // A standalone stream and a long call stay open while sluice is told to stop.
  HttpConnection stream(port_);
  ASSERT_TRUE(stream.send(
      http_request("GET", "/mcp",
                   {{"Host", host()}, {"Accept", "text/event-stream"}, {"Mcp-Session-Id", sid}})));
  auto head = stream.read_head();
  ASSERT_TRUE(head && head->status == 200);
  HttpConnection slow(port_);
  ASSERT_TRUE(slow.send(http_request(
      "POST", "/mcp", headers(sid, "text/event-stream"),
      rpc("2", "tools/call",
          R"({"name":"gateway.invoke","arguments":{"tool_id":"fx::slow","arguments":{"ms":600000},)"
          R"("options":{"timeout_ms":600000}}})"))));
  auto slow_head = slow.read_head();
  ASSERT_TRUE(slow_head && slow_head->status == 200);
  stop_and_expect_clean_exit();
  EXPECT_TRUE(idle.wait_closed(kGuard));
  EXPECT_TRUE(partial.wait_closed(kGuard));
  EXPECT_TRUE(stream.wait_closed(kGuard));
  EXPECT_TRUE(slow.wait_closed(kGuard));
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
}

TEST_F(HttpFrontEnd, EndingASessionCancelsItsCallAndClosesItsStream) {
  // Short idle expiry: a second, idle session's expiry shows that a sweep has run.
  start({"--session-idle-ms", "300"});
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  // The fixture's gate blocks (the whole fixture) until its file appears.
  auto file = [&](const std::string& name) { return (dir_.path() / name).string(); };
  HttpConnection call(port_);
  ASSERT_TRUE(call.send(http_request(
      "POST", "/mcp", headers(sid, "text/event-stream"),
      rpc("2", "tools/call",
          R"({"name":"gateway.invoke","arguments":{"tool_id":"fx::gate","arguments":{"path":")" +
              file("gate.open") + R"(","marker":")" + file("gate.done") + R"(","started":")" +
              file("gate.started") + R"("}}})"))));
  auto head = call.read_head();
  ASSERT_TRUE(head && head->status == 200);
  auto priming = call.read_event();
  ASSERT_TRUE(priming.has_value()) << "the call's stream opens with its priming event";
  ASSERT_TRUE(wait_file(file("gate.started"))) << "the call reached the downstream";
  EXPECT_EQ(end_session(sid).status, 204);
  // The stream ends (with or without a final message) although the call has not answered.
  bool ended = false;
  for (int i = 0; i < 8 && !ended; ++i) {
    if (!call.read_event(kGuard)) ended = true;
  }
  EXPECT_TRUE(ended && (call.body_done() || call.wait_closed(kGuard)))
      << "the call's stream outlived its session";
  // The cancelled call keeps its permit until the downstream answers (the slot belongs to
  // the work), so the ended session is kept (retired) until then, and released after.
  auto retired = [&](int n) {
    auto m = exchange("GET", "/metrics", {{"Host", host()}});
    return m.body.find("\nsluice_http_sessions_retired " + std::to_string(n) + "\n") !=
           std::string::npos;
  };
  ASSERT_FALSE(initialize().empty());
  auto expiry_deadline = std::chrono::steady_clock::now() + kGuard;
  bool swept = false;
  while (!swept && std::chrono::steady_clock::now() < expiry_deadline) {
    auto m = exchange("GET", "/metrics", {{"Host", host()}});
    swept = m.body.find("\nsluice_http_sessions_expired_total 1\n") != std::string::npos;
    if (!swept) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(swept) << "the idle session never expired";
  EXPECT_TRUE(retired(1)) << "the ended session was released while its call held a permit";
  std::ofstream(file("gate.open")) << "";
  EXPECT_TRUE(wait_file(file("gate.done")));
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  bool released = false;
  while (!released && std::chrono::steady_clock::now() < deadline) {
    released = retired(0);
    if (!released) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(released) << "the ended session was never released after its call ended";
  expect_serving();
}

// C4 over HTTP: a request the client cancels gets no response, and its POST is not left
// hanging: in JSON mode it is accepted (202, no body), an SSE stream ends without a
// response event; the id can be used again and the session stays idle-expirable.
TEST_F(HttpFrontEnd, ACancelledRequestEndsItsPostWithoutAResponse) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto file = [&](const std::string& name) { return (dir_.path() / name).string(); };
  for (std::string accept : {"application/json", "text/event-stream"}) {
    SCOPED_TRACE(accept);
    const std::string tag = accept == "application/json" ? "json" : "sse";
    HttpConnection call(port_);
    ASSERT_TRUE(call.send(http_request(
        "POST", "/mcp", headers(sid, accept),
        rpc("7", "tools/call",
            R"({"name":"gateway.invoke","arguments":{"tool_id":"fx::gate","arguments":{"path":")" +
                file(tag + ".open") + R"(","marker":")" + file(tag + ".done") + R"(","started":")" +
                file(tag + ".started") + R"("}}})"))));
    std::optional<HttpResponse> head;
    if (tag == "sse") {
      head = call.read_head();
      ASSERT_TRUE(head && head->status == 200);
      ASSERT_TRUE(call.read_event().has_value()) << "the priming event";
    }
    ASSERT_TRUE(wait_file(file(tag + ".started"))) << "the call reached the downstream";
    auto cancel =
        post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}})",
             headers(sid));
    EXPECT_EQ(cancel.status, 202) << cancel.all();
    if (tag == "json") {
      auto r = call.read_response();
      ASSERT_TRUE(r.has_value()) << "the cancelled request's POST was left hanging";
      EXPECT_EQ(r->status, 202) << r->all();
      EXPECT_TRUE(r->body.empty()) << r->all();
    } else {
      auto event = call.read_event();
      EXPECT_FALSE(event.has_value()) << "an event after the cancel: " << event->data;
      EXPECT_TRUE(call.body_done()) << "the cancelled request's stream did not end";
    }
    // The id is free again (the downstream still works on the abandoned call).
    auto ping = post(rpc("7", "ping"), headers(sid));
    EXPECT_EQ(ping.status, 200) << ping.all();
    std::ofstream(file(tag + ".open")) << "";
    EXPECT_TRUE(wait_file(file(tag + ".done")));
  }
  expect_serving();
}

}  // namespace
}  // namespace sluice::test
