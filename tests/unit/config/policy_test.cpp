// The "sluice" admission settings of `.mcp.json`: per-server budgets, the gateway-wide
// settings, their validation and their merge across files (first file that sets a key wins).
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"
#include "config_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace sluice::config {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

// Planted in rejected files wherever a value or a key of the operator's own may appear; no
// error or warning may contain it.
constexpr std::string_view kPolicySentinel = "SNTL7q";

const fs::path kPolicyFile = "/projects/app/.mcp.json";

ConfigFile policy_parse_ok(std::string_view text) {
  core::Result<ConfigFile> file = parse_text(text, kPolicyFile, Origin::project, EnvLookup{});
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().message);
  return file ? *file : ConfigFile{};
}

std::string policy_parse_error(std::string_view text) {
  core::Result<ConfigFile> file = parse_text(text, kPolicyFile, Origin::project, EnvLookup{});
  EXPECT_FALSE(file.has_value());
  return file ? std::string() : file.error().message;
}

std::string policy_with_sentinel(std::string text) {
  for (std::size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at)) {
    text.replace(at, 1, kPolicySentinel);
  }
  return text;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

void expect_defaults(const GatewayPolicy& p) {
  EXPECT_EQ(p.read_budget, 8u);
  EXPECT_EQ(p.mutating_budget, 4u);
  EXPECT_EQ(p.client_cap, 16u);
  EXPECT_EQ(p.queue_size, 64u);
  EXPECT_EQ(p.queue_timeout, milliseconds(30000));
  EXPECT_EQ(p.abandon_bound, milliseconds(120000));
  EXPECT_EQ(p.drain_bound, milliseconds(10000));
  EXPECT_FALSE(p.forbid_force);
  EXPECT_FALSE(p.fail_closed_when_stale);
}

void expect_nothing_set(const FilePolicy& p) {
  EXPECT_FALSE(p.read_budget.has_value());
  EXPECT_FALSE(p.mutating_budget.has_value());
  EXPECT_FALSE(p.client_cap.has_value());
  EXPECT_FALSE(p.queue_size.has_value());
  EXPECT_FALSE(p.queue_timeout.has_value());
  EXPECT_FALSE(p.abandon_bound.has_value());
  EXPECT_FALSE(p.drain_bound.has_value());
  EXPECT_FALSE(p.forbid_force.has_value());
  EXPECT_FALSE(p.fail_closed_when_stale.has_value());
}

// ---- parsing one file ----

TEST(PolicyParse, NothingIsSetWhenTheFileHasNoSluiceObjects) {
  ConfigFile file = policy_parse_ok(R"({"mcpServers": {"a": {"command": "c"},
                                                "r": {"url": "https://h/mcp"}}})");
  expect_nothing_set(file.policy);
  ASSERT_THAT(file.servers, SizeIs(2));
  for (const ServerConfig& s : file.servers) {
    EXPECT_FALSE(s.policy.budget.has_value());
    EXPECT_THAT(s.policy.tool_budgets, IsEmpty());
  }
}

TEST(PolicyParse, EmptySluiceObjectsSetNothing) {
  ConfigFile file = policy_parse_ok(R"({"mcpServers": {"a": {"command": "c", "sluice": {}}},
                                 "sluice": {}})");
  expect_nothing_set(file.policy);
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_FALSE(file.servers[0].policy.budget.has_value());
  EXPECT_THAT(file.servers[0].policy.tool_budgets, IsEmpty());
}

TEST(PolicyParse, ParsesEveryGatewayKey) {
  ConfigFile file = policy_parse_ok(R"({"sluice": {
      "readBudget": 12, "mutatingBudget": 3, "clientCap": 40, "queueSize": 7,
      "queueTimeoutMs": 2500, "abandonMs": 90000, "drainMs": 1500,
      "forbidForce": true, "failClosedWhenStale": true}})");
  const FilePolicy& p = file.policy;
  EXPECT_EQ(p.read_budget, 12u);
  EXPECT_EQ(p.mutating_budget, 3u);
  EXPECT_EQ(p.client_cap, 40u);
  EXPECT_EQ(p.queue_size, 7u);
  EXPECT_EQ(p.queue_timeout, milliseconds(2500));
  EXPECT_EQ(p.abandon_bound, milliseconds(90000));
  EXPECT_EQ(p.drain_bound, milliseconds(1500));
  EXPECT_EQ(p.forbid_force, true);
  EXPECT_EQ(p.fail_closed_when_stale, true);
}

