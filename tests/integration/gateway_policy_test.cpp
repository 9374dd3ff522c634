// Gateway-wide rules through the real binary: one stale check for every path to a downstream,
// concurrent starts and teardowns, the user's timeouts (per server, default, progress,
// ceiling), roots changes passed on, bounded health and search, schemas sluice cannot
// compile, writes serialised per stdio server, names shown with suggestions, one check for
// every `force`.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

bool gateway_policy_contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Asks `done` again until it holds or the guard passes (each ask is a round trip to sluice).
template <typename F>
bool eventually(F done) {
  auto until = std::chrono::steady_clock::now() + kGuard;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
  }
  return false;
}

// One fixture server entry, as JSON text, with extra members merged in.
std::string entry(const std::string& marker, const std::vector<std::string>& args,
                  const std::string& extra_members = "") {
  std::string e = fixture_entry(marker, args);
  if (!extra_members.empty()) e = e.substr(0, e.size() - 1) + "," + extra_members + "}";
  return e;
}

class GatewayPolicy : public ::testing::Test {
 protected:
  // `servers`: the inside of mcpServers; `settings`: the top-level "sluice" object.
  void start(const std::string& servers, const std::vector<std::string>& flags = {},
             const std::string& settings = "{}", const std::string& binary = SLUICE_BINARY) {
    auto cfg = dir_.write("cfg/.mcp.json",
                          R"({"mcpServers":{)" + servers + R"(},"sluice":)" + settings + "}");
    std::vector<std::string> args{"serve", "--log-stderr", "--no-discover", "--config",
                                  cfg.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path(), binary);
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  bj::value invoke(const std::string& tool_id, const std::string& arguments) {
    return sluice_->call_tool("gateway.invoke",
                              R"({"tool_id":")" + tool_id + R"(","arguments":)" + arguments + "}");
  }
  // Servers s1..sN that each wait at `gate` while starting (see --start-gate).
  std::string gated_servers(int n, const std::string& gate) const {
    std::string servers;
    for (int i = 1; i <= n; ++i) {
      if (i > 1) servers += ",";
      std::string name = "s" + std::to_string(i);
      servers += "\"" + name + "\":" + entry(marker_, {"--name=" + name, "--start-gate=" + gate});
    }
    return servers;
  }
  bj::value health(const std::string& args = "{}") {
    return sluice_->call_tool("gateway.health", args).at("structuredContent");
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

// Item 3: with failClosedWhenStale, a direct server__tool call, prompts/get and the
// lifecycle meta-tools are refused exactly like gateway.invoke.
TEST_F(GatewayPolicy, AStaleBinaryFailsClosedOnEveryPathThatReachesADownstream) {
  fs::path copy = dir_.path() / "sluice_copy";
  fs::copy_file(SLUICE_BINARY, copy);
  fs::permissions(copy, fs::perms::owner_all);
  start(R"("fx":)" + entry(marker_, {}), {"--expose", "meta,all"},
        R"({"failClosedWhenStale":true})", copy.string());
  sluice_->initialize();
  auto listed = sluice_->request("tools/list", "{}");
  ASSERT_TRUE(listed.as_object().contains("result"));
  EXPECT_FALSE(is_error(sluice_->call_tool("fx__echo", R"({"text":"before"})")));
  fs::path tmp = copy.string() + ".new";
  fs::copy_file(SLUICE_BINARY, tmp);
  fs::rename(tmp, copy);

  auto direct = sluice_->call_tool("fx__echo", R"({"text":"after"})");
  EXPECT_TRUE(is_error(direct));
  EXPECT_TRUE(gateway_policy_contains(text_of(direct), "gw_binary_stale")) << text_of(direct);
  for (const char* tool :
       {"gateway.connect_server", "gateway.restart_server", "gateway.disconnect_server"}) {
    auto r = sluice_->call_tool(tool, R"({"server_name":"fx"})");
    EXPECT_TRUE(is_error(r)) << tool;
    EXPECT_TRUE(gateway_policy_contains(text_of(r), "gw_binary_stale"))
        << tool << ": " << text_of(r);
  }
  auto prompt = sluice_->request("prompts/get", R"({"name":"fx__anything"})");
  ASSERT_TRUE(prompt.as_object().contains("error")) << bj::serialize(prompt);
  EXPECT_TRUE(gateway_policy_contains(bj::serialize(prompt), "gw_binary_stale"));
  // What reaches no downstream still answers: lists, search, health.
  EXPECT_TRUE(sluice_->request("tools/list", "{}").as_object().contains("result"));
  EXPECT_FALSE(is_error(sluice_->call_tool("gateway.catalog_search", "{}")));
  EXPECT_EQ(health().at("servers").at(0).at("status"), "online");
}

// Item 5: every lazy server of an aggregate listing starts at once, not one after another:
// each fixture waits at a gate until the test opens it, so serial starts would leave only one
// started.
TEST_F(GatewayPolicy, TheFirstAggregateListingStartsEveryServerAtOnce) {
  const std::string gate = (dir_.path() / "gate").string();
  start(gated_servers(5, gate), {"--expose", "all"});
  sluice_->initialize();
  sluice_->send(R"({"jsonrpc":"2.0","id":"list","method":"tools/list"})");
  for (int i = 1; i <= 5; ++i) {
    EXPECT_TRUE(wait_file(gate + ".started.s" + std::to_string(i))) << "s" << i;
  }
  std::ofstream(gate).put('\n');
  for (;;) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line);
    if (!gateway_policy_contains(*line, "\"id\":\"list\"")) continue;  // list_changed notifications
    auto list = bj::parse(*line);
    EXPECT_EQ(list.at("result").at("tools").as_array().size(), 5u * 13u) << *line;
    break;
  }
}

// Item 5: --start-concurrency bounds the starts: with 2, two servers start and the rest wait.
TEST_F(GatewayPolicy, StartConcurrencyBoundsHowManyServersStartAtOnce) {
  const std::string gate = (dir_.path() / "gate").string();
  start(gated_servers(3, gate), {"--expose", "meta,all", "--start-concurrency", "2"});
  sluice_->initialize();
  sluice_->send(R"({"jsonrpc":"2.0","id":"list","method":"tools/list"})");
  ASSERT_TRUE(wait_file(gate + ".started.s1"));
  ASSERT_TRUE(wait_file(gate + ".started.s2"));
  // Health answers meanwhile (the starts do not block the loop): two starting, one lazy.
  auto counts = health().at("servers_by_status");
  EXPECT_EQ(counts.at("starting"), 2) << bj::serialize(counts);
  EXPECT_EQ(counts.at("lazy"), 1) << bj::serialize(counts);
  std::ofstream(gate).put('\n');
  auto line = sluice_->read_line();
  ASSERT_TRUE(line);
  EXPECT_TRUE(wait_file(gate + ".started.s3"));
}

// Item 5: shutdown tears every server down at once: all of them get SIGTERM before any gets
// SIGKILL (serial teardowns would alternate).
TEST_F(GatewayPolicy, ShutdownTearsEveryServerDownAtOnce) {
  std::string servers;
  for (int i = 1; i <= 4; ++i) {
    if (i > 1) servers += ",";
    servers += "\"t" + std::to_string(i) + "\":" + entry(marker_, {"--mode=ignore-sigterm"});
  }
  start(servers, {"--expose", "all", "--log-level", "debug"});
  sluice_->initialize();
  ASSERT_TRUE(sluice_->request("tools/list", "{}").as_object().contains("result"));
  sluice_->close_stdin();
  ASSERT_EQ(sluice_->wait_exit(), 0);
  sluice_->join_stderr();
  std::string log = sluice_->stderr_text();
  std::size_t last_term = 0, first_kill = std::string::npos;
  for (int i = 1; i <= 4; ++i) {
    std::string name = "server t" + std::to_string(i);
    std::size_t term = log.find(name + ": still running after its stdin closed");
    std::size_t kill = log.find(name + ": SIGKILL to its group");
    ASSERT_NE(term, std::string::npos) << name;
    ASSERT_NE(kill, std::string::npos) << name;
    last_term = std::max(last_term, term);
    first_kill = std::min(first_kill, kill);
  }
  EXPECT_LT(last_term, first_kill) << "teardowns ran one after another";
  sluice_.reset();
}

// Item 6: the timeout is the user's: --call-timeout-ms, and a server's timeoutMs over it, in
// both modes.
TEST_F(GatewayPolicy, CallTimeoutsComeFromTheFlagAndTheServerEntryInBothModes) {
  start(R"("fx":)" + entry(marker_, {}) + R"(,"quick":)" +
            entry(marker_, {}, R"("timeoutMs":1000)") + R"(,"idle":)" + entry(marker_, {}),
        {"--expose", "meta,all", "--call-timeout-ms", "1500"});
  sluice_->initialize();
  auto late = invoke("fx::slow", R"({"ms":4000})");
  EXPECT_TRUE(is_error(late));
  EXPECT_TRUE(gateway_policy_contains(text_of(late), "within 1500 ms")) << text_of(late);
  auto direct = sluice_->call_tool("quick__slow", R"({"ms":3000})");
  EXPECT_TRUE(is_error(direct));
  EXPECT_TRUE(gateway_policy_contains(text_of(direct), "within 1000 ms")) << text_of(direct);
  // (fx and quick still run the abandoned calls: the fixture serves one call at a time.)
  EXPECT_FALSE(is_error(sluice_->call_tool("idle__slow", R"({"ms":10})")));
}

// Item 6: progress from the downstream restarts the inactivity timeout (the client did not
// ask for progress), up to the ceiling.
TEST_F(GatewayPolicy, ProgressExtendsTheTimeoutUpToTheCeiling) {
  start(R"("fx":)" + entry(marker_, {}),
        {"--expose", "all", "--call-timeout-ms", "1000", "--max-call-ms", "5000"});
  sluice_->initialize();
  // 8 ticks 400 ms apart: 3.2 s in all, never 1 s without progress.
  auto ticked = sluice_->call_tool("fx__tick", R"({"steps":8,"interval_ms":400})");
  EXPECT_FALSE(is_error(ticked)) << text_of(ticked);
  EXPECT_EQ(text_of(ticked), "ticked 8 times");
  // 20 ticks: 8 s, past the 5 s ceiling.
  auto capped = sluice_->call_tool("fx__tick", R"({"steps":20,"interval_ms":400})");
  EXPECT_TRUE(is_error(capped)) << text_of(capped);
  // The client asked for no progress: none reached it.
  for (const auto& n : sluice_->notifications()) {
    EXPECT_FALSE(gateway_policy_contains(n, "notifications/progress")) << n;
  }
}

// Item 11: the client's roots/list_changed reaches the server that asked for roots.
TEST_F(GatewayPolicy, RootsChangesReachTheServersThatAskedForRoots) {
  fs::path marker_file = dir_.path() / "roots-changed";
  start(R"("fx":)" +
            entry(marker_, {"--mode=roots-watcher", "--roots-marker=" + marker_file.string()}),
        {"--expose", "all"});
  sluice_->request("initialize",
                   R"({"protocolVersion":"2025-06-18","capabilities":{"roots":)"
                   R"({"listChanged":true}},"clientInfo":{"name":"t","version":"1"}})");
  sluice_->send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  sluice_->send(R"({"jsonrpc":"2.0","id":"list","method":"tools/list"})");
  // The server asks for roots once initialized: sluice relays the request to us.
  std::optional<bj::value> roots_request;
  while (!roots_request) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line) << "no roots/list request reached the client";
    if (gateway_policy_contains(*line, "\"roots/list\"")) roots_request = bj::parse(*line);
  }
  sluice_->send(R"({"jsonrpc":"2.0","id":)" + bj::serialize(roots_request->at("id")) +
                R"(,"result":{"roots":[{"uri":"file:///tmp","name":"tmp"}]}})");
  sluice_->send(R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  EXPECT_TRUE(wait_file(marker_file));
}

// Item 15: health and search stay bounded with a large fleet; health pages through it.
TEST_F(GatewayPolicy, HealthAndSearchAreBoundedAndHealthPages) {
  std::string servers;
  for (int i = 0; i < 2500; ++i) {
    if (i > 0) servers += ",";
    servers += "\"lazy" + std::to_string(i) + R"(":{"command":"/nonexistent/never-started"})";
  }
  start(servers);
  sluice_->initialize();
  auto first = health();
  EXPECT_EQ(first.at("servers").as_array().size(), 100u);
  EXPECT_EQ(first.at("servers_by_status").at("lazy"), 2500);
  EXPECT_EQ(first.at("servers_matching"), 2500);
  ASSERT_TRUE(first.as_object().contains("next_cursor"));
  auto second =
      health(R"({"cursor":)" + bj::serialize(first.at("next_cursor")) + R"(,"limit":1000})");
  EXPECT_EQ(second.at("servers").as_array().size(), 1000u);
  EXPECT_EQ(second.at("servers").at(0).at("name"), "lazy100");
  auto one = health(R"({"server":"lazy2499"})");
  ASSERT_EQ(one.at("servers").as_array().size(), 1u);
  EXPECT_FALSE(one.as_object().contains("next_cursor"));
  auto search = sluice_->call_tool("gateway.catalog_search", "{}").at("structuredContent");
  EXPECT_LE(search.at("offline_servers").as_array().size(), 20u);
  EXPECT_EQ(search.at("offline_servers_total"), 2500);
}

