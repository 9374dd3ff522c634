// 2026-07-28 servers behind sluice, through the real binary: the server/discover probe (and
// the fall back to initialize for a 2025 server beside it), sluice's _meta on every request,
// an input_required result completed by asking a 2025 client and retrying with its answers,
// list changes on the listen stream sluice holds open, the log level riding in _meta, and a
// remote 2026 server over HTTP (another sluice) bridged both ways.
#include "harness.hpp"

#include <fstream>
#include <sstream>

namespace sluice::test {
namespace {

class ModernDownstream : public ::testing::Test {
 protected:
  // Sluice over stdio with the 2026 fixture as `m` and the 2025 fixture as `fx`.
  void start(bool with_2025 = true) {
    bj::object servers{{"m", entry(MODERN_SERVER, {"--log=" + log_.string()})}};
    if (with_2025) servers["fx"] = entry(FIXTURE_SERVER, {});
    auto cfg = dir_.write(".mcp.json", bj::serialize(bj::object{{"mcpServers", servers}}));
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string(), "--expose",
                                 "all", "--state-dir", (dir_.path() / "state").string()},
        dir_.path(), dir_.path());
  }
  bj::object entry(const std::string& command, std::vector<std::string> args) const {
    bj::array a;
    for (auto& s : args) a.emplace_back(s);
    return bj::object{
        {"command", command}, {"args", a}, {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
  }
  void initialize(const std::string& capabilities) {
    sluice_->request("initialize", R"({"protocolVersion":"2025-11-25","capabilities":)" +
                                       capabilities +
                                       R"(,"clientInfo":{"name":"t","version":"1"}})");
    sluice_->send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }
  // A tools/call answered while sluice asks this client things: each request it sends is
  // recorded in asked_ and answered with `answer` (raw result JSON). Returns the response.
  bj::value call_answering(const std::string& id, const std::string& tool,
                           const std::string& answer) {
    sluice_->send(R"({"jsonrpc":"2.0","id":)" + id +
                  R"(,"method":"tools/call","params":{"name":")" + tool + R"(","arguments":{}}})");
    for (;;) {
      auto line = sluice_->read_line();
      if (!line) return bj::value();
      auto message = bj::parse(*line);
      const auto& m = message.as_object();
      if (m.contains("method") && m.contains("id")) {
        asked_.push_back(message);
        sluice_->send(R"({"jsonrpc":"2.0","id":)" + bj::serialize(m.at("id")) + R"(,"result":)" +
                      answer + "}");
      } else if (m.contains("method")) {
        notes_.push_back(std::string(m.at("method").as_string()));
      } else if (m.contains("id") && bj::serialize(m.at("id")) == id) {
        return message;
      }
    }
  }
  std::vector<std::string> request_log() const {
    std::ifstream in(log_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  void TearDown() override {
    if (sluice_) expect_clean_exit(*sluice_);
    sluice_.reset();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }

  TempDir dir_;
  std::filesystem::path log_ = dir_.path() / "requests.log";
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
  std::vector<bj::value> asked_;
  std::vector<std::string> notes_;
};

TEST_F(ModernDownstream, TheProbeFindsA2026ServerThatGetsSluicesMetaAndNoInitialize) {
  start();
  initialize("{}");
  auto listed = sluice_->request("tools/list", "{}");
  std::set<std::string> names;
  for (const auto& t : listed.at("result").at("tools").as_array()) {
    names.insert(std::string(t.at("name").as_string()));
  }
  EXPECT_TRUE(names.count("m__echo")) << listed;
  EXPECT_TRUE(names.count("fx__echo")) << "a 2025 server beside it still initializes";
  auto echo = sluice_->call_tool("m__echo", R"({"text":"modern"})");
  EXPECT_EQ(text_of(echo), "modern") << echo;

  auto log = request_log();
  ASSERT_FALSE(log.empty());
  EXPECT_TRUE(log.front().starts_with("server/discover ")) << log.front();
  bool called = false;
  for (const auto& line : log) {
    EXPECT_FALSE(line.starts_with("initialize")) << "a 2026 server gets no initialize";
    auto meta = bj::parse(line.substr(line.find(' ') + 1)).as_object();
    ASSERT_TRUE(meta.contains("io.modelcontextprotocol/clientInfo")) << line;
    EXPECT_EQ(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28") << line;
    EXPECT_TRUE(meta["io.modelcontextprotocol/clientCapabilities"].is_object()) << line;
    EXPECT_EQ(meta["io.modelcontextprotocol/clientInfo"].at("name"), "sluice") << line;
    called = called || line.starts_with("tools/call ");
  }
  EXPECT_TRUE(called);
}

TEST_F(ModernDownstream, AStatelessCallersOwnLogLevelIsTheOneTheServerIsTold) {
  start(false);
  // A 2025 client sets the level sluice tells servers; a 2026 caller's own level wins for its
  // requests.
  initialize("{}");
  sluice_->request("logging/setLevel", R"({"level":"error"})");
  auto called =
      sluice_->request("tools/call", R"({"name":"m__echo","arguments":{"text":"x"},"_meta":{)"
                                     R"("io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                     R"("io.modelcontextprotocol/clientCapabilities":{},)"
                                     R"("io.modelcontextprotocol/logLevel":"debug"}})");
  ASSERT_TRUE(called.as_object().contains("result")) << called;
  auto echo = sluice_->call_tool("m__echo", R"({"text":"y"})");
  EXPECT_EQ(text_of(echo), "y");
  std::vector<std::string> levels;
  for (const auto& line : request_log()) {
    if (!line.starts_with("tools/call ")) continue;
    auto meta = bj::parse(line.substr(line.find(' ') + 1)).as_object();
    const auto* level = meta.if_contains("io.modelcontextprotocol/logLevel");
    levels.push_back(level ? std::string(level->as_string()) : "");
  }
  EXPECT_EQ(levels, (std::vector<std::string>{"debug", "error"}));
}

// A stateless tools/list's ttlMs, with `servers` behind sluice.
std::int64_t listed_ttl(Sluice& sluice) {
  auto listed =
      sluice.request("tools/list", R"({"_meta":{)"
                                   R"("io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                   R"("io.modelcontextprotocol/clientCapabilities":{}}})");
  return listed.at("result").at("ttlMs").as_int64();
}

TEST_F(ModernDownstream, TheAggregateToolListKeepsWhatItsServersTtlHasLeft) {
  start(false);
  sluice_->request("tools/list", "{}");  // the server listed (its ttlMs: 60 s)
  std::int64_t ttl = listed_ttl(*sluice_);
  EXPECT_GT(ttl, 50000) << "the server's 60 s, less the moments since it listed";
  EXPECT_LE(ttl, 60000);
}

TEST_F(ModernDownstream, AServerThatGaveNoTtlMakesTheAggregateToolListsZero) {
  start(true);  // beside a 2025 server, which gives no ttlMs
  sluice_->request("tools/list", "{}");
  EXPECT_EQ(listed_ttl(*sluice_), 0);
}

TEST_F(ModernDownstream, InputRequiredIsAskedOfTheClientAndTheCallRetriedWithTheAnswers) {
  start(false);
  initialize(R"({"elicitation":{},"roots":{}})");
  auto greeted =
      call_answering("5", "m__ask_name", R"({"action":"accept","content":{"name":"Ada"}})");
  ASSERT_EQ(asked_.size(), 1u) << greeted;
  EXPECT_EQ(asked_[0].at("method"), "elicitation/create");
  EXPECT_EQ(asked_[0].at("params").at("message"), "What is your name?") << "the server's params";
  // The fixture greets only when the retry echoes its requestState with the answer.
  EXPECT_EQ(text_of(greeted.at("result")), "Hello, Ada!") << greeted;

  auto counted = call_answering("6", "m__ask_roots", R"({"roots":[{"uri":"file:///a"}]})");
  EXPECT_EQ(text_of(counted.at("result")), "roots: 1") << counted;
}

TEST_F(ModernDownstream, AClientWithoutTheCapabilityIsNeverAskedAndTheCallFails) {
  start(false);
  initialize(R"({"elicitation":{}})");
  auto refused = call_answering("7", "m__ask_capital", "{}");
  EXPECT_TRUE(asked_.empty()) << "sampling was asked of a client that did not declare it";
  EXPECT_TRUE(is_error(refused.at("result"))) << refused;
  EXPECT_NE(text_of(refused.at("result")).find("sampling"), std::string::npos) << refused;
}

TEST_F(ModernDownstream, ListChangesComeOverTheListenStreamAndTheLogLevelRidesInMeta) {
  start(false);
  initialize("{}");
  sluice_->request("tools/list", "{}");
  call_answering("8", "m__change_tools", "{}");
  // The list change reaches the client, and the new list has the new tool.
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  bool added = false;
  while (!added && std::chrono::steady_clock::now() < deadline) {
    auto listed = sluice_->request("tools/list", "{}");
    for (const auto& t : listed.at("result").at("tools").as_array()) {
      added = added || t.at("name") == "m__added_later";
    }
  }
  EXPECT_TRUE(added) << "the listen stream's list change was not acted on";

  sluice_->request("logging/setLevel", R"({"level":"info"})");
  call_answering("9", "m__log", "{}");
  auto log = request_log();
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find(R"("io.modelcontextprotocol/logLevel":"info")"), std::string::npos)
      << log.back();
  bool listened = false, set_level = false;
  for (const auto& line : log) {
    listened = listened || line.starts_with("subscriptions/listen ");
    set_level = set_level || line.starts_with("logging/setLevel");
  }
  EXPECT_TRUE(listened);
  EXPECT_FALSE(set_level) << "logging/setLevel is a removed method in 2026-07-28";
}

// The listen streams sluice holds open on a 2026 server are waiting, not activity: the server
// is still stopped when idle for its timeout.
TEST_F(ModernDownstream, ItsListenStreamsDoNotKeepAnIdleServerUp) {
  bj::object m = entry(MODERN_SERVER, {});
  m["idleTimeoutMs"] = 1000;
  auto cfg = dir_.write(".mcp.json", bj::serialize(bj::object{{"mcpServers", {{"m", m}}}}));
  sluice_ = std::make_unique<Sluice>(
      std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string(), "--state-dir",
                               (dir_.path() / "state").string()},
      dir_.path(), dir_.path());
  sluice_->initialize();
  auto echoed =
      sluice_->call_tool("gateway.invoke", R"({"tool_id":"m::echo","arguments":{"text":"once"}})");
  EXPECT_EQ(text_of(echoed), "once");
  ASSERT_EQ(processes_with_marker(marker_).size(), 1u);
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "the idle 2026 server was not stopped";
}

// The lifetime a 2026 server gives its tool list (ttlMs) is kept in the catalog cache: a later
// run that has not started the server says how long the server meant it and that it is fresh.
TEST_F(ModernDownstream, TheCatalogSaysHowFreshACachedListIsByTheServersOwnLifetime) {
  auto cfg = dir_.write(
      ".mcp.json", bj::serialize(bj::object{{"mcpServers", {{"m", entry(MODERN_SERVER, {})}}}}));
  auto run = [&] {
    auto s = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string(), "--state-dir",
                                 (dir_.path() / "state").string()},
        dir_.path(), dir_.path());
    s->initialize();
    return s;
  };
  auto search = [](Sluice& s) {
    return s.call_tool("gateway.catalog_search", R"({"query":"greets name"})")
        .at("structuredContent");
  };
  {
    auto first = run();  // the search indexes the server (starts and lists it)
    auto found = search(*first);
    ASSERT_FALSE(found.at("results").as_array().empty()) << found;
    expect_clean_exit(*first);
    ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  sluice_ = run();
  auto found = search(*sluice_);
  ASSERT_FALSE(found.at("results").as_array().empty()) << found;
  const auto& card = found.at("results").at(0);
  EXPECT_EQ(card.at("tool_id"), "m::ask_name") << card;
  EXPECT_EQ(card.at("source"), "cached") << card;
  EXPECT_EQ(card.at("server_ttl_s"), 60) << card;
  EXPECT_EQ(card.at("fresh"), true) << card;
  EXPECT_TRUE(processes_with_marker(marker_).empty()) << "the cached list was enough";
}

// A 2026 client and a 2026 server: the server's input_required reaches the client through
// sluice (its keys are sluice's, as for any server asking), and the retry completes the call.
TEST_F(ModernDownstream, A2026ClientGetsA2026ServersInputThroughTheBridge) {
  start(false);
  const std::string meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                           R"("io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}})";
  auto first = bj::parse(sluice_->request_raw(
      "tools/call", R"({"name":"m__ask_name","arguments":{},)" + meta + "}", "1"));
  const auto& result = first.at("result");
  ASSERT_EQ(result.at("resultType"), "input_required") << first;
  const auto& inputs = result.at("inputRequests").as_object();
  ASSERT_EQ(inputs.size(), 1u) << first;
  const std::string key(inputs.begin()->key());
  EXPECT_EQ(inputs.begin()->value().at("method"), "elicitation/create") << first;
  auto second = bj::parse(sluice_->request_raw(
      "tools/call",
      R"({"name":"m__ask_name","arguments":{},"inputResponses":{")" + key +
          R"(":{"action":"accept","content":{"name":"Lin"}}},"requestState":)" +
          bj::serialize(result.at("requestState")) + "," + meta + "}",
      "2"));
  EXPECT_EQ(second.at("result").at("resultType"), "complete") << second;
  EXPECT_EQ(text_of(second.at("result")), "Hello, Lin!") << second;
}