TEST(PolicyParse, SetsOnlyTheKeysWritten) {
  ConfigFile file = policy_parse_ok(R"({"sluice": {"queueSize": 5, "forbidForce": false}})");
  EXPECT_EQ(file.policy.queue_size, 5u);
  EXPECT_EQ(file.policy.forbid_force, false);  // set, to false: not the same as unset
  EXPECT_FALSE(file.policy.read_budget.has_value());
  EXPECT_FALSE(file.policy.mutating_budget.has_value());
  EXPECT_FALSE(file.policy.client_cap.has_value());
  EXPECT_FALSE(file.policy.queue_timeout.has_value());
  EXPECT_FALSE(file.policy.abandon_bound.has_value());
  EXPECT_FALSE(file.policy.drain_bound.has_value());
  EXPECT_FALSE(file.policy.fail_closed_when_stale.has_value());
}

TEST(PolicyParse, IgnoresUnknownKeysInsideSluiceObjects) {
  ConfigFile file =
      policy_parse_ok(R"({"sluice": {"readBudget": 2, "future": {"x": [1]}, "n": null},
      "mcpServers": {"a": {"command": "c", "sluice": {"budget": 3, "weight": "heavy"}}}})");
  EXPECT_EQ(file.policy.read_budget, 2u);
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_EQ(file.servers[0].policy.budget, 3u);
}

// Each integer key accepts both ends of its range, inclusive.
struct BoundCase {
  std::string key;
  std::uint64_t min;
  std::uint64_t max;
  std::function<std::optional<std::uint64_t>(const FilePolicy&)> get;
};

template <typename T>
std::optional<std::uint64_t> as_u64(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<T, milliseconds>) {
    return static_cast<std::uint64_t>(v->count());
  } else {
    return static_cast<std::uint64_t>(*v);
  }
}

void PrintTo(const BoundCase& c, std::ostream* os) { *os << c.key; }

class PolicyBounds : public ::testing::TestWithParam<BoundCase> {};

TEST_P(PolicyBounds, AcceptsBothEndsOfTheRange) {
  const BoundCase& c = GetParam();
  for (std::uint64_t n : {c.min, c.max}) {
    ConfigFile file =
        policy_parse_ok(R"({"sluice": {")" + c.key + "\": " + std::to_string(n) + "}}");
    EXPECT_EQ(c.get(file.policy), n) << c.key << " = " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policy, PolicyBounds,
    ::testing::Values(
        BoundCase{"readBudget", 1, 1024, [](const FilePolicy& p) { return as_u64(p.read_budget); }},
        BoundCase{"mutatingBudget", 1, 1024,
                  [](const FilePolicy& p) { return as_u64(p.mutating_budget); }},
        BoundCase{"clientCap", 1, 4096, [](const FilePolicy& p) { return as_u64(p.client_cap); }},
        BoundCase{"queueSize", 0, 100000, [](const FilePolicy& p) { return as_u64(p.queue_size); }},
        BoundCase{"queueTimeoutMs", 0, 3600000,
                  [](const FilePolicy& p) { return as_u64(p.queue_timeout); }},
        BoundCase{"abandonMs", 1000, 86400000,
                  [](const FilePolicy& p) { return as_u64(p.abandon_bound); }},
        BoundCase{"drainMs", 0, 600000, [](const FilePolicy& p) { return as_u64(p.drain_bound); }},
        BoundCase{"idleTimeoutMs", 1000, 86400000,
                  [](const FilePolicy& p) { return as_u64(p.idle_timeout); }},
        BoundCase{"indexConcurrency", 1, 64,
                  [](const FilePolicy& p) { return as_u64(p.index_concurrency); }},
        BoundCase{"indexWaitMs", 0, 600000,
                  [](const FilePolicy& p) { return as_u64(p.index_wait); }},
        BoundCase{"indexIdleMs", 0, 86400000,
                  [](const FilePolicy& p) { return as_u64(p.index_idle); }}),
    [](const ::testing::TestParamInfo<BoundCase>& info) { return info.param.key; });

