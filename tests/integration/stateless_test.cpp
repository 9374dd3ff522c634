// The 2026-07-28 (stateless) era beside the stateful one, through the real binary: over
// HTTP without a session (its _meta, its headers, its error codes and HTTP statuses), and
// over stdio without initialize.
#include "harness.hpp"
#include "http_fixture.hpp"

#include <openssl/evp.h>

namespace sluice::test {
namespace {

const std::string kMeta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                          R"("io.modelcontextprotocol/clientCapabilities":{},)"
                          R"("io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}})";

std::string base64(const std::string& text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

class Stateless : public HttpFrontEnd {
 protected:
  // The headers of a 2026-07-28 POST: no session, the revision, the method and (for a
  // call) the tool's name.
  Headers modern(const std::string& method, const std::string& name = "",
                 const std::string& version = "2026-07-28") const {
    Headers h = headers();
    if (!version.empty()) h.emplace_back("MCP-Protocol-Version", version);
    if (!method.empty()) h.emplace_back("Mcp-Method", method);
    if (!name.empty()) h.emplace_back("Mcp-Name", name);
    return h;
  }
  // A refused request: its HTTP status, and the error code with the request's own id.
  void expect_refused(const HttpResponse& r, int status, int code, int id) {
    EXPECT_EQ(r.status, status) << r.all();
    auto v = bj::parse(r.body);
    ASSERT_TRUE(v.is_object() && v.as_object().contains("error")) << "not refused: " << r.body;
    EXPECT_EQ(v.at("error").at("code"), code) << r.body;
    EXPECT_EQ(v.at("id"), id) << r.body;
  }
};

TEST_F(Stateless, ARequestWithTheNewMetaIsServedWithoutASessionAndSaysItIsComplete) {
  start({"--expose", "all"});
  // The tool's name in the Base64 form of Mcp-Name.
  auto call = post(rpc("1", "tools/call",
                       R"({"name":"fx__echo","arguments":{"text":"no session"},)" + kMeta + "}"),
                   modern("tools/call", "=?base64?" + base64("fx__echo") + "?="));
  ASSERT_EQ(call.status, 200) << call.all();
  EXPECT_FALSE(call.header("Mcp-Session-Id").has_value()) << call.all();
  auto result = bj::parse(call.body).at("result");
  EXPECT_EQ(result.at("resultType"), "complete") << call.body;
  EXPECT_EQ(result_text(call.body), "no session");

  // An echo call accepting only `accept`.
  auto echo_accepting = [&](const std::string& id, const std::string& accept) {
    Headers h = modern("tools/call", "fx__echo");
    set_header(h, "Accept", accept);
    return post(
        rpc(id, "tools/call", R"({"name":"fx__echo","arguments":{"text":"x"},)" + kMeta + "}"), h);
  };
  // A plain JSON answer too says the connection closes after it (sluice watches it for the
  // client closing, so it cannot keep it): a client reusing it would fail its next request.
  auto plain = echo_accepting("4", "application/json");
  ASSERT_EQ(plain.status, 200) << plain.all();
  EXPECT_EQ(plain.header("Connection"), std::optional<std::string>("close")) << plain.all();
  // Its SSE answer carries no event id: the revision has no resumption.
  auto streamed = echo_accepting("5", "text/event-stream");
  ASSERT_EQ(streamed.status, 200) << streamed.all();
  EXPECT_NE(streamed.body.find("event: message\ndata: "), std::string::npos) << streamed.body;
  EXPECT_EQ(streamed.body.find("id:"), std::string::npos) << streamed.body;

  auto list = post(rpc("2", "tools/list", "{" + kMeta + "}"), modern("tools/list"));
  ASSERT_EQ(list.status, 200) << list.all();
  auto listed = bj::parse(list.body).at("result");
  EXPECT_EQ(listed.at("resultType"), "complete");
  EXPECT_EQ(listed.at("ttlMs"), 0) << "the caching hints every list carries";
  EXPECT_EQ(listed.at("cacheScope"), "public");
  EXPECT_FALSE(listed.at("tools").as_array().empty());

  auto discover = post(rpc("3", "server/discover", "{" + kMeta + "}"), modern("server/discover"));
  ASSERT_EQ(discover.status, 200) << discover.all();
  auto found = bj::parse(discover.body).at("result");
  const auto& versions = found.at("supportedVersions").as_array();
  EXPECT_NE(std::find(versions.begin(), versions.end(), bj::value("2026-07-28")), versions.end());
  EXPECT_NE(std::find(versions.begin(), versions.end(), bj::value("2025-11-25")), versions.end());
  EXPECT_TRUE(found.at("capabilities").as_object().contains("tools"));
  EXPECT_EQ(found.at("_meta").at("io.modelcontextprotocol/serverInfo").at("name"), "sluice");

  // Each request had a session of its own, ended with its answer.
  auto metrics = exchange("GET", "/metrics", {{"Host", host()}});
  EXPECT_NE(metrics.body.find("\nsluice_http_sessions 0\n"), std::string::npos) << metrics.body;
  expect_serving();
}

TEST_F(Stateless, RefusalsCarryTheRevisionsCodesStatusesAndTheRequestsId) {
  start({"--expose", "all"});
  // No _meta at all, from a client whose header names the new revision.
  expect_refused(post(rpc("101", "server/discover", "{}"), modern("server/discover")), 400, -32602,
                 101);
  // _meta without clientCapabilities.
  expect_refused(post(rpc("102", "tools/list",
                          R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})"),
                      modern("tools/list")),
                 400, -32602, 102);
  // A revision sluice does not speak, in the header and in _meta alike: the supported ones
  // are listed and the requested one echoed.
  std::string future = R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0",)"
                       R"("io.modelcontextprotocol/clientCapabilities":{}}})";
  auto unsupported =
      post(rpc("103", "server/discover", future), modern("server/discover", "", "v999.0.0"));
  expect_refused(unsupported, 400, -32022, 103);
  auto data = bj::parse(unsupported.body).at("error").at("data");
  EXPECT_EQ(data.at("requested"), "v999.0.0");
  const auto& supported = data.at("supported").as_array();
  EXPECT_NE(std::find(supported.begin(), supported.end(), bj::value("2026-07-28")),
            supported.end());
  // The header and _meta disagree.
  expect_refused(post(rpc("104", "server/discover", future), modern("server/discover")), 400,
                 -32020, 104);
  // Mcp-Method missing, or not the method; Mcp-Name not the tool called.
  std::string call = R"({"name":"fx__echo","arguments":{"text":"x"},)" + kMeta + "}";
  expect_refused(post(rpc("105", "tools/call", call), modern("", "fx__echo")), 400, -32020, 105);
  expect_refused(post(rpc("106", "tools/call", call), modern("tools/list", "fx__echo")), 400,
                 -32020, 106);
  expect_refused(post(rpc("107", "tools/call", call), modern("tools/call", "fx__other")), 400,
                 -32020, 107);
  expect_refused(post(rpc("108", "tools/call", call), modern("tools/call")), 400, -32020, 108);
  // Methods the revision removed, and unknown ones: 404 with -32601.
  for (const std::string method :
       {"initialize", "ping", "logging/setLevel", "resources/subscribe", "unknown/method"}) {
    SCOPED_TRACE(method);
    expect_refused(post(rpc("109", method, "{" + kMeta + "}"), modern(method)), 404, -32601, 109);
  }
  expect_serving();
}

