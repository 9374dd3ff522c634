// The remote MCP fixture (tests/fixtures/http_fixture_server.cpp) does what its flags say: the
// tests of sluice's remote downstreams stand on it, so each mode is shown here against a
// plain HTTP client (http_client.hpp) before sluice is ever pointed at it.
#include "http_client.hpp"
#include "remote_fixture.hpp"
#include "test_certs.hpp"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <signal.h>

#include <sstream>

namespace sluice::test {
namespace {

namespace bj = boost::json;

constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
    R"("capabilities":{},"clientInfo":{"name":"fixture-test","version":"1"}}})";

std::string echo_call(int id, const std::string& text) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"echo","arguments":{"text":")" + text +
         R"("}}})";
}

std::string tool_call(int id, const std::string& name, const std::string& args,
                      const std::string& meta = "") {
  std::string params = R"({"name":")" + name + R"(","arguments":)" + args;
  if (!meta.empty()) params += R"(,"_meta":)" + meta;
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":)" +
         params + "}}";
}

Headers mcp_headers(const std::string& session = "", const std::string& version = "") {
  Headers h{{"Host", "127.0.0.1"},
            {"Content-Type", "application/json"},
            {"Accept", "application/json, text/event-stream"}};
  if (!session.empty()) h.emplace_back("Mcp-Session-Id", session);
  if (!version.empty()) h.emplace_back("MCP-Protocol-Version", version);
  return h;
}

std::string post_request(const std::string& body, const Headers& headers) {
  return http_request("POST", "/mcp", headers, body);
}

std::optional<HttpResponse> post(int port, const std::string& body, const Headers& headers) {
  return http_exchange(port, post_request(body, headers));
}

// initialize (JSON answers): the session id issued.
std::string open_session(int port) {
  auto r = post(port, kInitialize, mcp_headers());
  if (!r || r->status != 200 || !r->header("Mcp-Session-Id")) {
    throw std::runtime_error("initialize failed");
  }
  return *r->header("Mcp-Session-Id");
}

// The text of a tools/call result inside a JSON-RPC response text.
std::string result_text(const std::string& response) {
  auto v = bj::parse(response);
  return std::string(v.at("result").at("content").at(0).at("text").as_string());
}