// Item 16: a tool whose schema sluice cannot compile is refused, and shown as such.
TEST_F(GatewayPolicy, AToolWhoseSchemaCannotBeCompiledIsRefusedAndShownAsNotValidatable) {
  start(R"("fx":)" + entry(marker_, {"--bad-schema-tool"}));
  sluice_->initialize();
  auto refused = invoke("fx::lookahead", R"({"word":"SENTINEL-schema-4f1"})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_TRUE(gateway_policy_contains(text_of(refused), "cannot be validated")) << text_of(refused);
  EXPECT_FALSE(gateway_policy_contains(text_of(refused), "SENTINEL")) << text_of(refused);
  auto described = sluice_->call_tool("gateway.describe", R"({"tool_id":"fx::lookahead"})");
  EXPECT_EQ(described.at("structuredContent").at("validatable"), false);
  auto card = sluice_->call_tool("gateway.catalog_search", R"({"query":"lookahead"})")
                  .at("structuredContent")
                  .at("results")
                  .at(0);
  EXPECT_EQ(card.at("validatable"), false);
  EXPECT_EQ(health().at("servers").at(0).at("tools_not_validatable"), 1);
}

TEST_F(GatewayPolicy, AnOperatorMayAllowToolsThatCannotBeValidated) {
  start(R"("fx":)" + entry(marker_, {"--bad-schema-tool"}), {},
        R"({"allowUnvalidatedTools":true})");
  sluice_->initialize();
  auto called = invoke("fx::lookahead", R"({"word":"b"})");
  EXPECT_FALSE(is_error(called)) << text_of(called);
  EXPECT_EQ(text_of(called), "called unvalidated");
}

// Item 22: calls of tools without readOnlyHint are serialised per stdio server by default; a
// server's `writes` raises it.
TEST_F(GatewayPolicy, WritesToOneStdioServerAreSerialisedByDefault) {
  start(R"("fx":)" + entry(marker_, {}));
  sluice_->initialize();
  auto gate_call = [&](const std::string& id, const std::string& tag) {
    sluice_->send(R"({"jsonrpc":"2.0","id":")" + id +
                  R"(","method":"tools/call","params":{"name":"gateway.invoke","arguments":)"
                  R"({"tool_id":"fx::gate","arguments":{"path":")" +
                  (dir_.path() / "open").string() + R"(","marker":")" +
                  (dir_.path() / ("done-" + tag)).string() + R"(","started":")" +
                  (dir_.path() / ("started-" + tag)).string() + R"("}}}})");
  };
  gate_call("w1", "a");
  ASSERT_TRUE(wait_file(dir_.path() / "started-a"));
  gate_call("w2", "b");
  // The second write waits for the first: queued, not running.
  EXPECT_TRUE(eventually([&] {
    auto pending = sluice_->call_tool("gateway.list_pending", "{}").at("structuredContent");
    for (const auto& c : pending.at("calls").as_array()) {
      if (c.at("state") == "queued") return true;
    }
    return false;
  }));
  EXPECT_FALSE(fs::exists(dir_.path() / "started-b"));
  auto lane = health().at("servers").at(0).at("write_lane");
  EXPECT_EQ(lane.at("budget"), 1);
  EXPECT_EQ(lane.at("queued"), 1);
  std::ofstream(dir_.path() / "open").put('\n');
  int answered = 0;
  while (answered < 2) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line);
    if (gateway_policy_contains(*line, "\"id\":\"w1\"") ||
        gateway_policy_contains(*line, "\"id\":\"w2\""))
      ++answered;
  }
  EXPECT_TRUE(fs::exists(dir_.path() / "started-b"));
}

