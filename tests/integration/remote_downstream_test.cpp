// Remote downstreams through the real binary: sluice as the MCP client of the HTTP fixture
// (tests/fixtures/http_fixture_server.cpp) over Streamable HTTP (JSON and SSE answers) and the
// legacy HTTP+SSE transport, with the rules of a stdio child holding there too: search,
// describe and invoke; one connection reused; the session DELETEd at shutdown; a failed call
// answered once and never replayed; Retry-After honoured; credentials from `${VAR}` headers;
// plain http:// refused off loopback.
#include "harness.hpp"
#include "remote_fixture.hpp"
#include "test_certs.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace sluice::test {
namespace {
namespace bj = boost::json;

class RemoteDownstream : public ::testing::Test {
 protected:
  void TearDown() override {
    if (sluice_) expect_clean_exit(*sluice_);
    sluice_.reset();
    fixture_.reset();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a process was left behind";
  }
  // Starts the fixture with `flags`, then sluice with one server "web" of `entry` (its url
  // added), with `env` set for sluice.
  // `base` replaces the fixture's http://127.0.0.1: (its port follows).
  void start(const std::vector<std::string>& flags, bj::object entry = {{"type", "http"}},
             const std::vector<std::string>& env = {}, const std::string& base = {},
             const std::string& settings = "{}") {
    fixture_ = std::make_unique<RemoteFixture>(dir_, marker_, flags);
    const bool legacy = entry.contains("type") && entry.at("type") == "sse";
    const std::string path = legacy ? "/sse" : "/mcp";
    entry["url"] =
        base.empty() ? fixture_->url(path) : base + std::to_string(fixture_->port()) + path;
    auto cfg = dir_.write(".mcp.json", R"({"sluice":)" + settings + R"(,"mcpServers":{"web":)" +
                                           bj::serialize(entry) + "}}");
    std::vector<std::string> args = env;
    args.insert(args.end(),
                {SLUICE_BINARY, "serve", "--no-discover", "--no-cache", "--config", cfg.string()});
    args.insert(args.end(), sluice_flags_.begin(), sluice_flags_.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path(), "/usr/bin/env");
    sluice_->initialize();
  }
  TestCertificates certificates() {
    std::filesystem::create_directories(dir_.path() / "certs");
    return make_test_certificates(dir_.path() / "certs");
  }
  bj::value invoke(const std::string& tool, const std::string& args) {
    return sluice_->call_tool("gateway.invoke",
                              R"({"tool_id":"web::)" + tool + R"(","arguments":)" + args + "}");
  }
  // The health row of web's tool `tool`.
  bj::value tool_row(const std::string& tool) {
    auto servers = sluice_->call_tool("gateway.health", "{}").at("structuredContent").at("servers");
    for (const auto& t : servers.at(0).at("tools").as_array()) {
      if (t.at("tool") == tool.c_str()) return t;
    }
    return bj::object();
  }
  bj::object row() {
    auto h = sluice_->call_tool("gateway.health", R"({"server":"web"})");
    return h.at("structuredContent").at("servers").at(0).as_object();
  }
  // The fixture's record lines of `method` (HTTP) whose JSON-RPC method is `rpc` (any when
  // empty).
  std::size_t requests(const std::string& method, const std::string& rpc = {}) {
    std::size_t n = 0;
    for (const auto& r : fixture_->records()) {
      if (r.at("method") != method.c_str()) continue;
      const auto* m = r.if_contains("rpc_method");
      if (!rpc.empty() && (!m || !m->is_string() || m->get_string() != rpc)) continue;
      ++n;
    }
    return n;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::vector<std::string> sluice_flags_;  // more flags of `sluice serve`
  std::unique_ptr<RemoteFixture> fixture_;
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(RemoteDownstream, AStreamableHttpServerIsSearchedDescribedAndCalledThroughSluice) {
  start({});
  auto found = sluice_->call_tool("gateway.catalog_search", R"({"query":"echo"})");
  const auto& results = found.at("structuredContent").at("results").as_array();
  ASSERT_FALSE(results.empty()) << found;
  EXPECT_EQ(results[0].at("tool_id"), "web::echo");
  auto described = sluice_->call_tool("gateway.describe", R"({"tool_id":"web::echo"})");
  ASSERT_FALSE(is_error(described)) << text_of(described);
  auto called = invoke("echo", R"({"text":"over http"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_NE(text_of(called).find("over http"), std::string::npos) << text_of(called);
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(is_error(invoke("echo", R"({"text":"again"})")));
  auto r = row();
  EXPECT_EQ(r.at("status"), "online");
  // Kept-alive connections: far fewer than the requests sent.
  std::size_t connections = 0;
  for (const auto& rec : fixture_->records()) {
    connections = std::max<std::size_t>(connections, rec.at("connection").to_number<std::size_t>());
  }
  EXPECT_LE(connections, 4u) << "requests: " << fixture_->records().size();
  // An orderly end DELETEs the session.
  sluice_->close_stdin();
  EXPECT_EQ(sluice_->wait_exit(), 0);
  sluice_.reset();
  EXPECT_EQ(requests("DELETE"), 1u);
}

class RemoteRevision : public RemoteDownstream,
                       public ::testing::WithParamInterface<const char*> {};

TEST_P(RemoteRevision, AServerOfAnEarlierRevisionIsServedInItsRevision) {
  start({std::string("--protocol=") + GetParam(), "--sse-responses"});
  auto called = invoke("echo", R"({"text":"older"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_EQ(row().at("protocol_version"), GetParam());
  // Every request after initialize named the revision the server answered (the probe before
  // it, server/discover, names 2026-07-28, which this server refuses).
  for (const auto& r : fixture_->records()) {
    if (r.at("rpc_method") != "initialize" && r.at("rpc_method") != "server/discover" &&
        r.at("method") == "POST") {
      EXPECT_EQ(r.at("protocol_version"), GetParam()) << bj::serialize(r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Revisions, RemoteRevision,
                         ::testing::Values("2025-11-25", "2025-06-18", "2025-03-26"));

TEST_F(RemoteDownstream, AnswersStreamedAsServerSentEventsArriveWithTheirProgress) {
  start({"--sse-responses"});
  auto called = sluice_->call_tool("gateway.invoke",
                                   R"({"tool_id":"web::progress","arguments":{"steps":3}})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  auto echoed = invoke("echo", R"({"text":"sse"})");
  EXPECT_NE(text_of(echoed).find("sse"), std::string::npos) << text_of(echoed);
}

TEST_F(RemoteDownstream, ALegacySseServerIsCalledThroughItsEndpoint) {
  start({"--legacy-sse"}, {{"type", "sse"}});
  auto called = invoke("echo", R"({"text":"legacy"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_NE(text_of(called).find("legacy"), std::string::npos) << text_of(called);
  EXPECT_EQ(row().at("status"), "online");
}

// Whether a search for `query` finds web::`tool`, within the guard (the relisting a
// notification starts may still be under way).
bool eventually_found(Sluice& s, const std::string& query, const std::string& tool) {
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    auto found = s.call_tool("gateway.catalog_search", R"({"query":")" + query + "\"}");
    for (const auto& card : found.at("structuredContent").at("results").as_array()) {
      if (card.at("tool_id") == ("web::" + tool).c_str()) return true;
    }
  }
  return false;
}

TEST_F(RemoteDownstream, TheServersGetStreamCarriesItsListChangedAndSluiceRelists) {
  start({});
  ASSERT_FALSE(is_error(invoke("change_tools", "{}")));
  EXPECT_TRUE(eventually_found(*sluice_, "added later", "added_later"));
  EXPECT_GE(requests("GET"), 1u);
}

TEST_F(RemoteDownstream, AServerWithoutAGetStreamAnswering405IsServedAllTheSame) {
  start({"--no-get-stream", "--no-delete"});
  auto called = invoke("echo", R"({"text":"no stream"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_EQ(row().at("status"), "online");
}

TEST_F(RemoteDownstream, LoginToAServerWithoutUsableAuthorizationMetadataFailsValueFree) {
  fixture_ = std::make_unique<RemoteFixture>(dir_, marker_,
                                             std::vector<std::string>{"--require-bearer=t0ken"});
  auto cfg = dir_.write(
      ".mcp.json", R"({"mcpServers":{"web":{"type":"http","url":")" + fixture_->url() + R"("}}})");
  auto r = run_sluice({"auth", "login", "web", "--no-discover", "--config", cfg.string(),
                       "--state-dir", (dir_.path() / "state").string()},
                      dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("sluice auth login:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("t0ken"), std::string::npos);
  auto unknown = run_sluice({"auth", "login", "nosuch", "--no-discover", "--config", cfg.string()},
                            dir_.path(), dir_.path());
  EXPECT_EQ(unknown.exit_code, 2);
}

TEST_F(RemoteDownstream, ALegacyServerWhoseEventStreamEndsIsReconnectedWithANewSession) {
  // 9 events a stream: the endpoint, the start's six answers (server/discover's refusal,
  // initialize and the four lists), then two calls'. One fewer ended the stream with the first
  // call's answer, and the second call raced the reconnection.
  start({"--legacy-sse", "--sse-break-after=9"}, {{"type", "sse"}});
  ASSERT_FALSE(is_error(invoke("echo", R"({"text":"one"})")));
  ASSERT_FALSE(is_error(invoke("echo", R"({"text":"two"})")));
  // The stream ended with the second answer: the restart path opens a new one, after its
  // backoff, and the server is online again in a new generation.
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  bj::object r;
  do {
    r = row();
  } while ((r.at("status") != "online" || r.at("generation").to_number<int>() < 2) &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(r.at("status"), "online") << r;
  auto three = invoke("echo", R"({"text":"three"})");
  EXPECT_FALSE(is_error(three)) << text_of(three);
  std::size_t streams = 0;
  for (const auto& rec : fixture_->records()) streams += rec.at("path") == "/sse" ? 1 : 0;
  EXPECT_GE(streams, 2u);
}

TEST_F(RemoteDownstream, ACallThatMeetsA503FailsOnceAndRetryAfterHoldsTheNextOne) {
  start({"--fail-status=503", "--fail-count=1", "--fail-method=tools/call", "--retry-after=30"});
  auto first = invoke("echo", R"({"text":"a"})");
  ASSERT_TRUE(is_error(first));
  EXPECT_NE(text_of(first).find("503"), std::string::npos) << text_of(first);
  auto second = invoke("echo", R"({"text":"b"})");
  ASSERT_TRUE(is_error(second));
  EXPECT_NE(text_of(second).find("Retry-After"), std::string::npos) << text_of(second);
  // The held call was not sent, and the failed one was not sent again.
  EXPECT_EQ(requests("POST", "tools/call"), 1u);
}

TEST_F(RemoteDownstream, AServerThatDropsTheConnectionMidCallFailsTheCallWithoutReplayingIt) {
  start({"--drop-mid-call"});
  auto slow = invoke("slow", R"({"ms":50})");
  ASSERT_TRUE(is_error(slow)) << text_of(slow);
  EXPECT_EQ(requests("POST", "tools/call"), 1u);
  // The server still serves the next call.
  auto echoed = invoke("echo", R"({"text":"still here"})");
  EXPECT_FALSE(is_error(echoed)) << text_of(echoed);
}

TEST_F(RemoteDownstream, AnAbandonedRemoteCallGivesItsPermitBackAtTheAbandonBound) {
  start({}, {{"type", "http"}}, {}, {}, R"({"abandonMs":1000})");
  sluice_->call_tool("gateway.connect_server", R"({"server_name":"web"})");
  sluice_->send(
      R"({"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":)"
      R"("gateway.invoke","arguments":{"tool_id":"web::slow","arguments":{"ms":600000}}}})");
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  auto in_flight = [&] {
    bj::value t = tool_row("slow");
    return t.as_object().contains("in_flight") && t.at("in_flight") == 1;
  };
  while (!in_flight() && std::chrono::steady_clock::now() < deadline) {
  }
  sluice_->send(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}})");
  bj::value r;
  while (std::chrono::steady_clock::now() < deadline) {
    r = tool_row("slow");
    if (r.as_object().contains("expired") && r.at("expired") == 1) break;
  }
  // No process to watch: the call ends at the bound, counted expired, and its permit is free.
  EXPECT_EQ(r.at("expired"), 1) << r;
  EXPECT_EQ(r.at("permits_held"), 0) << r;
  EXPECT_EQ(r.at("expired_holding_permit"), 0) << r;
  EXPECT_EQ(requests("POST", "notifications/cancelled"), 1u) << "the cancel reaches the server";
}

TEST_F(RemoteDownstream, ABrokenAnswerStreamIsResumedFromItsLastEventAndNotSentAgain) {
  start({"--sse-responses", "--sse-break-after=1", "--retry-ms=100"});
  auto called = invoke("echo", R"({"text":"resumed"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_NE(text_of(called).find("resumed"), std::string::npos) << text_of(called);
  EXPECT_EQ(requests("POST", "tools/call"), 1u);
  bool resumed = false;
  for (const auto& r : fixture_->records()) {
    if (r.at("method") == "GET" && r.at("last_event_id").is_string()) resumed = true;
  }
  EXPECT_TRUE(resumed) << "no GET carried Last-Event-ID";
}

TEST_F(RemoteDownstream, AnAnswerOverTheMessageCapIsRefusedAndTheServerKeepsServing) {
  sluice_flags_ = {"--max-message-bytes", "65536"};
  start({});
  auto big = invoke("big", R"({"bytes":200000})");
  ASSERT_TRUE(is_error(big)) << bj::serialize(big).substr(0, 300);
  EXPECT_NE(text_of(big).find("too_large"), std::string::npos) << text_of(big);
  auto echoed = invoke("echo", R"({"text":"small"})");
  EXPECT_FALSE(is_error(echoed)) << text_of(echoed);
}

TEST_F(RemoteDownstream, AServerThatNeverAnswersFailsItsStartWithinTheInitializeTimeout) {
  sluice_flags_ = {"--initialize-timeout-ms", "1000"};
  start({"--stall"});
  auto called = invoke("echo", R"({"text":"x"})");
  ASSERT_TRUE(is_error(called));
  EXPECT_EQ(row().at("status"), "failed");
}

TEST_F(RemoteDownstream, AMissingVariableInAHeaderMeansNotConnectedAndHealthNamesIt) {
  start({}, {{"type", "http"}, {"headers", bj::object{{"Authorization", "Bearer ${WEB_SECRET}"}}}});
  ASSERT_TRUE(is_error(invoke("echo", R"({"text":"x"})")));
  const std::string error(row().at("last_error").as_string());
  EXPECT_NE(error.find("WEB_SECRET"), std::string::npos) << error;
  EXPECT_EQ(fixture_->records().size(), 0u) << "nothing is sent without its credentials";
}

TEST_F(RemoteDownstream, HeadersTakeTheirCredentialsFromTheEnvironment) {
  start({"--require-bearer=s3cret-token"},
        {{"type", "http"}, {"headers", bj::object{{"Authorization", "Bearer ${WEB_TOKEN}"}}}},
        {"WEB_TOKEN=s3cret-token"});
  auto called = invoke("echo", R"({"text":"authorized"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_EQ(sluice_->stderr_text().find("s3cret-token"), std::string::npos);
}

TEST_F(RemoteDownstream, ARefusedCredentialFailsWithAuthRequiredAndNoValue) {
  start({"--require-bearer=right-token"},
        {{"type", "http"}, {"headers", bj::object{{"Authorization", "Bearer wrong-token"}}}});
  auto called = invoke("echo", R"({"text":"x"})");
  ASSERT_TRUE(is_error(called));
  auto r = row();
  EXPECT_EQ(r.at("status"), "failed");
  const std::string error(r.at("last_error").as_string());
  EXPECT_NE(error.find("auth_required"), std::string::npos) << error;
  EXPECT_EQ(r.at("failure_class"), "auth_required") << r;
  EXPECT_EQ(bj::serialize(r).find("wrong-token"), std::string::npos);
}

TEST_F(RemoteDownstream, AnHttpsServerIsReachedWithTheCaFileOfItsEntry) {
  auto certs = certificates();
  start({"--tls-cert=" + certs.server.cert.string(), "--tls-key=" + certs.server.key.string()},
        {{"type", "http"}, {"caFile", certs.ca.string()}}, {}, "https://localhost:");
  auto called = invoke("echo", R"({"text":"over tls"})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  EXPECT_NE(text_of(called).find("over tls"), std::string::npos);
}

TEST_F(RemoteDownstream, ACertificateNoTrustedCaSignedIsRefusedWithItsReasonNeverDowngraded) {
  auto certs = certificates();
  start({"--tls-cert=" + certs.server.cert.string(), "--tls-key=" + certs.server.key.string()},
        {{"type", "http"}}, {}, "https://localhost:");
  auto called = invoke("echo", R"({"text":"x"})");
  ASSERT_TRUE(is_error(called));
  const std::string error(row().at("last_error").as_string());
  EXPECT_NE(error.find("tls_failed"), std::string::npos) << error;
  EXPECT_NE(error.find("certificate_untrusted"), std::string::npos) << error;
  EXPECT_EQ(row().at("failure_class"), "tls_failed");
  // Nothing went over plain HTTP: the fixture saw no request it could read.
  EXPECT_EQ(fixture_->records().size(), 0u);
}

TEST_F(RemoteDownstream, ACertificateForAnotherNameIsRefusedAsAHostnameMismatch) {
  auto certs = certificates();
  start({"--tls-cert=" + certs.other_name.cert.string(),
         "--tls-key=" + certs.other_name.key.string()},
        {{"type", "http"}, {"caFile", certs.ca.string()}}, {}, "https://localhost:");
  ASSERT_TRUE(is_error(invoke("echo", R"({"text":"x"})")));
  const std::string error(row().at("last_error").as_string());
  EXPECT_NE(error.find("hostname_mismatch"), std::string::npos) << error;
}

TEST_F(RemoteDownstream, PlainHttpToAHostOtherThanLoopbackIsRefusedBeforeConnecting) {
  fixture_ = std::make_unique<RemoteFixture>(dir_, marker_);
  auto cfg = dir_.write(
      ".mcp.json", R"({"mcpServers":{"web":{"type":"http","url":"http://example.invalid/mcp"}}})");
  sluice_ = std::make_unique<Sluice>(
      std::vector<std::string>{"serve", "--no-discover", "--no-cache", "--config", cfg.string()},
      dir_.path(), dir_.path());
  sluice_->initialize();
  auto connected = sluice_->call_tool("gateway.connect_server", R"({"server_name":"web"})");
  EXPECT_TRUE(is_error(connected));
  const std::string error(row().at("last_error").as_string());
  EXPECT_NE(error.find("allowHttp"), std::string::npos) << error;
}

}  // namespace
}  // namespace sluice::test