// initialize over HTTPS (Beast, blocking), the fixture's certificate verified against `ca` for
// 127.0.0.1: the status answered. Throws when the TLS handshake fails.
int https_initialize_status(int port, const std::filesystem::path& ca) {
  namespace asio = boost::asio;
  namespace bhttp = boost::beast::http;
  asio::io_context io;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.load_verify_file(ca.string());
  asio::ssl::stream<asio::ip::tcp::socket> stream(io, tls);
  stream.set_verify_mode(asio::ssl::verify_peer);
  stream.set_verify_callback(asio::ssl::host_name_verification("127.0.0.1"));
  stream.next_layer().connect(
      {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  stream.handshake(asio::ssl::stream_base::client);
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, "/mcp", 11};
  req.set(bhttp::field::host, "127.0.0.1");
  req.set(bhttp::field::content_type, "application/json");
  req.set(bhttp::field::accept, "application/json, text/event-stream");
  req.body() = kInitialize;
  req.prepare_payload();
  bhttp::write(stream, req);
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(stream, buffer, res);
  return static_cast<int>(res.result_int());
}

class HttpFixtureServer : public ::testing::Test {
 protected:
  void TearDown() override {
    if (fixture_) {
      EXPECT_EQ(fixture_->stop(), 0);
      fixture_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }

  RemoteFixture& start(const std::vector<std::string>& flags = {}) {
    fixture_.emplace(dir_, marker_, flags);
    return *fixture_;
  }

  // Waits (bounded by the guard) until the record holds `n` lines; the lines.
  std::vector<bj::object> wait_records(std::size_t n) {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    for (;;) {
      auto lines = fixture_->records();
      if (lines.size() >= n || std::chrono::steady_clock::now() > deadline) return lines;
      std::this_thread::sleep_for(5ms);
    }
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::optional<RemoteFixture> fixture_;
};

TEST_F(HttpFixtureServer, InitializeIssuesASessionThatEveryLaterRequestMustName) {
  int port = start().port();
  auto init = post(port, kInitialize, mcp_headers());
  ASSERT_TRUE(init);
  EXPECT_EQ(init->status, 200);
  EXPECT_EQ(init->header("Content-Type"), "application/json");
  ASSERT_TRUE(init->header("Mcp-Session-Id"));
  EXPECT_EQ(bj::parse(init->body).at("result").at("protocolVersion"), "2025-11-25");
  const std::string session = *init->header("Mcp-Session-Id");

  auto echo = post(port, echo_call(2, "hello"), mcp_headers(session, "2025-11-25"));
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->status, 200);
  EXPECT_EQ(result_text(echo->body), "hello");

  EXPECT_EQ(post(port, echo_call(3, "x"), mcp_headers())->status, 400);
  EXPECT_EQ(post(port, echo_call(4, "x"), mcp_headers("no-such-session"))->status, 404);
  EXPECT_EQ(post(port, echo_call(5, "x"), mcp_headers(session, "2025-06-18"))->status, 400);
  auto initialized = post(port, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                          mcp_headers(session, "2025-11-25"));
  EXPECT_EQ(initialized->status, 202);
}

TEST_F(HttpFixtureServer, AnOlderRevisionIsAnsweredInKind) {
  int port = start().port();
  std::string init = kInitialize;
  init.replace(init.find("2025-11-25"), 10, "2025-03-26");
  auto r = post(port, init, mcp_headers());
  ASSERT_TRUE(r);
  EXPECT_EQ(bj::parse(r->body).at("result").at("protocolVersion"), "2025-03-26");
}

TEST_F(HttpFixtureServer, SseResponsesCarryTheProgressBeforeTheResponse) {
  int port = start({"--sse-responses"}).port();
  auto init = post(port, kInitialize, mcp_headers());
  ASSERT_TRUE(init);
  EXPECT_EQ(init->header("Content-Type"), "text/event-stream");
  const std::string session = *init->header("Mcp-Session-Id");
  auto r = post(port, tool_call(2, "progress", R"({"steps":2})", R"({"progressToken":"p1"})"),
                mcp_headers(session));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header("Content-Type"), "text/event-stream");
  EXPECT_TRUE(r->body.starts_with("retry: 500\n")) << r->body;
  auto events = parse_sse(r->body);
  ASSERT_EQ(events.size(), 4u) << r->body;
  EXPECT_EQ(events[0].data, "") << "a 2025-11-25 stream opens with a priming event";
  EXPECT_NE(events[1].data.find(R"("progressToken":"p1","progress":1)"), std::string::npos);
  EXPECT_NE(events[2].data.find(R"("progress":2)"), std::string::npos);
  EXPECT_EQ(result_text(events[3].data), "progress sent");
  for (std::size_t i = 1; i < events.size(); ++i) {
    ASSERT_TRUE(events[i].id && events[i - 1].id);
    EXPECT_GT(std::stoi(*events[i].id), std::stoi(*events[i - 1].id));
  }
}

TEST_F(HttpFixtureServer, TheGetStreamCarriesListChangedAndCanBeRefused) {
  int port = start().port();
  const std::string session = open_session(port);
  HttpConnection stream(port);
  stream.send(http_request(
      "GET", "/mcp",
      {{"Host", "127.0.0.1"}, {"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}}));
  auto head = stream.read_head();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->header("Content-Type"), "text/event-stream");
  auto priming = stream.read_event();
  ASSERT_TRUE(priming);
  EXPECT_EQ(priming->data, "");
  auto changed = post(port, tool_call(2, "change_tools", "{}"), mcp_headers(session));
  EXPECT_EQ(result_text(changed->body), "added tool added_later");
  auto event = stream.read_event();
  ASSERT_TRUE(event);
  EXPECT_NE(event->data.find("notifications/tools/list_changed"), std::string::npos);
  auto list = post(port, R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})", mcp_headers(session));
  EXPECT_NE(list->body.find(R"("name":"added_later")"), std::string::npos);
}

TEST_F(HttpFixtureServer, NoGetStreamAndNoDeleteAnswer405) {
  int port = start({"--no-get-stream", "--no-delete"}).port();
  const std::string session = open_session(port);
  auto get = http_exchange(
      port, http_request("GET", "/mcp", {{"Host", "127.0.0.1"}, {"Mcp-Session-Id", session}}));
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto del = http_exchange(
      port, http_request("DELETE", "/mcp", {{"Host", "127.0.0.1"}, {"Mcp-Session-Id", session}}));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  EXPECT_EQ(post(port, echo_call(2, "still here"), mcp_headers(session))->status, 200);
}

TEST_F(HttpFixtureServer, DeleteEndsTheSession) {
  int port = start().port();
  const std::string session = open_session(port);
  auto del = http_exchange(
      port, http_request("DELETE", "/mcp", {{"Host", "127.0.0.1"}, {"Mcp-Session-Id", session}}));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  EXPECT_EQ(post(port, echo_call(2, "gone"), mcp_headers(session))->status, 404);
  auto records = fixture_->records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].at("method"), "DELETE");
  EXPECT_EQ(records[1].at("session"), bj::value(session));
}

TEST_F(HttpFixtureServer, ACancelledSlowCallIsNeverAnswered) {
  int port = start().port();
  const std::string session = open_session(port);
  HttpConnection call(port);
  call.send(post_request(tool_call(7, "slow", R"({"ms":300})"), mcp_headers(session)));
  ASSERT_EQ(wait_records(2).size(), 2u) << "the call did not arrive";
  auto cancel = post(port,
                     R"({"jsonrpc":"2.0","method":"notifications/cancelled",)"
                     R"("params":{"requestId":7}})",
                     mcp_headers(session));
  EXPECT_EQ(cancel->status, 202);
  // Uncancelled, it would answer after 300 ms.
  EXPECT_FALSE(call.read_head(1500ms));
  EXPECT_FALSE(call.closed_now());

  HttpConnection uncancelled(port);
  uncancelled.send(post_request(tool_call(8, "slow", R"({"ms":10})"), mcp_headers(session)));
  auto answer = uncancelled.read_response();
  ASSERT_TRUE(answer);
  EXPECT_EQ(result_text(answer->body), "slept 10 ms");
}

TEST_F(HttpFixtureServer, SampleSendsTheRequestOnTheCallsStreamAndReturnsTheAnswer) {
  int port = start({"--sse-responses"}).port();
  auto init = post(port, kInitialize, mcp_headers());
  const std::string session = *init->header("Mcp-Session-Id");
  HttpConnection call(port);
  call.send(post_request(tool_call(2, "sample", R"({"prompt":"say hi"})"), mcp_headers(session)));
  ASSERT_TRUE(call.read_head());
  ASSERT_TRUE(call.read_event());  // priming
  auto request = call.read_event();
  ASSERT_TRUE(request);
  auto asked = bj::parse(request->data);
  EXPECT_EQ(asked.at("method"), "sampling/createMessage");
  EXPECT_NE(request->data.find("say hi"), std::string::npos);
  const std::string answer = R"({"jsonrpc":"2.0","id":)" + bj::serialize(asked.at("id")) +
                             R"(,"result":{"role":"assistant","content":{"type":"text",)"
                             R"("text":"hi from the client"},"model":"m"}})";
  EXPECT_EQ(post(port, answer, mcp_headers(session))->status, 202);
  auto response = call.read_event();
  ASSERT_TRUE(response);
  EXPECT_NE(result_text(response->data).find("hi from the client"), std::string::npos);
}

TEST_F(HttpFixtureServer, AnsweredAsJsonARequestToTheClientGoesOnTheGetStream) {
  int port = start().port();
  const std::string session = open_session(port);
  HttpConnection stream(port);
  stream.send(http_request("GET", "/mcp", {{"Host", "127.0.0.1"}, {"Mcp-Session-Id", session}}));
  ASSERT_TRUE(stream.read_head());
  ASSERT_TRUE(stream.read_event());  // priming
  HttpConnection call(port);
  call.send(post_request(tool_call(2, "elicit", "{}"), mcp_headers(session)));
  auto request = stream.read_event();
  ASSERT_TRUE(request);
  auto asked = bj::parse(request->data);
  EXPECT_EQ(asked.at("method"), "elicitation/create");
  const std::string answer = R"({"jsonrpc":"2.0","id":)" + bj::serialize(asked.at("id")) +
                             R"(,"result":{"action":"accept","content":{"confirm":true}}})";
  EXPECT_EQ(post(port, answer, mcp_headers(session))->status, 202);
  auto response = call.read_response();
  ASSERT_TRUE(response);
  EXPECT_NE(result_text(response->body).find(R"("action":"accept")"), std::string::npos);
}

TEST_F(HttpFixtureServer, ItHasOnePromptOneResourceAndPing) {
  int port = start().port();
  const std::string session = open_session(port);
  auto rpc = [&](const std::string& method, const std::string& params) {
    auto r = post(
        port, R"({"jsonrpc":"2.0","id":9,"method":")" + method + R"(","params":)" + params + "}",
        mcp_headers(session));
    return bj::parse(r ? r->body : "{}").as_object();
  };
  EXPECT_EQ(rpc("prompts/list", "{}").at("result").at("prompts").as_array().size(), 1u);
  EXPECT_EQ(rpc("prompts/get", R"({"name":"greet","arguments":{"name":"ada"}})")
                .at("result")
                .at("messages")
                .at(0)
                .at("content")
                .at("text"),
            "hello ada");
  EXPECT_EQ(rpc("resources/list", "{}").at("result").at("resources").as_array().size(), 1u);
  EXPECT_TRUE(rpc("resources/read", R"({"uri":"fixture://readme"})")
                  .at("result")
                  .at("contents")
                  .is_array());
  EXPECT_TRUE(rpc("ping", "{}").at("result").is_object());
  EXPECT_EQ(rpc("no/such/method", "{}").at("error").at("code"), -32601);
}

TEST_F(HttpFixtureServer, LegacySseSendsTheEndpointThenAnswersOnTheStream) {
  int port = start({"--legacy-sse"}).port();
  HttpConnection stream(port);
  stream.send(
      http_request("GET", "/sse", {{"Host", "127.0.0.1"}, {"Accept", "text/event-stream"}}));
  auto head = stream.read_head();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->header("Content-Type"), "text/event-stream");
  auto endpoint = stream.read_event();
  ASSERT_TRUE(endpoint);
  EXPECT_EQ(endpoint->event, "endpoint");
  ASSERT_TRUE(endpoint->data.starts_with("/messages?sessionId=")) << endpoint->data;
  auto accepted = http_exchange(
      port,
      http_request("POST", endpoint->data,
                   {{"Host", "127.0.0.1"}, {"Content-Type", "application/json"}}, kInitialize));
  ASSERT_TRUE(accepted);
  EXPECT_EQ(accepted->status, 202);
  auto message = stream.read_event();
  ASSERT_TRUE(message);
  EXPECT_EQ(message->event, "message");
  EXPECT_EQ(bj::parse(message->data).at("id"), 1);
  auto unknown = http_exchange(
      port, http_request("POST", "/messages?sessionId=nope", {{"Host", "127.0.0.1"}}, kInitialize));
  EXPECT_EQ(unknown->status, 404);
}

TEST_F(HttpFixtureServer, FailCountAnswersTheStatusWithRetryAfterThenServes) {
  int port = start({"--fail-status=503", "--fail-count=2", "--retry-after=3"}).port();
  const std::string session = open_session(port);
  for (int i = 0; i < 2; ++i) {
    auto r = post(port, echo_call(2 + i, "x"), mcp_headers(session));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->header("Retry-After"), "3");
  }
  auto r = post(port, echo_call(4, "served"), mcp_headers(session));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(result_text(r->body), "served");
}