TEST(PolicyParse, ParsesBothFlagsAsFalse) {
  ConfigFile file =
      policy_parse_ok(R"({"sluice": {"forbidForce": false, "failClosedWhenStale": false}})");
  EXPECT_EQ(file.policy.forbid_force, false);
  EXPECT_EQ(file.policy.fail_closed_when_stale, false);
}

TEST(PolicyParse, ParsesServerBudgetAndToolBudgetsInFileOrder) {
  ConfigFile file = policy_parse_ok(R"({"mcpServers": {"github": {"command": "gh-mcp",
      "sluice": {"budget": 4, "tools": {"search": 8, "create_issue": 1, "a_tool": 1024}}}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  const ServerPolicy& p = file.servers[0].policy;
  EXPECT_EQ(p.budget, 4u);
  EXPECT_THAT(p.tool_budgets,
              ElementsAre(Pair("search", 8u), Pair("create_issue", 1u), Pair("a_tool", 1024u)));
}

TEST(PolicyParse, ServerPolicyIsValidForRemoteEntries) {
  ConfigFile file = policy_parse_ok(R"({"mcpServers": {
      "h": {"type": "http", "url": "https://h/mcp", "sluice": {"budget": 1}},
      "s": {"type": "sse", "url": "http://127.0.0.1:9/sse", "sluice": {"tools": {"t": 2}}}}})");
  ASSERT_THAT(file.servers, SizeIs(2));
  EXPECT_EQ(file.servers[0].policy.budget, 1u);
  EXPECT_THAT(file.servers[0].policy.tool_budgets, IsEmpty());
  EXPECT_FALSE(file.servers[1].policy.budget.has_value());
  EXPECT_THAT(file.servers[1].policy.tool_budgets, ElementsAre(Pair("t", 2u)));
}

TEST(PolicyParse, ToolBudgetsWithoutAServerBudget) {
  ConfigFile file =
      policy_parse_ok(R"({"mcpServers": {"a": {"command": "c", "sluice": {"tools": {"x": 3}}}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_FALSE(file.servers[0].policy.budget.has_value());
  EXPECT_THAT(file.servers[0].policy.tool_budgets, ElementsAre(Pair("x", 3u)));
}

// ---- discovery: merge across files ----

using test::TempDir;
using test::write;

std::vector<std::string> policy_names_of(const GatewayConfig& config) {
  std::vector<std::string> names;
  for (const ServerConfig& s : config.servers) names.push_back(s.name);
  return names;
}

// Layout: <root>/home (the home folder), <root>/work/project (a git checkout, the working
// directory) and <root>/extra (--config files).
class PolicyDiscovery : public ::testing::Test {
 protected:
  PolicyDiscovery() {
    fs::create_directories(home());
    fs::create_directories(project() / ".git");
  }

  fs::path home() const { return root_.path() / "home"; }
  fs::path project() const { return root_.path() / "work" / "project"; }
  fs::path extra(std::string_view name) const { return root_.path() / "extra" / name; }

  DiscoveryOptions options() const {
    DiscoveryOptions o;
    o.cwd = project();
    o.home = home();
    o.trust_project = true;  // about discovery, not trust (trust_store_test.cpp)
    return o;
  }

  TempDir root_;
};

TEST_F(PolicyDiscovery, DefaultsWhenNoFileSetsAnything) {
  write(project() / ".mcp.json", R"({"mcpServers": {"a": {"command": "c"}}})");
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.warnings, IsEmpty());
  expect_defaults(config.policy);
}

TEST_F(PolicyDiscovery, DefaultsWhenThereAreNoFilesAtAll) {
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.files_read, IsEmpty());
  expect_defaults(config.policy);
}