// A remote 2026 server over HTTP: another sluice, which serves 2026 requests statelessly,
// fronting the 2026 fixture. Its probe, headers and input_required go both ways across the two.
TEST_F(ModernDownstream, ARemote2026ServerIsProbedOverHttpAndBridgedBothWays) {
  auto inner_cfg = dir_.write(
      "inner.json",
      bj::serialize(bj::object{{"mcpServers", bj::object{{"m", entry(MODERN_SERVER, {})}}}}));
  const auto port_file = dir_.path() / "port";
  Sluice inner({"serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0", "--port-file",
                port_file.string(), "--no-discover", "--config", inner_cfg.string(), "--expose",
                "all", "--state-dir", (dir_.path() / "inner-state").string()},
               dir_.path(), dir_.path());
  ASSERT_TRUE(wait_file(port_file)) << inner.stderr_text();
  int port = 0;
  for (auto deadline = std::chrono::steady_clock::now() + kGuard;
       port == 0 && std::chrono::steady_clock::now() < deadline;) {
    std::ifstream(port_file) >> port;
  }
  ASSERT_GT(port, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  auto cfg = dir_.write(
      ".mcp.json",
      bj::serialize(bj::object{{"mcpServers", bj::object{{"in", bj::object{{"url", url}}}}}}));
  sluice_ = std::make_unique<Sluice>(
      std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string(), "--expose",
                               "all", "--state-dir", (dir_.path() / "state").string()},
      dir_.path(), dir_.path());
  initialize(R"({"elicitation":{}})");
  auto greeted =
      call_answering("3", "in__m__ask_name", R"({"action":"accept","content":{"name":"Grace"}})");
  ASSERT_EQ(asked_.size(), 1u) << greeted;
  EXPECT_EQ(asked_[0].at("method"), "elicitation/create");
  EXPECT_EQ(text_of(greeted.at("result")), "Hello, Grace!") << greeted;
  expect_clean_exit(*sluice_);
  sluice_.reset();
  // The outer sluice spoke 2026-07-28 to the inner one (not initialize, which it also serves).
  std::string logs;
  for (const auto& f : std::filesystem::directory_iterator(dir_.path() / "state" / "logs")) {
    std::ifstream in(f.path());
    logs += std::string(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_NE(logs.find("server in: online, 8 tools, protocol 2026-07-28"), std::string::npos)
      << logs;
  inner.signal(SIGTERM);
  EXPECT_EQ(inner.wait_exit(), 0) << inner.stderr_text();
}

}  // namespace
}  // namespace sluice::test