TEST_F(HttpFixtureServer, TheRecordListsEachRequestWithoutTheAuthorizationValue) {
  int port = start({"--require-bearer=tok-9d2e"}).port();
  auto refused = post(port, kInitialize, mcp_headers());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->header("WWW-Authenticate"),
            "Bearer resource_metadata=\"http://127.0.0.1:" + std::to_string(port) +
                "/.well-known/oauth-protected-resource\"");
  Headers auth = mcp_headers();
  auth.emplace_back("Authorization", "Bearer tok-9d2e");
  HttpConnection one(port);  // two requests over one kept-alive connection
  one.send(post_request(kInitialize, auth));
  auto init = one.read_response();
  ASSERT_TRUE(init);
  ASSERT_EQ(init->status, 200);
  const std::string session = *init->header("Mcp-Session-Id");
  auth.emplace_back("Mcp-Session-Id", session);
  auth.emplace_back("MCP-Protocol-Version", "2025-11-25");
  one.send(post_request(echo_call(2, "again"), auth));
  ASSERT_TRUE(one.read_response());

  auto records = fixture_->records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].at("authorization"), false);
  EXPECT_EQ(records[1].at("authorization"), true);
  EXPECT_EQ(records[1].at("connection"), records[2].at("connection"));
  EXPECT_NE(records[0].at("connection"), records[1].at("connection"));
  EXPECT_EQ(records[1].at("session"), nullptr);
  EXPECT_EQ(records[2].at("session"), bj::value(session));
  EXPECT_EQ(records[2].at("protocol_version"), "2025-11-25");
  EXPECT_EQ(records[2].at("rpc_method"), "tools/call");
  EXPECT_EQ(records[2].at("path"), "/mcp");
  std::stringstream text;
  for (const auto& r : records) text << bj::serialize(r);
  EXPECT_EQ(text.str().find("tok-9d2e"), std::string::npos);
}

