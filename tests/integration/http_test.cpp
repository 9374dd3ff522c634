// The Streamable HTTP front end (`sluice serve --transport http`) driven over raw loopback
// sockets: the session lifecycle, JSON and SSE answers, resumability, every refusal with
// its status (and without echoing what was sent), slow and flooding clients, the singleton
// lock and an orderly teardown. Every test ends by checking that sluice still answers a
// good request, and TearDown that SIGTERM stops it with exit 0 and leaves no fixture behind.
#include "harness.hpp"
#include "http_client.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <signal.h>
#include <strings.h>

#include <algorithm>
#include <fstream>
#include <set>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr const char* kSentinel = "SENTINEL-7f3a";
constexpr const char* kInitParams = R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                                    R"("clientInfo":{"name":"http-integration","version":"1"}})";

std::string rpc(const std::string& id, const std::string& method, const std::string& params = "") {
  std::string s = R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + "\"";
  if (!params.empty()) s += R"(,"params":)" + params;
  return s + "}";
}

std::string invoke_echo(const std::string& id, const std::string& text,
                        const std::string& server = "fx") {
  return rpc(id, "tools/call",
             R"({"name":"gateway.invoke","arguments":{"tool_id":")" + server +
                 R"(::echo","arguments":{"text":")" + text + R"("}}})");
}

void set_header(Headers& h, const std::string& name, const std::string& value) {
  for (auto& [k, v] : h) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) {
      v = value;
      return;
    }
  }
  h.emplace_back(name, value);
}

void drop_header(Headers& h, const std::string& name) {
  std::erase_if(h, [&](const auto& kv) { return strcasecmp(kv.first.c_str(), name.c_str()) == 0; });
}

// The text of the first content item of a tools/call response body ("" when absent).
std::string result_text(const std::string& body) {
  auto v = bj::parse(body);
  const auto* result = v.as_object().if_contains("result");
  if (!result) return "";
  const auto& content = result->at("content").as_array();
  return content.empty() ? "" : std::string(content[0].at("text").as_string());
}

class HttpFrontEnd : public ::testing::Test {
 protected:
  // Starts sluice serving HTTP on a free port with the fixture as server `server_name`.
  void start(std::vector<std::string> flags = {}, const std::string& server_name = "fx") {
    server_ = server_name;
    for (std::size_t i = 0; i + 1 < flags.size(); ++i) {
      if (flags[i] == "--expose") expose_all_only_ = flags[i + 1] == "all";
    }
    sluice_ = launch(flags, server_name, "port");
    port_ = read_port(*sluice_, dir_.path() / "port");
    ASSERT_GT(port_, 0) << "no port file; stderr:\n" << sluice_->stderr_text();
  }

  std::unique_ptr<Sluice> launch(const std::vector<std::string>& flags,
                                 const std::string& server_name, const std::string& port_file) {
    auto cfg = dir_.write(
        "mcp.json", R"({"mcpServers":{")" + server_name + R"(":)" + fixture_entry(marker_) + "}}");
    std::vector<std::string> args{"serve",     "--transport", "http", "--host",
                                  "127.0.0.1", "--port",      "0",    "--no-discover",
                                  "--config",  cfg.string()};
    args.insert(args.end(), {"--port-file", (dir_.path() / port_file).string(), "--state-dir",
                             (dir_.path() / "state").string()});
    args.insert(args.end(), flags.begin(), flags.end());
    return std::make_unique<Sluice>(args, dir_.path(), dir_.path());
  }

  // Waits (bounded) for the port file, or for sluice to exit first; 0 when no port came.
  static int read_port(Sluice& s, const fs::path& file) {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (!fs::exists(file)) {
      if (s.wait_exit(0ms) || std::chrono::steady_clock::now() > deadline) return 0;
      std::this_thread::sleep_for(5ms);  // no event to block on for a file another process makes
    }
    std::ifstream f(file);
    int port = 0;
    f >> port;
    return port;
  }

  void TearDown() override {
    if (sluice_) stop_and_expect_clean_exit();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }

  void stop_and_expect_clean_exit() {
    sluice_->signal(SIGTERM);
    auto code = sluice_->wait_exit(kGuard);
    EXPECT_EQ(code, 0) << "SIGTERM should end sluice with exit 0";
    if (!code) {
      sluice_->signal(SIGKILL);
      sluice_->wait_exit(kGuard);
    }
    sluice_->join_stderr();
    std::string err = sluice_->stderr_text();
    if (code != 0) {
      ADD_FAILURE() << "sluice's stderr ends with:\n"
                    << err.substr(err.size() > 6000 ? err.size() - 6000 : 0);
    }
    for (const auto& s : sentinels_) {
      EXPECT_EQ(err.find(s), std::string::npos) << "sluice logged a value a client sent: " << s;
    }
    sluice_.reset();
  }

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

