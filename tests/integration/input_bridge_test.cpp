// The era bridge through the real binary: a 2026-07-28 client calling tools and prompts of a
// 2025 server (the conformance fixture) that asks its client for sampling, elicitation or
// roots. The client sees input_required results and retries with inputResponses and the
// requestState; tampered, replayed and other callers' states are refused; only declared
// capabilities are asked for; log messages follow the request's own logLevel.
#include "harness.hpp"
#include "http_fixture.hpp"

namespace sluice::test {
namespace {

std::string meta(const std::string& capabilities, const std::string& extra = "") {
  return R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
         R"("io.modelcontextprotocol/clientCapabilities":)" +
         capabilities + extra + "}";
}
const std::string kAll = R"({"sampling":{},"elicitation":{},"roots":{}})";

// A tools/call of the fixture's tool `tool`, with `more` members (inputResponses,
// requestState) and the _meta of a client declaring `capabilities`.
std::string call_params(const std::string& tool, const std::string& more = "",
                        const std::string& capabilities = kAll) {
  return R"({"name":"conf__)" + tool + R"(","arguments":{},)" + (more.empty() ? "" : more + ",") +
         meta(capabilities) + "}";
}

std::string accept(const std::string& content) {
  return R"({"action":"accept","content":)" + content + "}";
}

class InputBridgeStdio : public ::testing::Test {
 protected:
  void SetUp() override {
    bj::object entry{{"command", CONFORMANCE_SERVER},
                     {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
    // A call cancelled by the bridge holds its permit until the fixture answers, which it
    // never does for a cancelled call: the drain at exit is kept short.
    auto cfg = dir_.write(".mcp.json", R"({"sluice":{"drainMs":200},"mcpServers":{"conf":)" +
                                           bj::serialize(entry) + "}}");
    sluice_ =
        std::make_unique<Sluice>(std::vector<std::string>{"serve", "--no-discover", "--config",
                                                          cfg.string(), "--expose", "all"},
                                 dir_.path(), dir_.path());
  }
  void TearDown() override {
    expect_clean_exit(*sluice_);
    sluice_.reset();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }
  bj::value call(const std::string& id, const std::string& params,
                 const std::string& method = "tools/call") {
    return bj::parse(sluice_->request_raw(method, params, id));
  }
  // The one input request of an input_required result: its key.
  static std::string only_key(const bj::value& response) {
    const auto& inputs = response.at("result").at("inputRequests").as_object();
    EXPECT_EQ(inputs.size(), 1u) << response;
    return inputs.empty() ? "" : std::string(inputs.begin()->key());
  }
  static std::string state_of(const bj::value& response) {
    return bj::serialize(response.at("result").at("requestState"));
  }
  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(InputBridgeStdio, AnElicitationBecomesInputRequiredAndTheRetryCompletesTheCall) {
  auto first = call("1", call_params("test_input_required_result_elicitation"));
  const auto& result = first.at("result");
  ASSERT_EQ(result.at("resultType"), "input_required") << first;
  std::string key = only_key(first);
  const auto& asked = result.at("inputRequests").at(key);
  EXPECT_EQ(asked.at("method"), "elicitation/create");
  EXPECT_EQ(asked.at("params").at("message"), "What is your name?") << "the server's own params";
  ASSERT_TRUE(result.at("requestState").is_string()) << first;

  std::string answer = R"("inputResponses":{")" + key + R"(":)" + accept(R"({"name":"Ada"})") +
                       R"(},"requestState":)" + state_of(first);
  auto second = call("2", call_params("test_input_required_result_elicitation", answer));
  EXPECT_EQ(second.at("result").at("resultType"), "complete") << second;
  EXPECT_EQ(second.at("result").at("content").at(0).at("text"), "Hello, Ada!") << second;

  // The state was used: handing it back again is a replay.
  auto replay = call("3", call_params("test_input_required_result_elicitation", answer));
  ASSERT_TRUE(replay.as_object().contains("error")) << replay;
  EXPECT_EQ(replay.at("error").at("code"), -32602) << replay;
}

TEST_F(InputBridgeStdio, AStateThatWasAlteredOrIsForAnotherRequestIsRefused) {
  auto first = call("1", call_params("test_input_required_result_request_state"));
  ASSERT_EQ(first.at("result").at("resultType"), "input_required") << first;
  std::string key = only_key(first);
  std::string state(first.at("result").at("requestState").as_string());
  auto with_state = [&](const std::string& s) {
    return R"("inputResponses":{")" + key + R"(":)" + accept(R"({"ok":true})") +
           R"(},"requestState":)" + bj::serialize(bj::value(s));
  };
  std::string altered = state;
  altered[3] = altered[3] == '1' ? '2' : '1';  // another exchange's number, same MAC
  for (const auto& [name, params] : std::vector<std::pair<std::string, std::string>>{
           {"tampered", call_params("test_input_required_result_request_state",
                                    with_state(state + "-TAMPERED"))},
           {"altered",
            call_params("test_input_required_result_request_state", with_state(altered))},
           {"another tool",
            call_params("test_input_required_result_tampered_state", with_state(state))}}) {
    SCOPED_TRACE(name);
    auto refused = call("2", params);
    ASSERT_TRUE(refused.as_object().contains("error")) << refused;
    EXPECT_EQ(refused.at("error").at("code"), -32602) << refused;
    EXPECT_EQ(refused.at("error").at("message").as_string().find(state), std::string::npos)
        << "the state is not echoed";
  }
  // The refusals did not spend it: the genuine state still completes the call.
  auto done = call("3", call_params("test_input_required_result_request_state", with_state(state)));
  EXPECT_EQ(done.at("result").at("resultType"), "complete") << done;
  EXPECT_NE(done.at("result").at("content").at(0).at("text").as_string().find("state-ok"),
            std::string::npos)
      << done;
}

TEST_F(InputBridgeStdio, RequestsSentTogetherAreOneRoundAndLaterOnesAnother) {
  auto together = call("1", call_params("test_input_required_result_multiple_inputs"));
  ASSERT_EQ(together.at("result").at("resultType"), "input_required") << together;
  const auto& inputs = together.at("result").at("inputRequests").as_object();
  ASSERT_EQ(inputs.size(), 3u) << "the three requests the server sent at once: " << together;
  std::string responses;
  for (const auto& [key, request] : inputs) {
    std::string method(request.at("method").as_string());
    std::string response =
        method == "elicitation/create" ? accept(R"({"name":"Ada"})")
        : method == "roots/list"
            ? R"({"roots":[{"uri":"file:///work","name":"work"}]})"
            : R"({"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m"})";
    responses += (responses.empty() ? "" : ",") + bj::serialize(bj::value(key)) + ":" + response;
  }
  auto done = call("2", call_params("test_input_required_result_multiple_inputs",
                                    R"("inputResponses":{)" + responses + R"(},"requestState":)" +
                                        state_of(together)));
  EXPECT_EQ(done.at("result").at("content").at(0).at("text"),
            "Hello, Ada! Greeting: Hi. Roots: file:///work")
      << done;

  // A server that asks again after the first answer: a second round, with a new state.
  auto r1 = call("3", call_params("test_input_required_result_multi_round"));
  std::string k1 = only_key(r1);
  auto r2 =
      call("4", call_params("test_input_required_result_multi_round",
                            R"("inputResponses":{")" + k1 + R"(":)" + accept(R"({"name":"Ada"})") +
                                R"(},"requestState":)" + state_of(r1)));
  ASSERT_EQ(r2.at("result").at("resultType"), "input_required") << r2;
  EXPECT_NE(state_of(r2), state_of(r1));
  std::string k2 = only_key(r2);
  // A retry that answers nothing is asked again, not refused.
  auto again = call("5", call_params("test_input_required_result_multi_round",
                                     R"("inputResponses":{},"requestState":)" + state_of(r2)));
  ASSERT_EQ(again.at("result").at("resultType"), "input_required") << again;
  EXPECT_EQ(only_key(again), k2);
  auto r3 = call(
      "6", call_params("test_input_required_result_multi_round",
                       R"("inputResponses":{")" + k2 + R"(":)" + accept(R"({"color":"blue"})") +
                           R"(},"requestState":)" + state_of(again)));
  EXPECT_EQ(r3.at("result").at("content").at(0).at("text"),
            "Hello, Ada! Your favourite colour is blue.")
      << r3;
}

TEST_F(InputBridgeStdio, OnlyDeclaredCapabilitiesAreAskedFor) {
  // Sampling needed, only elicitation declared: -32021 naming what is missing.
  auto refused = call("1", call_params("test_missing_capability", "", R"({"elicitation":{}})"));
  ASSERT_TRUE(refused.as_object().contains("error")) << refused;
  EXPECT_EQ(refused.at("error").at("code"), -32021) << refused;
  EXPECT_TRUE(refused.at("error").at("data").at("requiredCapabilities").at("sampling").is_object())
      << refused;
  // Declared: asked, and answered.
  auto asked = call("2", call_params("test_missing_capability", "", R"({"sampling":{}})"));
  ASSERT_EQ(asked.at("result").at("resultType"), "input_required") << asked;
  auto done = call("3", call_params("test_missing_capability",
                                    R"("inputResponses":{")" + only_key(asked) +
                                        R"(":{"role":"assistant","content":{"type":"text",)"
                                        R"("text":"Paris"},"model":"m"}},"requestState":)" +
                                        state_of(asked),
                                    R"({"sampling":{}})"));
  EXPECT_EQ(done.at("result").at("content").at(0).at("text"), "The client's model said: Paris")
      << done;
}

TEST_F(InputBridgeStdio, APromptCanAskForInputToo) {
  std::string params = R"({"name":"conf__test_input_required_result_prompt",)" + meta(kAll) + "}";
  auto first = call("1", params, "prompts/get");
  ASSERT_EQ(first.at("result").at("resultType"), "input_required") << first;
  std::string key = only_key(first);
  auto done = call("2",
                   R"({"name":"conf__test_input_required_result_prompt","inputResponses":{")" +
                       key + R"(":)" + accept(R"({"context":"tests"})") + R"(},"requestState":)" +
                       state_of(first) + "," + meta(kAll) + "}",
                   "prompts/get");
  EXPECT_EQ(done.at("result").at("messages").at(0).at("content").at("text"), "Context: tests")
      << done;
}

TEST_F(InputBridgeStdio, LogMessagesFollowTheRequestsOwnLogLevel) {
  auto levels = [&]() {
    std::vector<std::string> out;
    for (const auto& line : sluice_->notifications()) {
      bj::value v = bj::parse(line);
      if (v.at("method") == "notifications/message") {
        out.emplace_back(v.at("params").at("level").as_string());
      }
    }
    return out;
  };
  // Without logLevel: no log message at all.
  auto quiet = call("1", call_params("test_logging_tool"));
  EXPECT_EQ(quiet.at("result").at("resultType"), "complete") << quiet;
  EXPECT_TRUE(levels().empty());
  // With logLevel info: the info message, not the debug one.
  auto loud = call("2", R"({"name":"conf__test_logging_tool","arguments":{},)" +
                            meta("{}", R"(,"io.modelcontextprotocol/logLevel":"info")") + "}");
  EXPECT_EQ(loud.at("result").at("resultType"), "complete") << loud;
  EXPECT_EQ(levels(), std::vector<std::string>{"info"});
}

// subscriptions/listen: acknowledged first with what it will carry, then only the list
// changes it opted in to, each tagged with its subscriptionId; a cancel ends it unanswered.
TEST_F(InputBridgeStdio, AListenStreamCarriesOnlyWhatItOptedInToTaggedWithItsId) {
  sluice_->request("tools/list", "{}");  // starts the fixture
  sluice_->send(R"({"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":)"
                R"({"notifications":{"promptsListChanged":true,)"
                R"("resourceSubscriptions":["test://watched-resource","test://nobody-has-it"]},)" +
                meta("{}") + "}}");
  auto ack = sluice_->read_line();
  ASSERT_TRUE(ack.has_value());
  bj::value a = bj::parse(*ack);
  EXPECT_EQ(a.at("method"), "notifications/subscriptions/acknowledged") << *ack;
  EXPECT_EQ(a.at("params").at("_meta").at("io.modelcontextprotocol/subscriptionId"), "listen-1");
  EXPECT_EQ(bj::serialize(a.at("params").at("notifications")),
            R"({"promptsListChanged":true,"resourceSubscriptions":["test://watched-resource"]})")
      << "only what sluice honours: a URI no server has is left out";
  // A tool list change is not asked for; a prompt list change is.
  call("1", call_params("test_trigger_tool_change"));
  call("2", call_params("test_trigger_prompt_change"));
  // The change reaches the stream after the call's answer: lines are read (with a cheap
  // request) until it came, bounded.
  auto tagged_methods = [&] {
    std::vector<std::string> out;
    for (const auto& line : sluice_->notifications()) {
      bj::value n = bj::parse(line);
      const auto* params = n.as_object().if_contains("params");
      const auto* tag =
          params && params->is_object() ? params->as_object().if_contains("_meta") : nullptr;
      if (!tag) continue;
      EXPECT_EQ(tag->at("io.modelcontextprotocol/subscriptionId"), "listen-1") << line;
      out.emplace_back(n.at("method").as_string());
    }
    return out;
  };
  std::vector<std::string> seen = tagged_methods();
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (std::find(seen.begin(), seen.end(), "notifications/prompts/list_changed") == seen.end() &&
         std::chrono::steady_clock::now() < deadline) {
    call("3", "{" + meta("{}") + "}", "tools/list");
    seen = tagged_methods();
  }
  EXPECT_NE(std::find(seen.begin(), seen.end(), "notifications/prompts/list_changed"), seen.end());
  EXPECT_EQ(std::find(seen.begin(), seen.end(), "notifications/tools/list_changed"), seen.end())
      << "a type the stream did not ask for";
  sluice_->send(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen-1"}})");
}

// Over HTTP: -32021 is answered with HTTP 400; a client that never retries has its work
// cancelled at the bound, and that is counted.
class InputBridgeHttp : public HttpFrontEnd {
 protected:
  Headers modern(const std::string& method, const std::string& name) const {
    Headers h = headers();
    h.emplace_back("MCP-Protocol-Version", "2026-07-28");
    h.emplace_back("Mcp-Method", method);
    h.emplace_back("Mcp-Name", name);
    return h;
  }
  // The value of metric `name` in /metrics (-1 when absent).
  long metric(const std::string& name) {
    auto m = exchange("GET", "/metrics", {{"Host", host()}});
    auto at = m.body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stol(m.body.substr(at + name.size() + 2));
  }
  void start_with_conformance_fixture(const std::string& policy) {
    bj::object entry{{"command", CONFORMANCE_SERVER},
                     {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
    auto cfg = dir_.write("conf.json", R"({"sluice":)" + policy + R"(,"mcpServers":{"conf":)" +
                                           bj::serialize(entry) + "}}");
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--transport", "http", "--host", "127.0.0.1", "--port",
                                 "0", "--no-discover", "--config", cfg.string(), "--port-file",
                                 (dir_.path() / "port").string(), "--state-dir",
                                 (dir_.path() / "state").string(), "--expose", "all"},
        dir_.path(), dir_.path());
    port_ = read_port(*sluice_, dir_.path() / "port");
    ASSERT_GT(port_, 0) << sluice_->stderr_text();
  }
};

TEST_F(InputBridgeHttp, AMissingCapabilityIsABadRequestAndAnAbandonedWaitEndsAtItsBound) {
  start_with_conformance_fixture(R"({"callTimeoutMs":1000,"abandonMs":1000,"drainMs":200})");
  const std::string tool = "conf__test_input_required_result_sampling";
  auto refused = post(
      rpc("1", "tools/call", R"({"name":")" + tool + R"(","arguments":{},)" + meta("{}") + "}"),
      modern("tools/call", tool));
  EXPECT_EQ(refused.status, 400) << refused.all();
  EXPECT_EQ(bj::parse(refused.body).at("error").at("code"), -32021) << refused.body;

  auto asked = post(
      rpc("2", "tools/call", R"({"name":")" + tool + R"(","arguments":{},)" + meta(kAll) + "}"),
      modern("tools/call", tool));
  ASSERT_EQ(asked.status, 200) << asked.all();
  EXPECT_EQ(bj::parse(asked.body).at("result").at("resultType"), "input_required") << asked.body;
  EXPECT_EQ(metric("sluice_input_required_waiting"), 1);
  // Never retried: at the bound (callTimeoutMs) the wait ends and the work is cancelled.
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (metric("sluice_input_required_abandoned_total") != 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);  // a counter in another process: polled, bounded
  }
  EXPECT_EQ(metric("sluice_input_required_abandoned_total"), 1);
  EXPECT_EQ(metric("sluice_input_required_waiting"), 0);
  EXPECT_EQ(metric("sluice_missing_client_capability_total"), 1);
  // Its call was cancelled like any other: it keeps its permit until the server answers or
  // exits (the fixture, like the SDK, does not answer a cancelled call), so it is still
  // counted among the pending calls.
  EXPECT_EQ(metric("sluice_input_required_resumed_total"), 0);
}

}  // namespace
}  // namespace sluice::test