TEST_F(HttpFixtureServer, ABrokenStreamResumesWithLastEventIdAndDeliversTheResponseThere) {
  int port = start({"--sse-responses", "--sse-break-after=1", "--retry-ms=450"}).port();
  HttpConnection init_connection(port);
  init_connection.send(post_request(kInitialize, mcp_headers()));
  auto init = init_connection.read_head();
  ASSERT_TRUE(init);
  const std::string session = *init->header("Mcp-Session-Id");
  ASSERT_TRUE(init_connection.read_event());  // the initialize response, then the break

  HttpConnection call(port);
  call.send(post_request(tool_call(2, "slow", R"({"ms":50})"), mcp_headers(session)));
  ASSERT_TRUE(call.read_head());
  auto priming = call.read_event();
  ASSERT_TRUE(priming && priming->id);
  EXPECT_TRUE(call.wait_closed()) << "the stream did not break after one event";

  HttpConnection resumed(port);
  resumed.send(http_request(
      "GET", "/mcp",
      {{"Host", "127.0.0.1"}, {"Mcp-Session-Id", session}, {"Last-Event-ID", *priming->id}}));
  ASSERT_TRUE(resumed.read_head());
  auto response = resumed.read_event();
  ASSERT_TRUE(response);
  EXPECT_EQ(result_text(response->data), "slept 50 ms");

  auto records = fixture_->records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].at("method"), "GET");
  EXPECT_EQ(records[2].at("last_event_id"), bj::value(*priming->id));
}