TEST_F(GatewayPolicy, AServersWritesSettingLetsWritesRunTogether) {
  start(R"("fx":)" + entry(marker_, {}, R"("sluice":{"writes":2})"));
  sluice_->initialize();
  for (const char* tag : {"a", "b"}) {
    sluice_->send(std::string(R"({"jsonrpc":"2.0","id":"w-)") + tag +
                  R"(","method":"tools/call","params":{"name":"gateway.invoke","arguments":)"
                  R"({"tool_id":"fx::gate","arguments":{"path":")" +
                  (dir_.path() / "open").string() + R"(","marker":")" +
                  (dir_.path() / (std::string("done-") + tag)).string() + R"(","started":")" +
                  (dir_.path() / (std::string("started-") + tag)).string() + R"("}}}})");
  }
  // Both are admitted: running (the fixture itself serves one at a time), none queued.
  EXPECT_TRUE(eventually([&] {
    auto pending = sluice_->call_tool("gateway.list_pending", "{}").at("structuredContent");
    int running = 0;
    for (const auto& c : pending.at("calls").as_array()) running += c.at("state") == "running";
    return running == 2;
  }));
  EXPECT_EQ(health().at("servers").at(0).at("write_lane").at("budget"), 2);
  std::ofstream(dir_.path() / "open").put('\n');
  int answered = 0;
  while (answered < 2) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line);
    if (gateway_policy_contains(*line, "\"id\":\"w-")) ++answered;
  }
}