TEST_F(PolicyDiscovery, OneFileSetsEveryKey) {
  write(extra("all.json"), R"({"sluice": {
      "readBudget": 12, "mutatingBudget": 3, "clientCap": 40, "queueSize": 0,
      "queueTimeoutMs": 0, "abandonMs": 1000, "drainMs": 0,
      "forbidForce": true, "failClosedWhenStale": true}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("all.json")};
  GatewayConfig config = discover(o);
  EXPECT_THAT(config.warnings, IsEmpty());
  const GatewayPolicy& p = config.policy;
  EXPECT_EQ(p.read_budget, 12u);
  EXPECT_EQ(p.mutating_budget, 3u);
  EXPECT_EQ(p.client_cap, 40u);
  EXPECT_EQ(p.queue_size, 0u);
  EXPECT_EQ(p.queue_timeout, milliseconds(0));
  EXPECT_EQ(p.abandon_bound, milliseconds(1000));
  EXPECT_EQ(p.drain_bound, milliseconds(0));
  EXPECT_TRUE(p.forbid_force);
  EXPECT_TRUE(p.fail_closed_when_stale);
}

TEST_F(PolicyDiscovery, EachKeyTakesTheFirstFileThatSetsIt) {
  // ~/.mcp.json first, then the --config file. Each sets some keys; some keys both set.
  write(home() / ".mcp.json", R"({"sluice": {
      "readBudget": 2, "queueSize": 10, "forbidForce": true, "abandonMs": 5000}})");
  write(extra("late.json"), R"({"sluice": {
      "readBudget": 99, "mutatingBudget": 7, "queueSize": 500, "clientCap": 5,
      "forbidForce": false, "drainMs": 0, "failClosedWhenStale": true}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("late.json")};

  GatewayConfig config = discover(o);

  EXPECT_THAT(config.warnings, IsEmpty());
  const GatewayPolicy& p = config.policy;
  EXPECT_EQ(p.read_budget, 2u);                     // both: the user file's
  EXPECT_EQ(p.queue_size, 10u);                     // both: the user file's
  EXPECT_TRUE(p.forbid_force);                      // both: the user file's
  EXPECT_EQ(p.abandon_bound, milliseconds(5000));   // user file only
  EXPECT_EQ(p.mutating_budget, 7u);                 // --config only
  EXPECT_EQ(p.client_cap, 5u);                      // --config only
  EXPECT_EQ(p.drain_bound, milliseconds(0));        // --config only
  EXPECT_TRUE(p.fail_closed_when_stale);            // --config only
  EXPECT_EQ(p.queue_timeout, milliseconds(30000));  // neither: the default
}

TEST_F(PolicyDiscovery, FalseInAnEarlierFileWinsOverTrueInALaterOne) {
  write(home() / ".mcp.json", R"({"sluice": {"failClosedWhenStale": false}})");
  write(extra("late.json"), R"({"sluice": {"failClosedWhenStale": true, "forbidForce": true}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("late.json")};
  GatewayConfig config = discover(o);
  EXPECT_FALSE(config.policy.fail_closed_when_stale);
  EXPECT_TRUE(config.policy.forbid_force);
}

TEST_F(PolicyDiscovery, FollowsDiscoveryOrderNotTheOrderOfTheCommandLine) {
  // --config files come after the user files, whatever their place on the command line.
  write(home() / ".mcp.json", R"({"sluice": {"clientCap": 9}})");
  write(extra("one.json"), R"({"sluice": {"clientCap": 1, "queueSize": 1}})");
  write(extra("two.json"), R"({"sluice": {"clientCap": 2, "queueSize": 2, "drainMs": 2}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("two.json"), extra("one.json")};
  GatewayConfig config = discover(o);
  EXPECT_EQ(config.policy.client_cap, 9u);
  EXPECT_EQ(config.policy.queue_size, 2u);
  EXPECT_EQ(config.policy.drain_bound, milliseconds(2));
}

TEST_F(PolicyDiscovery, ALeftOutFileContributesNoSettings) {
  write(project() / ".mcp.json", R"({"sluice": {"readBudget": 2, "queueSize": 100001}})");
  write(extra("late.json"), R"({"sluice": {"readBudget": 3}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("late.json")};
  GatewayConfig config = discover(o);
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_EQ(config.warnings[0], "config file " + (project() / ".mcp.json").string() +
                                    " is left out: $.sluice.queueSize: must be at most 100000 "
                                    "(an integer)");
  EXPECT_EQ(config.policy.read_budget, 3u);
  EXPECT_EQ(config.policy.queue_size, 64u);
}

TEST_F(PolicyDiscovery, ServerPolicyComesWithTheWinningDefinition) {
  write(home() / ".mcp.json", R"({"mcpServers": {
      "gh": {"command": "from-home", "sluice": {"budget": 2, "tools": {"push": 1}}},
      "plain": {"command": "p"}}})");
  write(extra("late.json"), R"({"mcpServers": {
      "gh": {"command": "from-config", "sluice": {"budget": 9, "tools": {"read": 9}}},
      "plain": {"command": "q", "sluice": {"budget": 9}}}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("late.json")};
  GatewayConfig config = discover(o);
  ASSERT_THAT(policy_names_of(config), ElementsAre("gh", "plain"));
  EXPECT_EQ(config.servers[0].policy.budget, 2u);
  EXPECT_THAT(config.servers[0].policy.tool_budgets, ElementsAre(Pair("push", 1u)));
  // Not merged per key: the first definition had no "sluice" object, so it has no budget.
  EXPECT_FALSE(config.servers[1].policy.budget.has_value());
}