// Unlike a 2025 session's stream, a stateless request's stream is the request: closing it
// cancels the call, and the cancel reaches the downstream.
TEST_F(Stateless, ClosingTheResponseStreamCancelsTheCall) {
  start({"--expose", "all", "--log-stderr", "--log-level", "debug"});
  auto file = [&](const std::string& name) { return (dir_.path() / name).string(); };
  {
    HttpConnection call(port_);
    Headers h = modern("tools/call", "fx__gate");
    set_header(h, "Accept", "text/event-stream");
    std::string params = R"({"name":"fx__gate","arguments":{"path":")" + file("gate.open") +
                         R"(","marker":")" + file("gate.done") + R"(","started":")" +
                         file("gate.started") + R"("},)" + kMeta + "}";
    ASSERT_TRUE(call.send(http_request("POST", "/mcp", h, rpc("5", "tools/call", params))));
    ASSERT_TRUE(wait_file(file("gate.started"))) << "the call reached the downstream";
  }  // the client closes the connection, and with it the stream
  // sluice noticed: the call is abandoned (cancelled, its permit kept by the work). Only then
  // does the gate open, or the call could finish before the close is seen.
  const std::string abandoned = "\nsluice_calls_abandoned_in_flight{server=\"fx\"} 1\n";
  auto seen = std::chrono::steady_clock::now() + kGuard;
  while (exchange("GET", "/metrics", {{"Host", host()}}).body.find(abandoned) ==
             std::string::npos &&
         std::chrono::steady_clock::now() < seen) {
    std::this_thread::sleep_for(20ms);  // a counter in another process: polled, bounded
  }
  // The fixture's gate blocks it whole: it reads the cancel once the gate opens.
  dir_.write("gate.open", "");
  const std::string cancel = R"(fixture received notifications/cancelled {"requestId":)";
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (sluice_->stderr_text().find(cancel) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);  // sluice's log is a stream: no event to wait on
  }
  EXPECT_NE(sluice_->stderr_text().find(cancel), std::string::npos)
      << "closing the stream did not cancel the call; sluice's log:\n"
      << sluice_->stderr_text();
  expect_serving();
}

