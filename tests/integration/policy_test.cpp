// The operator's policy through the real binary and real servers: allow and deny lists for
// servers, tools, prompts, resources and meta-tools (absent from search, describe and every
// listing; refused on every call path with the rule named), output caps (text cut at a UTF-8
// boundary, with how much was cut) and redaction of secrets in results (text and
// structuredContent, counted in health, never in sluice's log).
#include "harness.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sluice::test {
namespace {
namespace bj = boost::json;

bool policy_contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string str(const bj::value& v) { return v.is_string() ? std::string(v.as_string()) : ""; }

std::string repeat(std::string_view unit, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += unit;
  return out;
}

class Policy : public ::testing::Test {
 protected:
  // `servers`: the inside of mcpServers; `settings`: the top-level "sluice" object.
  void start(const std::string& servers, const std::string& settings,
             const std::vector<std::string>& flags = {}) {
    auto cfg = dir_.write("cfg/.mcp.json",
                          R"({"mcpServers":{)" + servers + R"(},"sluice":)" + settings + "}");
    std::vector<std::string> args{"serve",      "--log-stderr", "--no-discover", "--config",
                                  cfg.string(), "--log-level",  "debug"};
    args.insert(args.end(), flags.begin(), flags.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    sluice_->initialize();
  }
  std::string fx(const std::vector<std::string>& args = {}, const std::string& extra = "") {
    std::string e = fixture_entry(marker_, args);
    if (!extra.empty()) e = e.substr(0, e.size() - 1) + "," + extra + "}";
    return e;
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
  std::vector<std::string> search_ids(const std::string& query) {
    auto r =
        sluice_->call_tool("gateway.catalog_search", R"({"query":")" + query + R"(","limit":50})");
    std::vector<std::string> ids;
    for (const auto& c : r.at("structuredContent").at("results").as_array()) {
      ids.emplace_back(c.at("tool_id").as_string());
    }
    return ids;
  }
  bj::object server_row(const std::string& name) {
    auto h = sluice_->call_tool("gateway.health", R"({"server":")" + name + R"("})");
    for (const auto& row : h.at("structuredContent").at("servers").as_array()) {
      if (str(row.at("name")) == name) return row.as_object();
    }
    ADD_FAILURE() << "no health row for " << name;
    return {};
  }
  std::vector<std::string> aggregate_tool_names() {
    std::vector<std::string> names;
    auto tools = sluice_->request("tools/list", "{}").at("result").at("tools").as_array();
    for (const auto& t : tools) names.emplace_back(t.at("name").as_string());
    return names;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST_F(Policy, ADeniedToolIsAbsentFromSearchAndDescribeAndRefusedWithTheRule) {
  start("\"fx\":" + fx(), R"({"policy":{"deny":{"tools":["other::x","fx::sl*","fx::ad?"]}}})");
  auto ids = search_ids("add numbers sleep echo text");
  EXPECT_TRUE(has(ids, "fx::echo"));
  EXPECT_FALSE(has(ids, "fx::add"));
  EXPECT_FALSE(has(ids, "fx::slow"));
  auto described = sluice_->call_tool("gateway.describe", R"({"tool_id":"fx::add"})");
  EXPECT_TRUE(is_error(described));
  EXPECT_EQ(text_of(described),
            "fx::add is withheld by the operator's policy: denied by policy.deny.tools entry 3 "
            "(\"fx::ad?\")");
  auto refused = invoke("fx::add", R"({"a":1,"b":2})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_TRUE(
      policy_contains(text_of(refused), "denied by policy.deny.tools entry 3 (\"fx::ad?\")"));
  EXPECT_FALSE(policy_contains(text_of(refused), "\"a\""));
  auto slow = invoke("fx::slow", R"({"ms":1})");
  EXPECT_TRUE(policy_contains(text_of(slow), "denied by policy.deny.tools entry 2 (\"fx::sl*\")"));
  auto ok = invoke("fx::echo", R"({"text":"still here"})");
  EXPECT_FALSE(is_error(ok));
  EXPECT_EQ(text_of(ok), "still here");
  EXPECT_EQ(server_row("fx").at("list_entries_withheld").at("tools"), 2);
}

TEST_F(Policy, ARefusedCallIsARefusalInTheAuditLogWithNamesAndNoArguments) {
  start("\"fx\":" + fx(), R"({"policy":{"deny":{"tools":["fx::add"]}}})");
  EXPECT_TRUE(is_error(invoke("fx::add", R"({"a":"AUDIT-SENTINEL-77","b":2})")));
  expect_clean_exit(*sluice_);  // the writer drains at shutdown
  sluice_.reset();
  std::ifstream in(dir_.path() / ".local/state/sluice/audit.jsonl");
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(policy_contains(log,
                              R"("kind":"refusal","client":"stdio","server":"fx","tool":"add",)"
                              R"("outcome":"withheld by policy")"))
      << log;
  EXPECT_FALSE(policy_contains(log, "AUDIT-SENTINEL-77"));
}

TEST_F(Policy, ADeniedToolIsAbsentFromTheAggregateListingAndRefusedThere) {
  start("\"fx\":" + fx(), R"({"policy":{"deny":{"tools":["fx::add"]}}})", {"--expose", "all"});
  auto names = aggregate_tool_names();
  EXPECT_TRUE(has(names, "fx__echo"));
  EXPECT_FALSE(has(names, "fx__add"));
  auto r = sluice_->call_tool("fx__add", R"({"a":1,"b":2})");
  EXPECT_TRUE(is_error(r));
  EXPECT_TRUE(policy_contains(text_of(r), "denied by policy.deny.tools entry 1 (\"fx::add\")"));
}

TEST_F(Policy, DenyWinsOverAllowAndANonEmptyAllowListRestricts) {
  start("\"fx\":" + fx(),
        R"({"policy":{"allow":{"tools":["fx::e*","fx::add"]},"deny":{"tools":["fx::add"]}}})");
  EXPECT_FALSE(is_error(invoke("fx::echo", R"({"text":"x"})")));
  EXPECT_TRUE(policy_contains(text_of(invoke("fx::add", R"({"a":1,"b":2})")),
                              "denied by policy.deny.tools entry 1 (\"fx::add\")"));
  EXPECT_TRUE(policy_contains(text_of(invoke("fx::slow", R"({"ms":1})")),
                              "not allowed by policy.allow.tools (none of its 2 entries matches)"));
  auto ids = search_ids("add numbers sleep echo");
  EXPECT_EQ(ids, std::vector<std::string>{"fx::echo"});
}

TEST_F(Policy, ADeniedMetaToolIsAbsentFromToolsListAndRefused) {
  start("\"fx\":" + fx(), R"({"policy":{"deny":{"metaTools":["gateway.restart_*"]}}})");
  std::vector<std::string> names;
  bj::value list = sluice_->request("tools/list", "{}");
  for (const auto& t : list.at("result").at("tools").as_array()) {
    names.emplace_back(t.at("name").as_string());
  }
  EXPECT_TRUE(has(names, "gateway.invoke"));
  EXPECT_FALSE(has(names, "gateway.restart_server"));
  auto r = sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx"})");
  EXPECT_TRUE(is_error(r));
  EXPECT_EQ(text_of(r),
            "gateway.restart_server is withheld by the operator's policy: denied by "
            "policy.deny.metaTools entry 1 (\"gateway.restart_*\")");
}

TEST_F(Policy, ADeniedServerIsNeverStartedByAnyPath) {
  auto cfg = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fx() +
                                             R"(},"autoStart":["fx"],)"
                                             R"("sluice":{"policy":{"deny":{"servers":["f?"]}}}})");
  sluice_ = std::make_unique<Sluice>(std::vector<std::string>{"serve", "--no-discover", "--config",
                                                              cfg.string(), "--expose", "meta,all"},
                                     dir_.path(), dir_.path());
  sluice_->initialize();
  auto r = invoke("fx::echo", R"({"text":"x"})");
  EXPECT_EQ(text_of(r),
            "server fx is withheld by the operator's policy: denied by policy.deny.servers "
            "entry 1 (\"f?\")");
  EXPECT_TRUE(search_ids("echo").empty());
  EXPECT_FALSE(has(aggregate_tool_names(), "fx__echo"));
  auto h = sluice_->call_tool("gateway.health", "{}").at("structuredContent");
  EXPECT_TRUE(h.at("servers").as_array().empty());
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  auto one_shot = run_sluice(
      {"call", "fx::echo", "--args", R"({"text":"x"})", "--no-discover", "--config", cfg.string()},
      dir_.path(), dir_.path());
  EXPECT_NE(one_shot.exit_code, 0);
  EXPECT_TRUE(
      policy_contains(one_shot.out + one_shot.err, "denied by policy.deny.servers entry 1"));
  EXPECT_TRUE(processes_with_marker(marker_).empty());
}

TEST_F(Policy, SluiceCallIsRefusedWithTheRule) {
  auto cfg = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fx() +
                                             R"(},"sluice":{"policy":{"deny":)"
                                             R"({"tools":["*::add"]}}}})");
  auto r = run_sluice(
      {"call", "fx::add", "--args", R"({"a":1,"b":2})", "--no-discover", "--config", cfg.string()},
      dir_.path(), dir_.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(policy_contains(r.out + r.err, "denied by policy.deny.tools entry 1 (\"*::add\")"))
      << r.out << r.err;
}

TEST_F(Policy, AProjectFilesPolicyIsIgnored) {
  dir_.write("proj/.git/HEAD", "");
  dir_.write("proj/.mcp.json",
             R"({"mcpServers":{},"sluice":{"policy":{"deny":{"tools":["*::*"]}}}})");
  dir_.write(".mcp.json", R"({"mcpServers":{"fx":)" + fx() + "}}");
  sluice_ = std::make_unique<Sluice>(std::vector<std::string>{"serve"}, dir_.path(),
                                     dir_.path() / "proj");
  sluice_->initialize();
  auto r = invoke("fx::echo", R"({"text":"allowed"})");
  EXPECT_FALSE(is_error(r)) << text_of(r);
  EXPECT_EQ(text_of(r), "allowed");
}

TEST_F(Policy, TextOverItsCapIsCutAtAUtf8BoundaryAndSaysHowMuchWasCut) {
  start("\"fx\":" + fx({}, R"("sluice":{"maxOutputBytes":2048,)"
                           R"("tools":{"echo":{"maxOutputBytes":301}}})"),
        R"({"maxOutputBytes":100000})");
  // 300 ASCII bytes, then "é" (2 bytes) across the cap, then 100 more.
  auto r = invoke("fx::echo",
                  R"({"text":")" + repeat("a", 300) + "\xC3\xA9" + repeat("b", 100) + R"("})");
  EXPECT_FALSE(is_error(r));
  const auto& content = r.at("content").as_array();
  ASSERT_EQ(content.size(), 2u) << bj::serialize(r);
  EXPECT_EQ(str(content[0].at("text")), repeat("a", 300));
  EXPECT_EQ(content[1].at("text"),
            "[sluice: output cut: 102 of 402 bytes omitted (maxOutputBytes 301)]");
  // The server's cap for its other tools.
  auto large = invoke("fx::large", R"({"bytes":5000})");
  EXPECT_EQ(large.at("content").at(0).at("text").as_string().size(), 2048u);
  EXPECT_EQ(text_of(bj::value(bj::object{{"content", bj::array{large.at("content").at(1)}}})),
            "[sluice: output cut: 2952 of 5000 bytes omitted (maxOutputBytes 2048)]");
  auto small = invoke("fx::echo", R"({"text":"short"})");
  EXPECT_EQ(small.at("content").as_array().size(), 1u);
  bj::object row = server_row("fx");
  EXPECT_EQ(row.at("output_cuts"), 2);
  EXPECT_EQ(row.at("output_bytes_omitted"), 102 + 2952);
}

TEST_F(Policy, TheGatewayDefaultCapAppliesWhenNeitherToolNorServerSetsOne) {
  start("\"fx\":" + fx(), R"({"maxOutputBytes":1000})");
  auto large = invoke("fx::large", R"({"bytes":1500})");
  EXPECT_EQ(large.at("content").at(0).at("text").as_string().size(), 1000u);
  EXPECT_TRUE(
      policy_contains(bj::serialize(large), "500 of 1500 bytes omitted (maxOutputBytes 1000)"));
}

// Fake credentials of each built-in format, with the label each is replaced by.
std::vector<std::pair<std::string, std::string>> secrets() {
  return {
      {"private-key",
       "-----BEGIN PRIVATE KEY-----\\nMIIEvQ" + repeat("Qk", 30) + "\\n-----END PRIVATE KEY-----"},
      {"authorization-header", "Authorization: Basic dXNlcjpzM2NyZXQ0NTY3OA=="},
      {"bearer-token", "Bearer sk8QwErTy.12345-abcde"},
      {"aws-access-key", "AKIA" + repeat("Q4", 8)},
      {"github-token", "ghs_" + repeat("Zx9y", 9)},
      {"gitlab-token", "glpat-" + repeat("w3", 10)},
      {"slack-token", "xoxp-9876543210-fedcba"},
      {"jwt", "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJzbHVpY2UtdGVzdCJ9.c2lnLXZhbHVl"},
      {"google-api-key", "AIza" + repeat("G", 35)},
      {"stripe-key", "rk_test_" + repeat("5tR1", 6)},
      {"api-key", "sk-proj-" + repeat("Aa1_", 9)},
      {"npm-token", "npm_" + repeat("m", 36)},
  };
}

TEST_F(Policy, EachBuiltInSecretIsRedactedInTextAndStructuredContentAndCountedNotLogged) {
  start("\"fx\":" + fx({"--structured-echo"}), "{}");
  std::size_t expected = 0;
  for (const auto& [label, secret] : secrets()) {
    auto r = invoke("fx::echo_structured", R"({"text":"value: )" + secret + R"( end"})");
    ASSERT_FALSE(is_error(r)) << label;
    const std::string redacted = "value: [REDACTED:" + label + "] end";
    EXPECT_EQ(text_of(r), redacted) << label;
    EXPECT_EQ(str(r.at("structuredContent").at("text")), redacted) << label;
    EXPECT_EQ(str(r.at("structuredContent").at("nested").at(0).at("value")), redacted) << label;
    expected += 3;
  }
  EXPECT_EQ(server_row("fx").at("redactions").to_number<std::size_t>(), expected);
  auto plain = invoke("fx::echo_structured", R"({"text":"nothing secret"})");
  EXPECT_EQ(text_of(plain), "nothing secret");
  expect_clean_exit(*sluice_);
  sluice_->join_stderr();
  const std::string log = sluice_->stderr_text();
  for (const auto& [label, secret] : secrets()) {
    const std::string tail = secret.substr(secret.size() - 12);
    EXPECT_FALSE(policy_contains(log, tail)) << label;
  }
  sluice_.reset();
}

TEST_F(Policy, TheOperatorsOwnPatternsAreRedactedWithTheirPosition) {
  start("\"fx\":" + fx(), R"({"redact":{"builtIn":false,"patterns":["acme_[0-9a-f]{8}"]}})");
  auto r = invoke("fx::echo", R"({"text":"k=acme_0123abcd; ghp_)" + repeat("a1B2", 9) + R"("})");
  EXPECT_EQ(text_of(r), "k=[REDACTED:pattern-1]; ghp_" + repeat("a1B2", 9));
}

class PolicyAggregate : public ::testing::Test {
 protected:
  void SetUp() override {
    bj::object entry{{"command", CONFORMANCE_SERVER},
                     {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{"conf":)" + bj::serialize(entry) +
                                           R"(},"sluice":{"policy":{"deny":{)"
                                           R"("prompts":["conf::test_prompt_with_arguments"],)"
                                           R"("resources":["conf::test://static-*"]}}}})");
    sluice_ =
        std::make_unique<Sluice>(std::vector<std::string>{"serve", "--no-discover", "--config",
                                                          cfg.string(), "--expose", "all"},
                                 dir_.path(), dir_.path());
    sluice_->initialize();
    sluice_->request("tools/list", "{}");  // starts the downstream
  }
  void TearDown() override {
    expect_clean_exit(*sluice_);
    sluice_.reset();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(PolicyAggregate, ADeniedPromptIsNotListedAndGettingItNamesTheRule) {
  auto list = sluice_->request("prompts/list", "{}").at("result").at("prompts").as_array();
  bool listed = false, others = false;
  for (const auto& p : list) {
    listed = listed || p.at("name") == "conf__test_prompt_with_arguments";
    others = others || p.at("name") == "conf__test_simple_prompt";
  }
  EXPECT_FALSE(listed);
  EXPECT_TRUE(others);
  auto got = sluice_->request("prompts/get", R"({"name":"conf__test_prompt_with_arguments",)"
                                             R"("arguments":{"arg1":"SNTLarg","arg2":"two"}})");
  ASSERT_TRUE(got.as_object().contains("error")) << bj::serialize(got);
  const std::string message(got.at("error").at("message").as_string());
  EXPECT_TRUE(policy_contains(message, "denied by policy.deny.prompts entry 1")) << message;
  EXPECT_FALSE(policy_contains(bj::serialize(got), "SNTLarg"));
}

TEST_F(PolicyAggregate, ADeniedResourceIsNotListedAndReadingItNamesTheRule) {
  auto list = sluice_->request("resources/list", "{}").at("result").at("resources").as_array();
  for (const auto& r : list) EXPECT_NE(r.at("uri"), "test://static-text");
  auto read = sluice_->request("resources/read", R"({"uri":"test://static-text"})");
  ASSERT_TRUE(read.as_object().contains("error")) << bj::serialize(read);
  EXPECT_TRUE(
      policy_contains(std::string(read.at("error").at("message").as_string()),
                      "denied by policy.deny.resources entry 1 (\"conf::test://static-*\")"));
  auto templated = sluice_->request("resources/read", R"({"uri":"test://template/123/data"})");
  EXPECT_TRUE(templated.as_object().contains("result")) << bj::serialize(templated);
}

}  // namespace
}  // namespace sluice::test
