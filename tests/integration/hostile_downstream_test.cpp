// Downstream output is untrusted input (issue 9 items 7, 14, 19): malformed list entries
// are skipped and counted, a second answer to one request never replaces the first, and a
// line that never ends is a protocol violation that costs no CPU: the calls pending on that
// server fail at once and the server is restarted under the usual policy.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;

// utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) {
      stime = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

class HostileDownstream : public ::testing::Test {
 protected:
  void start(const std::string& mode, const std::string& expose = "meta") {
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{"fx":)" +
                                           fixture_entry(marker_, {"--mode=" + mode}) + "}}");
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--log-stderr", "--no-discover", "--config", cfg.string(),
                                 "--expose", expose, "--log-level", "info"},
        dir_.path(), dir_.path());
    sluice_->initialize();
  }
  bj::value health() {
    return sluice_->call_tool("gateway.health", "{}").at("structuredContent");
  }
  bj::value server_row() { return health().at("servers").at(0); }
  std::string invoke(const std::string& tool, const std::string& args = "{}") {
    auto r = sluice_->call_tool("gateway.invoke",
                                R"({"tool_id":"fx::)" + tool + R"(","arguments":)" + args + "}");
    EXPECT_FALSE(is_error(r)) << text_of(r);
    return text_of(r);
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }
  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(HostileDownstream, MalformedToolEntriesAreSkippedAndCountedBehindTheMetaTools) {
  start("hostile-lists");
  auto conn = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(conn)) << text_of(conn);
  EXPECT_EQ(conn.at("structuredContent").at("tool_count"), 2);
  EXPECT_EQ(invoke("echo", R"({"text":"still served"})"), "still served");
  auto second = sluice_->call_tool("gateway.describe", R"({"tool_id":"fx::second"})");
  EXPECT_FALSE(is_error(second)) << text_of(second);
  auto row = server_row();
  EXPECT_EQ(row.at("status"), "online");
  EXPECT_EQ(row.at("skipped_list_entries").at("tools"), 5);
  EXPECT_EQ(row.at("skipped_list_entries").at("prompts"), 4) << "listed behind meta-tools too";
  EXPECT_TRUE(sluice_->request("ping", "").at("result").is_object());
  expect_clean_exit(*sluice_);
  std::string err = sluice_->stderr_text();
  sluice_.reset();
  EXPECT_NE(err.find("tools/list: skipped 5 malformed entries (the first, entry 2: it has no "
                     "\"name\")"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("not a tool"), std::string::npos) << "value-free: " << err;
}

TEST_F(HostileDownstream, MalformedPromptsResourcesAndTemplatesAreSkippedInAggregateMode) {
  start("hostile-lists", "meta,all");
  std::vector<std::string> tools;
  const bj::value listed_tools = sluice_->request("tools/list", "{}");
  for (const auto& t : listed_tools.at("result").at("tools").as_array()) {
    std::string name(t.at("name").as_string());
    if (name.rfind("fx__", 0) == 0) tools.push_back(name);
  }
  EXPECT_EQ(tools, (std::vector<std::string>{"fx__echo", "fx__second"}));

  auto prompts = sluice_->request("prompts/list", "{}");
  ASSERT_TRUE(prompts.as_object().contains("result")) << bj::serialize(prompts);
  const auto& listed = prompts.at("result").at("prompts").as_array();
  ASSERT_EQ(listed.size(), 1u) << bj::serialize(prompts);
  EXPECT_EQ(listed.at(0).at("name"), "fx__greet");
  auto got = sluice_->request("prompts/get", R"({"name":"fx__greet"})");
  EXPECT_TRUE(got.as_object().contains("result")) << bj::serialize(got);

  auto resources = sluice_->request("resources/list", "{}");
  ASSERT_TRUE(resources.as_object().contains("result")) << bj::serialize(resources);
  ASSERT_EQ(resources.at("result").at("resources").as_array().size(), 1u);
  EXPECT_EQ(resources.at("result").at("resources").at(0).at("uri"), "fx://doc/a");
  auto templates = sluice_->request("resources/templates/list", "{}");
  ASSERT_TRUE(templates.as_object().contains("result")) << bj::serialize(templates);
  EXPECT_EQ(templates.at("result").at("resourceTemplates").as_array().size(), 1u);

  auto skipped = server_row().at("skipped_list_entries");
  EXPECT_EQ(skipped.at("tools"), 5);
  EXPECT_EQ(skipped.at("prompts"), 4);
  EXPECT_EQ(skipped.at("resources"), 2);
  EXPECT_EQ(skipped.at("resource_templates"), 2);
  EXPECT_EQ(health().at("gateway").at("coroutine_failures"), 0);
}

