// The Gateway's parts without a child process: a Fleet of disabled servers (never started),
// the Catalog's offline cards over it, and Governance's refusals (force forbidden, unknown
// servers, refresh with nothing running).
#include "gateway/calls/ledger.hpp"
#include "gateway/catalog/catalog.hpp"
#include "gateway/fleet.hpp"
#include "gateway/governance.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <optional>
#include <string>

namespace sluice::gateway {
namespace {
namespace bj = boost::json;

config::GatewayConfig disabled_servers(int count) {
  config::GatewayConfig config;
  for (int i = 0; i < count; ++i) {
    config::ServerConfig server;
    server.name = "server" + std::to_string(i);
    server.transport = config::StdioServer{"/nonexistent-dir/srv", {}, {}, {}};
    server.source_file = "/projects/app/.mcp.json";
    server.disabled = true;
    config.servers.push_back(std::move(server));
  }
  return config;
}

// The structuredContent of a CallToolResult text, or the text of an error result.
bj::value structured(const std::string& result) {
  return bj::parse(result).at("structuredContent");
}
std::string error_text(const std::string& result) {
  bj::value v = bj::parse(result);
  EXPECT_TRUE(v.at("isError").as_bool()) << result;
  return std::string(v.at("content").at(0).at("text").as_string());
}

class PartsTest : public testing::Test {
 protected:
  explicit PartsTest(int servers = 3)
      : config_(disabled_servers(servers)),
        fleet_(io_, config_, limits_,
               [](const config::ServerConfig&) { return DownstreamEvents{}; }) {}

  template <typename T>
  T run(asio::awaitable<T> work) {
    std::optional<T> out;
    asio::co_spawn(io_, std::move(work), [&](std::exception_ptr e, T value) {
      EXPECT_FALSE(e);
      out = std::move(value);
    });
    for (int i = 0; i < 200 && !out; ++i) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : T{};
  }

  asio::io_context io_;
  core::Limits limits_;
  config::GatewayConfig config_;
  Fleet fleet_;
  CallLedger calls_{io_};
  Catalog catalog_{fleet_};
  AuditRing audit_{16};
};

TEST_F(PartsTest, TheFleetFindsEveryServerByNameAndSuggestsANearOneForATypo) {
  ASSERT_EQ(fleet_.servers().size(), 3u);
  EXPECT_EQ(fleet_.find("server1"), fleet_.servers()[1].get());
  EXPECT_EQ(fleet_.find("server9"), nullptr);
  EXPECT_EQ(fleet_.names().front(), "server0");
  std::string unknown = fleet_.unknown_server("servr1");
  EXPECT_NE(unknown.find("no configured server is named servr1"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("server1"), std::string::npos) << unknown;
}

TEST_F(PartsTest, AToolIdIsResolvedOnlyToAToolOfAnAvailableServer) {
  ResolvedTool no_id = run(fleet_.resolve_tool("plain", Fleet::Need::online));
  EXPECT_EQ(no_id.server, nullptr);
  EXPECT_NE(no_id.refusal.find("is not a tool id"), std::string::npos) << no_id.refusal;
  ResolvedTool unknown = run(fleet_.resolve_tool("nope::t", Fleet::Need::online));
  EXPECT_NE(unknown.refusal.find("no configured server is named nope"), std::string::npos);
  ResolvedTool disabled = run(fleet_.resolve_tool("server0::t", Fleet::Need::online));
  EXPECT_EQ(disabled.server, nullptr);
  EXPECT_NE(disabled.refusal.find("server server0 is not available (disabled)"), std::string::npos)
      << disabled.refusal;
}

TEST_F(PartsTest, ServersWithUnknownToolsAreListedAsOfflineCards) {
  catalog_.rebuild();
  bj::value found = structured(catalog_.search(bj::object{}));
  EXPECT_EQ(found.at("results").as_array().size(), 0u);
  const auto& offline = found.at("offline_servers").as_array();
  ASSERT_EQ(offline.size(), 3u);
  EXPECT_EQ(offline[0].at("server").as_string(), "server0");
  EXPECT_EQ(offline[0].at("status").as_string(), "disabled");
  EXPECT_FALSE(found.as_object().contains("offline_servers_total")) << found;
  bj::value one =
      structured(catalog_.search(bj::object{{"filters", bj::object{{"server", "server2"}}}}));
  ASSERT_EQ(one.at("offline_servers").as_array().size(), 1u);
  EXPECT_EQ(one.at("offline_servers").at(0).at("server").as_string(), "server2");
}

class ManyServersTest : public PartsTest {
 protected:
  ManyServersTest() : PartsTest(Catalog::kOfflineCards + 5) {}
};

TEST_F(ManyServersTest, OfflineCardsAreBoundedAndEveryOfflineServerIsCounted) {
  bj::value found = structured(catalog_.search(bj::object{}));
  EXPECT_EQ(found.at("offline_servers").as_array().size(), Catalog::kOfflineCards);
  EXPECT_EQ(found.at("offline_servers_total").to_number<std::uint64_t>(), Catalog::kOfflineCards + 5);
}

TEST_F(PartsTest, ARestartOfAnUnknownServerIsRefusedWithASuggestion) {
  Governance governance(fleet_, calls_, catalog_, audit_, config_.policy);
  std::string text = error_text(run(governance.restart_server("servr0", false, true)));
  EXPECT_NE(text.find("no configured server is named servr0"), std::string::npos) << text;
}

TEST_F(PartsTest, ForceIsRefusedAndAuditedWhenTheOperatorForbidsIt) {
  config_.policy.forbid_force = true;
  Governance governance(fleet_, calls_, catalog_, audit_, config_.policy);
  std::string restart = error_text(run(governance.restart_server("server0", true, true)));
  EXPECT_NE(restart.find("force is forbidden by the operator"), std::string::npos) << restart;
  EXPECT_NE(restart.find("server0 has nothing pending: call restart_server without force"),
            std::string::npos)
      << restart;
  std::string refresh = error_text(run(governance.refresh(true)));
  EXPECT_NE(refresh.find("nothing is pending: call refresh without force"), std::string::npos);
  EXPECT_EQ(audit_.size(), 2u);
}

TEST_F(PartsTest, ARefreshWithNothingRunningRelistsNoServerAndSucceeds) {
  Governance governance(fleet_, calls_, catalog_, audit_, config_.policy);
  bj::value out = structured(run(governance.refresh(false)));
  EXPECT_TRUE(out.at("ok").as_bool());
  EXPECT_EQ(out.at("servers_seen").to_number<std::uint64_t>(), 3u);
  EXPECT_EQ(out.at("servers_online").to_number<std::uint64_t>(), 0u);
  EXPECT_EQ(out.at("pending_cancelled").to_number<std::uint64_t>(), 0u);
}

TEST_F(PartsTest, AnUnchangedBinaryIsNotStaleSoNothingRefuses) {
  config_.policy.fail_closed_when_stale = true;
  Governance governance(fleet_, calls_, catalog_, audit_, config_.policy);
  EXPECT_FALSE(governance.binary_stale());
  EXPECT_EQ(governance.stale_refusal(), "");
}

}  // namespace
}  // namespace sluice::gateway