TEST_F(HttpFixtureServer, DropMidCallClosesTheConnectionUnanswered) {
  int port = start({"--drop-mid-call"}).port();
  const std::string session = open_session(port);
  HttpConnection call(port);
  call.send(post_request(tool_call(2, "slow", R"({"ms":10})"), mcp_headers(session)));
  EXPECT_FALSE(call.read_head());
  EXPECT_TRUE(call.closed_now());
  EXPECT_EQ(result_text(post(port, echo_call(3, "other"), mcp_headers(session))->body), "other");
}

TEST_F(HttpFixtureServer, StallReadsTheRequestAndNeverAnswers) {
  int port = start({"--stall"}).port();
  HttpConnection c(port);
  c.send(post_request(kInitialize, mcp_headers()));
  EXPECT_EQ(wait_records(1).size(), 1u);
  EXPECT_FALSE(c.read_head(1000ms));
  EXPECT_FALSE(c.closed_now());
}

TEST_F(HttpFixtureServer, DripSendsTheBodyOneByteAtATime) {
  int port = start({"--drip-ms=5"}).port();
  HttpConnection c(port);
  c.send(post_request(kInitialize, mcp_headers()));
  auto head = c.read_head();
  ASSERT_TRUE(head);
  const auto started = std::chrono::steady_clock::now();
  auto body = c.read_body();
  ASSERT_TRUE(body);
  EXPECT_EQ(bj::parse(*body).at("id"), 1);
  // About 195 bytes at 5 ms each: well over half a second, never all at once.
  EXPECT_GT(std::chrono::steady_clock::now() - started, 500ms);
}

