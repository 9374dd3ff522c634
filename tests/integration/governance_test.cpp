// invariants §4 through the real binary: restart_server, disconnect_server and
// refresh refuse while work is pending unless forced, force can be forbidden, a restart
// never leaves two generations alive; stale executables are reported; the audit ring
// records calls without their values; class budgets come from annotations.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <map>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

// Replaces `path` with a fresh copy of `source` (a new inode), as an upgrade would.
void replace_file(const fs::path& source, const fs::path& path) {
  fs::path tmp = path.string() + ".new";
  fs::copy_file(source, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, path);
}

class Governance : public ::testing::Test {
 protected:
  void start(const std::string& policy = "{}", const std::string& command = FIXTURE_SERVER,
             const std::string& sluice_binary = SLUICE_BINARY) {
    bj::object fx{{"command", command},
                  {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
    auto cfg = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + bj::serialize(fx) +
                                               R"(},"sluice":)" + policy + "}");
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string()}, dir_.path(),
        dir_.path(), sluice_binary);
    sluice_->initialize();
    connect();
  }
  bj::value connect() {
    auto c = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
    EXPECT_FALSE(is_error(c)) << text_of(c);
    return c;
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  void send_gate(const std::string& id) {
    sluice_->send(R"({"jsonrpc":"2.0","id":")" + id +
                  R"(","method":"tools/call","params":{"name":"gateway.invoke","arguments":)"
                  R"({"tool_id":"fx::gate","arguments":{"path":")" +
                  (dir_.path() / "open").string() + R"(","marker":")" +
                  (dir_.path() / "done").string() + R"(","started":")" +
                  (dir_.path() / "started").string() + R"("}}}})");
    ASSERT_TRUE(wait_file(dir_.path() / "started"));
  }
  bj::value row() {
    return sluice_->call_tool("gateway.health", "{}").at("structuredContent").at("servers").at(0);
  }
  bj::value gateway_row() {
    return sluice_->call_tool("gateway.health", "{}").at("structuredContent").at("gateway");
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(Governance, RestartIsRefusedWhileWorkIsPendingAndForceLeavesOneGeneration) {
  start();
  send_gate("g1");
  auto refused = sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx"})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_NE(text_of(refused).find("1 call(s) pending"), std::string::npos) << text_of(refused);
  EXPECT_EQ(row().at("generation"), 1) << "a refused restart touches nothing";
  auto forced =
      sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx","force":true})");
  ASSERT_FALSE(is_error(forced)) << text_of(forced);
  auto sc = forced.at("structuredContent");
  EXPECT_EQ(sc.at("old_generation"), 1);
  EXPECT_EQ(sc.at("new_generation"), 2);
  EXPECT_EQ(sc.at("cancelled_request_count"), 1);
  EXPECT_EQ(sc.at("status"), "online");
  // Never two generations: only the new fixture process carries the marker now.
  EXPECT_EQ(processes_with_marker(marker_).size(), 1u);
  EXPECT_FALSE(fs::exists(dir_.path() / "done")) << "the old generation was stopped";
  auto echo = sluice_->call_tool("gateway.invoke",
                                 R"({"tool_id":"fx::echo","arguments":{"text":"gen2"}})");
  EXPECT_EQ(text_of(echo), "gen2");
  // The audit ring recorded the restart with both generations.
  auto health = sluice_->call_tool("gateway.health", "{}").at("structuredContent");
  bool found = false;
  for (const auto& e : health.at("audit").as_array()) {
    if (e.at("kind") == "restart") {
      EXPECT_EQ(e.at("outcome"), "ok: generation 1 to 2");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(Governance, RestartsOfOneServerAreSingleFlight) {
  start();
  // Two restarts sent back to back: the second arrives while the first is stopping the server.
  for (const char* id : {"r1", "r2"}) {
    sluice_->send(R"({"jsonrpc":"2.0","id":")" + std::string(id) +
                  R"(","method":"tools/call","params":{"name":"gateway.restart_server",)"
                  R"("arguments":{"server_name":"fx"}}})");
  }
  std::map<std::string, bj::value> answers;
  while (answers.size() < 2) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line.has_value());
    bj::value v = bj::parse(*line);
    if (v.as_object().contains("id")) answers[std::string(v.at("id").as_string())] = v;
  }
  EXPECT_FALSE(is_error(answers["r1"].at("result")));
  EXPECT_TRUE(is_error(answers["r2"].at("result")));
  EXPECT_NE(text_of(answers["r2"].at("result")).find("already under way"), std::string::npos);
  EXPECT_EQ(row().at("generation"), 2) << "one restart, one new generation";
  EXPECT_EQ(processes_with_marker(marker_).size(), 1u);
}

