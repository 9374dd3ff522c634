// ConfigReload over a Fleet of servers that never start (disabled): an added server joins the
// fleet, a removed one leaves it at once and new calls to it are refused as removed, a
// changed one waits while it has a call pending (health says so) and is replaced once idle,
// a file that no longer parses keeps the last good configuration, operator settings are
// reported and not applied; each application is a generation and an audit record.
#include "gateway/reload.hpp"
#include "gateway/calls/call.hpp"

#include "../run_until.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

namespace sluice::gateway {
namespace {
namespace bj = boost::json;

config::ServerConfig server(const std::string& name, std::vector<std::string> args = {}) {
  config::ServerConfig s;
  s.name = name;
  s.transport = config::StdioServer{"/nonexistent-dir/srv", std::move(args), {}, {}};
  s.source_file = "/home/u/.mcp.json";
  s.disabled = true;  // never started: no process in these tests
  return s;
}

std::shared_ptr<const config::GatewayConfig> config_of(std::vector<config::ServerConfig> servers) {
  auto c = std::make_shared<config::GatewayConfig>();
  c->servers = std::move(servers);
  c->files_read = {"/home/u/.mcp.json"};
  return c;
}

class ReloadTest : public testing::Test {
 protected:
  ReloadTest()
      : startup_(config_of({server("a"), server("b")})),
        fleet_(io_, *startup_, limits_,
               [](const config::ServerConfig&) { return DownstreamEvents{}; }),
        reload_(io_, fleet_, calls_, audit_, startup_,
                ConfigReload::Hooks{{}, [this] { ++fleet_changes_; }}) {}

  std::string refusal_for(const std::string& tool_id) {
    std::optional<ResolvedTool> out;
    asio::co_spawn(io_, fleet_.resolve_tool(tool_id, Fleet::Need::online),
                   [&](std::exception_ptr, ResolvedTool r) { out = std::move(r); });
    EXPECT_TRUE(test::run_until(io_, [&] { return out.has_value(); }));
    return out ? out->refusal : std::string();
  }
  bj::object health() {
    bj::object out;
    reload_.add_to_health(out);
    return out;
  }
  // An open call of `server_name` in the ledger (queued: it holds no permit).
  std::unique_ptr<Call> pending_call(const std::string& server_name) {
    CallRecord record;
    record.server = server_name;
    record.tool_id = server_name + "::t";
    return std::make_unique<Call>(calls_, audit_, admission_, std::move(record),
                                  [] { return std::uint64_t{0}; });
  }