// ---- every malformed "sluice" setting: the whole file left out with one value-free warning --

struct BadCase {
  std::string label;
  std::string text;      // '@' becomes kPolicySentinel
  std::string expected;  // the whole error message
  std::string planted;   // besides kPolicySentinel: text of the file that must not be echoed
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

class BadPolicy : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPolicy, IsRejectedWithOneValueFreeProblemAtItsPath) {
  const BadCase& c = GetParam();
  std::string text = policy_with_sentinel(c.text);
  ASSERT_TRUE(contains(text, kPolicySentinel) || !c.planted.empty()) << "nothing planted";
  ASSERT_TRUE(c.planted.empty() || contains(text, c.planted));
  std::string error = policy_parse_error(text);
  EXPECT_EQ(error, c.expected);
  EXPECT_FALSE(contains(error, kPolicySentinel)) << error;
  EXPECT_TRUE(c.planted.empty() || !contains(error, c.planted)) << error;
}

class BadPolicyFile : public PolicyDiscovery, public ::testing::WithParamInterface<BadCase> {};

TEST_P(BadPolicyFile, IsLeftOutWithOneWarningAndOthersAreServed) {
  const BadCase& c = GetParam();
  write(home() / ".mcp.json", R"({"mcpServers": {"good": {"command": "g"}},
                                  "sluice": {"drainMs": 5}})");
  write(extra("bad.json"), policy_with_sentinel(c.text));
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("bad.json")};

  GatewayConfig config = discover(o);

  ASSERT_THAT(config.warnings, SizeIs(1));
  const std::string& warning = config.warnings[0];
  EXPECT_EQ(warning, "config file " + extra("bad.json").string() + " is left out: " + c.expected);
  EXPECT_FALSE(contains(warning, kPolicySentinel)) << warning;
  EXPECT_TRUE(c.planted.empty() || !contains(warning, c.planted)) << warning;
  EXPECT_THAT(policy_names_of(config), ElementsAre("good"));
  EXPECT_THAT(config.files_read, SizeIs(2));
  GatewayPolicy expected;
  expected.drain_bound = milliseconds(5);
  EXPECT_EQ(config.policy.read_budget, expected.read_budget);
  EXPECT_EQ(config.policy.mutating_budget, expected.mutating_budget);
  EXPECT_EQ(config.policy.client_cap, expected.client_cap);
  EXPECT_EQ(config.policy.queue_size, expected.queue_size);
  EXPECT_EQ(config.policy.queue_timeout, expected.queue_timeout);
  EXPECT_EQ(config.policy.abandon_bound, expected.abandon_bound);
  EXPECT_EQ(config.policy.drain_bound, expected.drain_bound);
  EXPECT_EQ(config.policy.forbid_force, expected.forbid_force);
  EXPECT_EQ(config.policy.fail_closed_when_stale, expected.fail_closed_when_stale);
}