TEST_F(HttpFixtureServer, OversizeHeadSendsAHeaderLineOfOneMebibyte) {
  int port = start({"--oversize-head"}).port();
  auto r = post(port, kInitialize, mcp_headers());
  ASSERT_TRUE(r);
  auto padding = r->header("X-Fixture-Padding");
  ASSERT_TRUE(padding);
  EXPECT_EQ(padding->size(), 1024u * 1024u);
}

TEST_F(HttpFixtureServer, GeneratedToolsAreListedAndAnswer) {
  int port = start({"--tools=3", "--name=remote"}).port();
  const std::string session = open_session(port);
  auto list = post(port, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", mcp_headers(session));
  auto tools = bj::parse(list->body).at("result").at("tools").as_array();
  EXPECT_EQ(tools.size(), 7u + 3u);  // seven of its own (added_later not yet), three generated
  const std::string generated(tools.back().at("name").as_string());
  auto call = post(port, tool_call(3, generated, R"({"query":"q1"})"), mcp_headers(session));
  EXPECT_EQ(result_text(call->body), "q1");
}

TEST_F(HttpFixtureServer, TlsServesWithTheGivenCertificate) {
  std::filesystem::create_directories(dir_.path() / "certs");
  const TestCertificates certs = make_test_certificates(dir_.path() / "certs");
  int port =
      start({"--tls-cert=" + certs.server.cert.string(), "--tls-key=" + certs.server.key.string()})
          .port();
  EXPECT_EQ(https_initialize_status(port, certs.ca), 200);
  auto plain = post(port, kInitialize, mcp_headers());
  EXPECT_FALSE(plain && plain->status == 200) << "plain HTTP was answered on the TLS port";
}

TEST_F(HttpFixtureServer, SigtermMakesItExit) {
  start().process().signal(SIGTERM);
  EXPECT_EQ(fixture_->process().wait_exit(), 0);
  fixture_.reset();
}

TEST_F(HttpFixtureServer, StdinEofMakesItExit) {
  start();
  EXPECT_EQ(fixture_->stop(), 0);
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  fixture_.reset();
}

}  // namespace
}  // namespace sluice::test