  asio::io_context io_;
  core::Limits limits_;
  std::shared_ptr<const config::GatewayConfig> startup_;
  CallLedger calls_{io_};
  AuditRing audit_{16};
  ToolAdmission admission_{io_, 1, 1};
  Fleet fleet_;
  int fleet_changes_ = 0;
  ConfigReload reload_;
};

TEST_F(ReloadTest, AnAddedServerJoinsTheFleetAsANewGeneration) {
  EXPECT_EQ(reload_.generation(), 1u);
  reload_.apply(config_of({server("a"), server("b"), server("c")}));
  ASSERT_NE(fleet_.find("c"), nullptr);
  EXPECT_EQ(fleet_.servers().size(), 3u);
  EXPECT_EQ(reload_.generation(), 2u);
  EXPECT_EQ(fleet_changes_, 1);
  EXPECT_EQ(health().at("config_generation"), 2);
  EXPECT_EQ(health().at("config_reload").at("last").at("added"), 1);
  std::string audit = bj::serialize(audit_.to_json(1));
  EXPECT_NE(audit.find("config_reload"), std::string::npos) << audit;
  EXPECT_NE(audit.find("generation 2: 1 added"), std::string::npos) << audit;
  // The same configuration again changes nothing.
  reload_.apply(config_of({server("a"), server("b"), server("c")}));
  EXPECT_EQ(reload_.generation(), 2u);
  EXPECT_EQ(health().at("config_reload").at("last").at("outcome"), "unchanged");
}

TEST_F(ReloadTest, ARemovedServerLeavesAtOnceAndNewCallsToItAreRefusedAsRemoved) {
  Downstream* b = fleet_.find("b");
  auto call = pending_call("b");
  reload_.apply(config_of({server("a")}));
  EXPECT_EQ(fleet_.find("b"), nullptr);
  EXPECT_EQ(fleet_.servers().size(), 1u);
  ASSERT_EQ(fleet_.retired().size(), 1u);
  EXPECT_EQ(fleet_.retired()[0].get(), b) << "kept: a coroutine may still point at it";
  EXPECT_EQ(reload_.draining(), 1u) << "it stops only once its pending call ends";
  std::string refusal = refusal_for("b::t");
  EXPECT_NE(refusal.find("server b was removed from the configuration"), std::string::npos)
      << refusal;
  call.reset();
  EXPECT_TRUE(test::run_until(io_, [&] { return reload_.draining() == 0; }));
}

TEST_F(ReloadTest, AChangedServerWaitsForItsPendingCallsThenIsReplaced) {
  Downstream* old = fleet_.find("a");
  auto call = pending_call("a");
  reload_.apply(config_of({server("a", {"--new"}), server("b")}));
  EXPECT_EQ(reload_.generation(), 2u);
  EXPECT_EQ(reload_.waiting(), 1u);
  EXPECT_EQ(fleet_.find("a"), old) << "not restarted while a call is pending";
  bj::object row;
  reload_.add_to_row(*old, row);
  ASSERT_TRUE(row.contains("config_change")) << bj::serialize(row);
  std::string next_step(row.at("config_change").at("next_step").as_string());
  EXPECT_NE(next_step.find("finish or cancel its 1 pending call(s)"), std::string::npos)
      << next_step;
  // Still pending after a while: never forced.
  test::run_until(
      io_, [] { return false; }, std::chrono::milliseconds(300));
  EXPECT_EQ(fleet_.find("a"), old);
  call.reset();
  ASSERT_TRUE(test::run_until(io_, [&] { return fleet_.find("a") != old; }));
  const auto& args = std::get<config::StdioServer>(fleet_.find("a")->config().transport).args;
  EXPECT_EQ(args, std::vector<std::string>{"--new"});
  EXPECT_EQ(reload_.waiting(), 0u);
  std::string audit = bj::serialize(audit_.to_json(1));
  EXPECT_NE(audit.find("restarted with the configuration of generation 2"), std::string::npos)
      << audit;
}

TEST_F(ReloadTest, AnIdleChangedServerIsReplacedAtOnceAndAChangeBackIsDropped) {
  Downstream* old = fleet_.find("b");
  auto call = pending_call("b");
  reload_.apply(config_of({server("a"), server("b", {"--x"})}));
  EXPECT_EQ(reload_.waiting(), 1u);
  reload_.apply(config_of({server("a"), server("b")}));
  EXPECT_EQ(reload_.waiting(), 0u) << "changed back before it was applied";
  call.reset();
  test::run_until(
      io_, [] { return false; }, std::chrono::milliseconds(200));
  EXPECT_EQ(fleet_.find("b"), old);
  Downstream* a = fleet_.find("a");
  reload_.apply(config_of({server("a", {"--y"}), server("b")}));
  EXPECT_TRUE(test::run_until(io_, [&] { return fleet_.find("a") != a; }));
}

TEST_F(ReloadTest, AFileThatNoLongerParsesKeepsTheLastGoodConfiguration) {
  auto broken = std::make_shared<config::GatewayConfig>();
  broken->files_read = {"/home/u/.mcp.json"};
  broken->files_rejected = {{"/home/u/.mcp.json", "not valid JSON at line 1"}};
  reload_.apply(broken);
  EXPECT_EQ(fleet_.servers().size(), 2u) << "no server removed";
  EXPECT_EQ(reload_.generation(), 1u);
  bj::object h = health();
  EXPECT_EQ(h.at("config_reload").at("last").at("outcome"), "rejected");
  const auto& problem = h.at("config_reload").at("problem");
  EXPECT_EQ(problem.at("rejected_files").at(0).at("file"), "/home/u/.mcp.json");
  EXPECT_EQ(h.at("config_files").at(0).at("status"), "rejected");
  // Fixed: applied, and the problem is gone.
  reload_.apply(config_of({server("a")}));
  EXPECT_EQ(fleet_.servers().size(), 1u);
  EXPECT_FALSE(health().at("config_reload").as_object().contains("problem"));
}

TEST_F(ReloadTest, ChangedOperatorSettingsAreReportedAndNotApplied) {
  auto next = std::make_shared<config::GatewayConfig>(*config_of({server("a"), server("b")}));
  next->policy.forbid_force = true;
  reload_.apply(next);
  EXPECT_EQ(reload_.generation(), 1u) << "nothing was applied";
  bj::object h = health();
  const auto& changed = h.at("config_reload").at("operator_settings_changed");
  EXPECT_EQ(changed.at("keys").at(0), "forbidForce");
  EXPECT_NE(std::string(changed.at("next_step").as_string()).find("restart sluice"),
            std::string::npos);
  EXPECT_FALSE(startup_->policy.forbid_force);
}

}  // namespace
}  // namespace sluice::gateway