// Item 24: plain names are shown, with the closest configured ones; what cannot start says
// which command and which directory.
TEST_F(GatewayPolicy, NamesAreShownWithSuggestionsAndStartFailuresNameTheCommand) {
  start(R"("files":)" + entry(marker_, {}) +
        R"(,"nocmd":{"command":"no-such-command-3f9"},)"
        R"("nodir":{"command":"/bin/true","cwd":"/nonexistent-dir-3f9"})");
  sluice_->initialize();
  auto typo = sluice_->call_tool("gateway.connect_server", R"({"server_name":"files2"})");
  EXPECT_TRUE(gateway_policy_contains(text_of(typo), "named files2 (did you mean files?)"))
      << text_of(typo);
  auto tool = invoke("files::ech", "{}");
  EXPECT_TRUE(gateway_policy_contains(text_of(tool), "no tool named ech (did you mean echo?)"))
      << text_of(tool);
  auto odd = sluice_->call_tool("gateway.connect_server", R"({"server_name":"a b\u0007"})");
  EXPECT_TRUE(gateway_policy_contains(text_of(odd), "a string of 4 characters")) << text_of(odd);
  auto nocmd = sluice_->call_tool("gateway.connect_server", R"({"server_name":"nocmd"})");
  EXPECT_TRUE(
      gateway_policy_contains(text_of(nocmd), "command no-such-command-3f9 was not found in PATH"))
      << text_of(nocmd);
  auto nodir = sluice_->call_tool("gateway.connect_server", R"({"server_name":"nodir"})");
  EXPECT_TRUE(gateway_policy_contains(text_of(nodir), "working directory /nonexistent-dir-3f9"))
      << text_of(nodir);
}