TEST_F(Governance, ForceIsRefusedWhenTheOperatorForbidsIt) {
  start(R"({"forbidForce":true})");
  send_gate("g1");
  auto r = sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx","force":true})");
  EXPECT_TRUE(is_error(r));
  EXPECT_NE(text_of(r).find("forbidForce"), std::string::npos) << text_of(r);
  auto d = sluice_->call_tool("gateway.disconnect_server",
                              R"({"server_name":"fx","force":true})");
  EXPECT_TRUE(is_error(d));
  auto f = sluice_->call_tool("gateway.refresh", R"({"force":true})");
  EXPECT_TRUE(is_error(f));
  EXPECT_EQ(row().at("generation"), 1);
  std::ofstream(dir_.path() / "open") << "";
  ASSERT_TRUE(wait_file(dir_.path() / "done"));
}

TEST_F(Governance, DisconnectKeepsTheServerOfflineUntilConnectedAndLeavesConfigAlone) {
  start();
  auto cfg_before = fs::last_write_time(dir_.path() / "cfg/.mcp.json");
  auto d = sluice_->call_tool("gateway.disconnect_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(d)) << text_of(d);
  EXPECT_EQ(d.at("structuredContent").at("status"), "offline");
  EXPECT_TRUE(wait_no_marker(marker_, 5s).empty());
  auto refused = sluice_->call_tool("gateway.invoke",
                                    R"({"tool_id":"fx::echo","arguments":{"text":"x"}})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_EQ(fs::last_write_time(dir_.path() / "cfg/.mcp.json"), cfg_before);
  connect();
  EXPECT_EQ(row().at("status"), "online");
}

TEST_F(Governance, RefreshRefusesWhileAnyWorkIsPendingAndRelistsWhenIdle) {
  start();
  send_gate("g1");
  auto refused = sluice_->call_tool("gateway.refresh", "{}");
  EXPECT_TRUE(is_error(refused));
  std::ofstream(dir_.path() / "open") << "";
  ASSERT_TRUE(wait_file(dir_.path() / "done"));
  // The gate's answer comes before the next one on the wire; afterwards nothing is pending.
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  bj::value ok;
  do {
    ok = sluice_->call_tool("gateway.refresh", R"({"reason":"test"})");
  } while (is_error(ok) && std::chrono::steady_clock::now() < deadline);
  ASSERT_FALSE(is_error(ok)) << text_of(ok);
  EXPECT_EQ(ok.at("structuredContent").at("servers_relisted"), 1);
}

TEST_F(Governance, AServerWhoseExecutableChangedIsReportedWithTheNextStep) {
  fs::path copy = dir_.path() / "fixture_copy";
  fs::copy_file(FIXTURE_SERVER, copy);
  fs::permissions(copy, fs::perms::owner_all);
  start("{}", copy.string());
  EXPECT_FALSE(row().as_object().contains("restart_required"));
  replace_file(FIXTURE_SERVER, copy);
  auto r = row();
  ASSERT_TRUE(r.as_object().contains("restart_required"));
  EXPECT_NE(std::string(r.at("restart_required").at("reason").as_string()).find("ds_stale_code"),
            std::string::npos);
  EXPECT_NE(std::string(r.at("restart_required").at("next_step").as_string())
                .find("gateway.restart_server"),
            std::string::npos);
  auto restarted = sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(restarted)) << text_of(restarted);
  EXPECT_FALSE(row().as_object().contains("restart_required"));
}

TEST_F(Governance, AReplacedGatewayBinaryIsReportedAndCanFailClosed) {
  fs::path copy = dir_.path() / "sluice_copy";
  fs::copy_file(SLUICE_BINARY, copy);
  fs::permissions(copy, fs::perms::owner_all);
  start(R"({"failClosedWhenStale":true})", FIXTURE_SERVER, copy.string());
  EXPECT_FALSE(gateway_row().as_object().contains("restart_required"));
  auto before = sluice_->call_tool("gateway.invoke",
                                   R"({"tool_id":"fx::echo","arguments":{"text":"x"}})");
  EXPECT_FALSE(is_error(before));
  replace_file(SLUICE_BINARY, copy);
  auto gw = gateway_row();
  ASSERT_TRUE(gw.as_object().contains("restart_required"));
  EXPECT_EQ(gw.at("restart_required").at("fail_closed"), true);
  auto refused = sluice_->call_tool("gateway.invoke",
                                    R"({"tool_id":"fx::echo","arguments":{"text":"x"}})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_NE(text_of(refused).find("gw_binary_stale"), std::string::npos);
  // Read-only meta-tools still answer, and sluice did not restart itself.
  EXPECT_FALSE(is_error(sluice_->call_tool("gateway.catalog_search", "{}")));
}

TEST_F(Governance, TheAuditRingRecordsCallsWithoutTheirValues) {
  start();
  const std::string sentinel = "SENTINEL-audit-91c";
  sluice_->call_tool("gateway.invoke",
                     R"({"tool_id":"fx::echo","arguments":{"text":")" + sentinel + R"("}})");
  auto health = sluice_->call_tool("gateway.health", "{}").at("structuredContent");
  auto audit = health.at("audit").as_array();
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0].at("kind"), "call");
  EXPECT_EQ(audit[0].at("tool"), "echo");
  EXPECT_EQ(audit[0].at("outcome"), "completed");
  EXPECT_EQ(audit[0].at("client"), "stdio");
  EXPECT_TRUE(audit[0].as_object().contains("latency_ms"));
  EXPECT_EQ(bj::serialize(health).find(sentinel), std::string::npos);
}