TEST_F(Stateless, AStatefulSessionKeepsItsRevisionBesideStatelessRequests) {
  start({"--expose", "all"});
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto call = post(rpc("1", "tools/call", R"({"name":"fx__echo","arguments":{"text":"old"}})"),
                   headers(sid));
  ASSERT_EQ(call.status, 200) << call.all();
  EXPECT_FALSE(bj::parse(call.body).at("result").as_object().contains("resultType"))
      << "a 2025-11-25 result has no resultType: " << call.body;
  auto ping = post(rpc("2", "ping", "{}"), headers(sid));
  EXPECT_EQ(ping.status, 200) << ping.all();
}

// stdio: one process serves both eras; a request with the new _meta needs no initialize.
TEST(StatelessStdio, ARequestWithTheNewMetaIsServedWithoutInitialize) {
  TempDir dir;
  const std::string marker = "stateless-stdio-" + std::to_string(::getpid());
  auto config =
      dir.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker) + "}}");
  {
    Sluice sluice({"serve", "--no-discover", "--config", config.string(), "--expose", "all"},
                  dir.path(), dir.path());
    auto call = bj::parse(sluice.request_raw(
        "tools/call", R"({"name":"fx__echo","arguments":{"text":"stdio"},)" + kMeta + "}"));
    EXPECT_EQ(call.at("result").at("resultType"), "complete") << call;
    EXPECT_EQ(call.at("result").at("content").at(0).at("text"), "stdio");
    auto ping = bj::parse(sluice.request_raw("ping", "{" + kMeta + "}"));
    ASSERT_TRUE(ping.as_object().contains("error")) << "the revision removed ping: " << ping;
    EXPECT_EQ(ping.at("error").at("code"), -32601) << ping;
    auto future = bj::parse(sluice.request_raw(
        "tools/list", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01",)"
                      R"("io.modelcontextprotocol/clientCapabilities":{}}})"));
    EXPECT_EQ(future.at("error").at("code"), -32022) << future;
    // The same process still serves the stateful era.
    sluice.initialize();
    auto old = bj::parse(sluice.request_raw("tools/list", "{}"));
    EXPECT_FALSE(old.at("result").as_object().contains("resultType")) << old;
    expect_clean_exit(sluice);
  }
  EXPECT_TRUE(wait_no_marker(marker, kGuard).empty()) << "a fixture process was left behind";
}

}  // namespace
}  // namespace sluice::test