// Item 26: forbidForce covers gateway.cancel, and a refused force says what is true.
TEST_F(GatewayPolicy, ForbidForceCoversEveryForceWithATrueMessage) {
  start(R"("fx":)" + entry(marker_, {}), {}, R"({"forbidForce":true})");
  sluice_->initialize();
  auto restart =
      sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx","force":true})");
  EXPECT_TRUE(is_error(restart));
  EXPECT_TRUE(gateway_policy_contains(text_of(restart), "forbidForce")) << text_of(restart);
  EXPECT_TRUE(gateway_policy_contains(text_of(restart), "nothing pending")) << text_of(restart);
  EXPECT_FALSE(gateway_policy_contains(text_of(restart), "has work pending")) << text_of(restart);
  sluice_->send(R"({"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":)"
                R"("gateway.invoke","arguments":{"tool_id":"fx::gate","arguments":{"path":")" +
                (dir_.path() / "open").string() + R"(","marker":")" +
                (dir_.path() / "done").string() + R"(","started":")" +
                (dir_.path() / "started").string() + R"("}}}})");
  ASSERT_TRUE(wait_file(dir_.path() / "started"));
  auto pending = sluice_->call_tool("gateway.list_pending", "{}").at("structuredContent");
  std::string id(pending.at("calls").at(0).at("request_id").as_string());
  auto cancel =
      sluice_->call_tool("gateway.cancel", R"({"request_id":")" + id + R"(","force":true})");
  EXPECT_TRUE(is_error(cancel));
  EXPECT_TRUE(gateway_policy_contains(text_of(cancel), "forbidForce")) << text_of(cancel);
  std::ofstream(dir_.path() / "open").put('\n');
  EXPECT_TRUE(wait_file(dir_.path() / "done")) << "the call was not cancelled";
}

}  // namespace
}  // namespace sluice::test