TEST_F(HostileDownstream, OnlyTheFirstOfThreeAnswersToACallReachesTheClient) {
  start("answer-thrice", "meta,all");
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(invoke("echo", R"({"text":"x"})"), "answer 1") << "call " << i;
    auto direct = sluice_->call_tool("fx__echo", R"({"text":"x"})");
    EXPECT_EQ(text_of(direct), "answer 1") << "call " << i;
  }
  // Two extra answers per call, dropped and counted.
  EXPECT_EQ(server_row().at("unmatched_responses"), 20);
}

TEST_F(HostileDownstream, AnEndlessLineFailsThePendingCallsAtOnceAndTheServerIsRestarted) {
  start("endless-line");
  auto conn = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(conn)) << text_of(conn);
  ASSERT_EQ(server_row().at("generation"), 1);
  const pid_t first_child = static_cast<pid_t>(server_row().at("pid").as_int64());

  const double cpu_before = cpu_seconds(sluice_->pid());
  const auto t0 = std::chrono::steady_clock::now();
  // Two calls pending on the server: the one it answers with an endless line, and one it
  // never reads.
  sluice_->send(R"({"jsonrpc":"2.0","id":501,"method":"tools/call","params":{"name":)"
                R"("gateway.invoke","arguments":{"tool_id":"fx::endless","arguments":{},)"
                R"("options":{"timeout_ms":8000}}}})");
  sluice_->send(R"({"jsonrpc":"2.0","id":502,"method":"tools/call","params":{"name":)"
                R"("gateway.invoke","arguments":{"tool_id":"fx::echo","arguments":)"
                R"({"text":"queued"},"options":{"timeout_ms":8000}}}})");
  std::map<std::int64_t, bj::value> answers;
  while (answers.size() < 2) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line.has_value()) << "no answer within the guard";
    bj::value v = bj::parse(*line);
    if (const auto* id = v.as_object().if_contains("id"); id && id->is_int64()) {
      answers[id->as_int64()] = v.at("result");
    }
  }
  const auto failed_after = std::chrono::steady_clock::now() - t0;
  for (auto& [id, result] : answers) {
    EXPECT_TRUE(is_error(result)) << id << ": " << text_of(result);
    EXPECT_EQ(text_of(result).find("did not answer within"), std::string::npos)
        << id << " failed promptly, not at its timeout: " << text_of(result);
  }
  EXPECT_NE(text_of(answers[501]).find("too large"), std::string::npos) << text_of(answers[501]);
  EXPECT_LT(failed_after, std::chrono::seconds(4));

  // ds_auto_restart_after_exit: a new generation comes online.
  bj::value row;
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  do {
    row = server_row();
  } while (!(row.at("generation") == 2 && row.at("status") == "online") &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(row.at("generation"), 2) << bj::serialize(row);
  EXPECT_EQ(row.at("status"), "online") << bj::serialize(row);
  EXPECT_EQ(row.at("restarts"), 1);
  EXPECT_NE(row.at("pid").as_int64(), first_child);
  const auto restarted_after = std::chrono::steady_clock::now() - t0;
  const double cpu_used = cpu_seconds(sluice_->pid()) - cpu_before;
  std::cout << "[ figures  ] endless line: calls failed after "
            << std::chrono::duration<double>(failed_after).count() << " s, restarted after "
            << std::chrono::duration<double>(restarted_after).count() << " s, sluice CPU "
            << cpu_used << " s (utime+stime)\n";
  EXPECT_LT(cpu_used, 2.0) << "sluice kept reading the endless line";
  EXPECT_EQ(invoke("echo", R"({"text":"served again"})"), "served again");

  expect_clean_exit(*sluice_);
  std::string err = sluice_->stderr_text();
  sluice_.reset();
  EXPECT_NE(err.find("a protocol violation"), std::string::npos) << err;
  EXPECT_EQ(err.find("xxxxxxxx"), std::string::npos) << "value-free";
}

}  // namespace
}  // namespace sluice::test