// Some files also hold valid settings or servers before the bad value (readBudget 1,
// forbidForce true, a server named with the sentinel), so a leak of anything from a left-out
// file would show in the merged result.
const auto kBadCases = ::testing::Values(
    // The top-level object.
    BadCase{"sluice_not_object", R"({"sluice": ["@"]})",
            "$.sluice: expected an object, found an array of 1 item", ""},
    BadCase{"sluice_null", R"({"mcpServers": {"@": {"command": "c"}}, "sluice": null})",
            "$.sluice: expected an object, found null", ""},
    // readBudget / mutatingBudget: 1..1024.
    BadCase{"read_budget_zero", R"({"sluice": {"readBudget": 0, "@": "@"}})",
            "$.sluice.readBudget: must be at least 1 (an integer)", ""},
    BadCase{"read_budget_above", R"({"sluice": {"readBudget": 1025}})",
            "$.sluice.readBudget: must be at most 1024 (an integer)", "1025"},
    BadCase{"read_budget_string", R"({"sluice": {"readBudget": "@"}})",
            "$.sluice.readBudget: expected an integer, found a string of 6 characters", ""},
    BadCase{"read_budget_fraction", R"({"sluice": {"readBudget": 90817.5}})",
            "$.sluice.readBudget: expected an integer, found a number", "90817"},
    BadCase{"read_budget_integral_double", R"({"sluice": {"readBudget": 908172.0}})",
            "$.sluice.readBudget: expected an integer, found a number", "908172"},
    BadCase{"read_budget_exponent", R"({"sluice": {"readBudget": 9081e2}})",
            "$.sluice.readBudget: expected an integer, found a number", "9081"},
    BadCase{"mutating_budget_negative",
            R"({"sluice": {"readBudget": 1, "mutatingBudget": -90817263}})",
            "$.sluice.mutatingBudget: must be at least 1 (an integer)", "90817263"},
    BadCase{"mutating_budget_above", R"({"sluice": {"mutatingBudget": 90817263}})",
            "$.sluice.mutatingBudget: must be at most 1024 (an integer)", "90817263"},
    BadCase{"mutating_budget_boolean", R"({"sluice": {"mutatingBudget": true, "@": 1}})",
            "$.sluice.mutatingBudget: expected an integer, found a boolean", ""},
    // clientCap: 1..4096.
    BadCase{"client_cap_zero", R"({"sluice": {"forbidForce": true, "clientCap": 0, "x": "@"}})",
            "$.sluice.clientCap: must be at least 1 (an integer)", ""},
    BadCase{"client_cap_above", R"({"sluice": {"clientCap": 4097}})",
            "$.sluice.clientCap: must be at most 4096 (an integer)", "4097"},
    BadCase{"client_cap_null", R"({"sluice": {"clientCap": null, "@": "@"}})",
            "$.sluice.clientCap: expected an integer, found null", ""},
    // queueSize: 0..100000.
    BadCase{"queue_size_negative", R"({"sluice": {"queueSize": -90817263}})",
            "$.sluice.queueSize: must be at least 0 (an integer)", "90817263"},
    BadCase{"queue_size_above", R"({"sluice": {"queueSize": 100001}})",
            "$.sluice.queueSize: must be at most 100000 (an integer)", "100001"},
    BadCase{"queue_size_array", R"({"sluice": {"queueSize": ["@"]}})",
            "$.sluice.queueSize: expected an integer, found an array of 1 item", ""},
    // queueTimeoutMs: 0..3600000.
    BadCase{"queue_timeout_above", R"({"sluice": {"queueTimeoutMs": 3600001}})",
            "$.sluice.queueTimeoutMs: must be at most 3600000 (an integer)", "3600001"},
    BadCase{"queue_timeout_string", R"({"sluice": {"queueTimeoutMs": "30s@"}})",
            "$.sluice.queueTimeoutMs: expected an integer, found a string of 9 characters", ""},
    // abandonMs: 1000..86400000.
    BadCase{"abandon_below", R"({"sluice": {"abandonMs": 999}})",
            "$.sluice.abandonMs: must be at least 1000 (an integer)", "999"},
    BadCase{"abandon_above", R"({"sluice": {"abandonMs": 86400001}})",
            "$.sluice.abandonMs: must be at most 86400000 (an integer)", "86400001"},
    BadCase{"abandon_beyond_int64", R"({"sluice": {"abandonMs": 18446744073709551615}})",
            "$.sluice.abandonMs: must be at most 86400000 (an integer)", "18446744073709551615"},
    BadCase{"abandon_object", R"({"sluice": {"abandonMs": {"@": 1}}})",
            "$.sluice.abandonMs: expected an integer, found an object with 1 key", ""},
    // drainMs: 0..600000.
    BadCase{"drain_above", R"({"sluice": {"drainMs": 600001}})",
            "$.sluice.drainMs: must be at most 600000 (an integer)", "600001"},
    BadCase{"drain_string", R"({"sluice": {"drainMs": "@"}})",
            "$.sluice.drainMs: expected an integer, found a string of 6 characters", ""},
    // idleTimeoutMs: 0 (never) or 1000..86400000.
    BadCase{"idle_timeout_between", R"({"sluice": {"idleTimeoutMs": 999}})",
            "$.sluice.idleTimeoutMs: must be 0 or at least 1000 (an integer)", "999"},
    BadCase{"idle_timeout_negative", R"({"sluice": {"idleTimeoutMs": -90817263}})",
            "$.sluice.idleTimeoutMs: must be 0 or at least 1000 (an integer)", "90817263"},
    BadCase{"idle_timeout_above", R"({"sluice": {"idleTimeoutMs": 86400001}})",
            "$.sluice.idleTimeoutMs: must be at most 86400000 (an integer)", "86400001"},
    BadCase{"idle_timeout_string", R"({"sluice": {"idleTimeoutMs": "@"}})",
            "$.sluice.idleTimeoutMs: expected an integer, found a string of 6 characters", ""},
    BadCase{"idle_timeout_fraction", R"({"sluice": {"idleTimeoutMs": 90817.5}})",
            "$.sluice.idleTimeoutMs: expected an integer, found a number", "90817"},
    // indexConcurrency: 1..64; indexWaitMs: 0..600000; indexIdleMs: 0..86400000.
    BadCase{"index_concurrency_zero", R"({"sluice": {"indexConcurrency": 0, "@": 1}})",
            "$.sluice.indexConcurrency: must be at least 1 (an integer)", ""},
    BadCase{"index_concurrency_above", R"({"sluice": {"indexConcurrency": 65, "@": 1}})",
            "$.sluice.indexConcurrency: must be at most 64 (an integer)", ""},
    BadCase{"index_wait_above", R"({"sluice": {"indexWaitMs": 600001}})",
            "$.sluice.indexWaitMs: must be at most 600000 (an integer)", "600001"},
    BadCase{"index_wait_null", R"({"sluice": {"indexWaitMs": null, "@": 1}})",
            "$.sluice.indexWaitMs: expected an integer, found null", ""},
    BadCase{"index_idle_above", R"({"sluice": {"indexIdleMs": 86400001}})",
            "$.sluice.indexIdleMs: must be at most 86400000 (an integer)", "86400001"},
    BadCase{"index_idle_negative", R"({"sluice": {"indexIdleMs": -90817263}})",
            "$.sluice.indexIdleMs: must be at least 0 (an integer)", "90817263"},
    // The flags.
    BadCase{"forbid_force_string", R"({"sluice": {"forbidForce": "@"}})",
            "$.sluice.forbidForce: expected a boolean, found a string of 6 characters", ""},
    BadCase{"forbid_force_integer", R"({"sluice": {"forbidForce": 90817263}})",
            "$.sluice.forbidForce: expected a boolean, found an integer", "90817263"},
    BadCase{"fail_closed_string", R"({"sluice": {"failClosedWhenStale": "true", "@": 0}})",
            "$.sluice.failClosedWhenStale: expected a boolean, found a string of 4 characters", ""},
    BadCase{"fail_closed_null", R"({"sluice": {"failClosedWhenStale": null, "@": 0}})",
            "$.sluice.failClosedWhenStale: expected a boolean, found null", ""},
    // A server's own "sluice" object; server names and tool names are the operator's, so
    // paths say `entry`.
    BadCase{"server_sluice_not_object",
            R"({"mcpServers": {"srv@": {"command": "c", "sluice": ["@"]}}})",
            "$.mcpServers.entry.sluice (server entry 1): expected an object, found an array of "
            "1 item",
            ""},
    BadCase{"server_budget_zero",
            R"({"mcpServers": {"srv@": {"command": "c", "sluice": {"budget": 0}}}})",
            "$.mcpServers.entry.sluice.budget (server entry 1): must be at least 1 (an integer)",
            ""},
    BadCase{"server_budget_above",
            R"({"mcpServers": {"srv@": {"command": "c", "sluice": {"budget": 90817263}}}})",
            "$.mcpServers.entry.sluice.budget (server entry 1): must be at most 1024 (an "
            "integer)",
            "90817263"},
    BadCase{"server_budget_string",
            R"({"mcpServers": {"a": {"command": "c", "sluice": {"budget": "@"}}}})",
            "$.mcpServers.entry.sluice.budget (server entry 1): expected an integer, found a "
            "string of 6 characters",
            ""},
    BadCase{"remote_server_budget_negative",
            R"({"mcpServers": {"ok": {"command": "c"},
                "r@": {"url": "https://h", "sluice": {"budget": -90817263}}}})",
            "$.mcpServers.entry.sluice.budget (server entry 2): must be at least 1 (an integer)",
            "90817263"},
    BadCase{"tools_not_object",
            R"({"mcpServers": {"a": {"command": "c", "sluice": {"tools": ["@"]}}}})",
            "$.mcpServers.entry.sluice.tools (server entry 1): expected an object of integers, "
            "found an array of 1 item",
            ""},
    BadCase{"tool_budget_string",
            R"({"mcpServers": {"a": {"command": "c",
                "sluice": {"tools": {"fine": 2, "tool@": "@"}}}}})",
            "$.mcpServers.entry.sluice.tools.entry (server entry 1): expected an integer, found "
            "a string of 6 characters",
            ""},
    BadCase{"tool_budget_zero",
            R"({"mcpServers": {"a": {"command": "c", "sluice": {"tools": {"@": 0}}}}})",
            "$.mcpServers.entry.sluice.tools.entry (server entry 1): must be at least 1 (an "
            "integer)",
            ""},
    BadCase{"tool_budget_above",
            R"({"mcpServers": {"a": {"command": "c", "sluice": {"tools": {"@": 90817263}}}}})",
            "$.mcpServers.entry.sluice.tools.entry (server entry 1): must be at most 1024 (an "
            "integer)",
            "90817263"},
    BadCase{"server_idle_timeout_between",
            R"({"mcpServers": {"srv@": {"command": "c", "idleTimeoutMs": 999}}})",
            "$.mcpServers.entry.idleTimeoutMs (server entry 1): must be 0 or at least 1000 (an "
            "integer)",
            ""},
    BadCase{"server_idle_timeout_above",
            R"({"mcpServers": {"ok": {"command": "c"},
                "srv@": {"command": "c", "idleTimeoutMs": 90817263}}})",
            "$.mcpServers.entry.idleTimeoutMs (server entry 2): must be at most 86400000 (an "
            "integer)",
            "90817263"},
    BadCase{"server_idle_timeout_boolean",
            R"({"mcpServers": {"srv@": {"command": "c", "idleTimeoutMs": true}}})",
            "$.mcpServers.entry.idleTimeoutMs (server entry 1): expected an integer, found a "
            "boolean",
            ""},
    BadCase{"tool_budget_fraction",
            R"({"mcpServers": {"a": {"command": "c", "sluice": {"tools": {"@": 1.5}}}}})",
            "$.mcpServers.entry.sluice.tools.entry (server entry 1): expected an integer, found "
            "a number",
            ""});

INSTANTIATE_TEST_SUITE_P(Policy, BadPolicy, kBadCases,
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return info.param.label;
                         });

INSTANTIATE_TEST_SUITE_P(Policy, BadPolicyFile, kBadCases,
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           return info.param.label;
                         });

}  // namespace
}  // namespace sluice::config