  // Headers of a well-formed MCP POST.
  Headers headers(const std::string& session = "",
                  const std::string& accept = "application/json") const {
    Headers h{{"Host", host()}, {"Content-Type", "application/json"}, {"Accept", accept}};
    if (!session.empty()) h.emplace_back("Mcp-Session-Id", session);
    if (!token_.empty()) h.emplace_back("Authorization", "Bearer " + token_);
    return h;
  }

  // One request on a fresh connection; status 0 when no response came within the guard.
  HttpResponse exchange(const std::string& method, const std::string& target, const Headers& h,
                        const std::string& body = "", const std::string& source = "") {
    auto r = http_exchange(port_, http_request(method, target, h, body), source);
    return r ? *r : HttpResponse{};
  }
  HttpResponse post(const std::string& body, const Headers& h) {
    return exchange("POST", "/mcp", h, body);
  }

  // initialize + notifications/initialized; returns the session id ("" on failure, with the
  // failure recorded).
  std::string initialize(const std::string& source = "") {
    auto r = exchange("POST", "/mcp", headers(), rpc("1", "initialize", kInitParams), source);
    EXPECT_EQ(r.status, 200) << r.all();
    auto sid = r.header("Mcp-Session-Id");
    EXPECT_TRUE(sid.has_value()) << r.all();
    if (r.status != 200 || !sid) return "";
    auto n = exchange("POST", "/mcp", headers(*sid),
                      R"({"jsonrpc":"2.0","method":"notifications/initialized"})", source);
    EXPECT_EQ(n.status, 202) << n.all();
    return *sid;
  }

  HttpResponse end_session(const std::string& sid, const std::string& source = "") {
    Headers h{{"Host", host()}, {"Mcp-Session-Id", sid}};
    if (!token_.empty()) h.emplace_back("Authorization", "Bearer " + token_);
    return exchange("DELETE", "/mcp", h, "", source);
  }

  // A fresh session answers a ping and a tool call; the session is ended again.
  void expect_serving(const std::string& source = "") {
    SCOPED_TRACE("sluice still serves a good request");
    std::string sid = initialize(source);
    ASSERT_FALSE(sid.empty());
    auto ping = exchange("POST", "/mcp", headers(sid), rpc("\"p\"", "ping"), source);
    EXPECT_EQ(ping.status, 200) << ping.all();
    std::string call =
        expose_all_only_
            ? rpc("2", "tools/call",
                  R"({"name":")" + server_ + R"(__echo","arguments":{"text":"still-here"}})")
            : invoke_echo("2", "still-here", server_);
    auto echo = exchange("POST", "/mcp", headers(sid), call, source);
    EXPECT_EQ(echo.status, 200) << echo.all();
    if (echo.status == 200) {
      EXPECT_EQ(result_text(echo.body), "still-here");
    }
    EXPECT_EQ(end_session(sid, source).status, 204);
  }

  // A refusal: the status, and nothing of what was sent in the head or body.
  void expect_refused(const HttpResponse& r, int status, const std::string& sentinel = kSentinel) {
    EXPECT_EQ(r.status, status) << r.all();
    EXPECT_EQ(r.all().find(sentinel), std::string::npos) << "the response echoes what was sent:\n"
                                                         << r.all();
    sentinels_.insert(sentinel);
  }

  // The JSON-RPC error code of a body (0 when it has none).
  static int64_t error_code(const std::string& body) {
    boost::system::error_code ec;
    auto v = bj::parse(body, ec);
    if (ec || !v.is_object()) return 0;
    const auto* e = v.as_object().if_contains("error");
    return e ? e->at("code").to_number<int64_t>() : 0;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
  int port_ = 0;
  std::string server_ = "fx";
  bool expose_all_only_ = false;  // --expose all: no meta-tools, only prefixed names
  std::string token_;
  std::set<std::string> sentinels_;
};

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

TEST_F(HttpFrontEnd, ACallWhoseStreamBrokeIsResumedAndItsResponseArrives) {
  start();
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  std::string priming_id;
  {
    HttpConnection c(port_);
    ASSERT_TRUE(c.send(http_request(
        "POST", "/mcp", headers(sid, "text/event-stream"),
        rpc("\"slow-1\"", "tools/call",
            R"({"name":"gateway.invoke","arguments":{"tool_id":"fx::slow","arguments":)"
            R"({"ms":1000}}})"))));
    auto head = c.read_head();
    ASSERT_TRUE(head && head->status == 200);
    auto priming = c.read_event();
    ASSERT_TRUE(priming && priming->id) << "the call's stream opens with its priming event";
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
  start({"--max-message-bytes", "4096"});
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
  std::string fits = rpc("1", "ping", R"({"pad":")" + std::string(3000, 'y') + "\"}");
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
  start({"--rate-limit", "5"});
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