TEST_F(Governance, ToolBudgetsDefaultToTheirAnnotationClass) {
  start();
  sluice_->call_tool("gateway.invoke", R"({"tool_id":"fx::echo","arguments":{"text":"x"}})");
  sluice_->call_tool("gateway.invoke",
                     R"({"tool_id":"fx::touch","arguments":{"path":")" +
                         (dir_.path() / "t").string() + R"("}})");
  int seen = 0;
  bj::value server = row();  // never range-for over a member of a temporary
  for (const auto& t : server.at("tools").as_array()) {
    if (t.at("tool") == "echo") {
      EXPECT_EQ(t.at("budget"), 8) << "readOnlyHint: true";
      ++seen;
    } else if (t.at("tool") == "touch") {
      EXPECT_EQ(t.at("budget"), 4) << "mutating";
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

TEST_F(Governance, TheClientCapQueuesCallsBeyondIt) {
  start(R"({"clientCap":1})");
  send_gate("g1");
  sluice_->send(R"({"jsonrpc":"2.0","id":"e1","method":"tools/call","params":{"name":)"
                R"("gateway.invoke","arguments":{"tool_id":"fx::echo","arguments":{"text":"q"}}}})");
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  bj::value calls;
  do {
    calls = sluice_->call_tool("gateway.list_pending", "{}").at("structuredContent").at("calls");
  } while (calls.as_array().size() < 2 && std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(calls.as_array().size(), 2u);
  EXPECT_EQ(calls.at(1).at("tool_id"), "fx::echo");
  EXPECT_EQ(calls.at(1).at("state"), "queued") << "echo's own budget is free: the cap holds it";
  std::ofstream(dir_.path() / "open") << "";
  ASSERT_TRUE(wait_file(dir_.path() / "done"));
}

}  // namespace
}  // namespace sluice::test
