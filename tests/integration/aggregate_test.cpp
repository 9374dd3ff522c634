// Aggregate mode (`--expose all`, `--expose meta,all`): every downstream tool listed
// directly as `server__tool`, paginated, called through the same validation and admission,
// and list_changed passed on to the client.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace sluice::test {
namespace {
namespace bj = boost::json;

class Aggregate : public ::testing::Test {
 protected:
  void start(const std::string& expose, std::vector<std::string> fixture_args = {},
             const std::vector<std::string>& sluice_args = {}, std::size_t servers = 1) {
    std::string entries;
    for (std::size_t i = 0; i < servers; ++i) {
      entries += (i ? ",\"fx" + std::to_string(i) + "\":" : "\"fx\":") +
                 fixture_entry(marker_, fixture_args);
    }
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{)" + entries + "}}");
    std::vector<std::string> args{"serve",      "--no-discover", "--config",
                                  cfg.string(), "--expose",      expose};
    args.insert(args.end(), sluice_args.begin(), sluice_args.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    init_ = sluice_->initialize();
  }
  // Every tool name over all pages.
  std::vector<std::string> all_names(std::size_t* pages = nullptr) {
    std::vector<std::string> names;
    std::string cursor;
    std::size_t n = 0;
    do {
      auto r =
          sluice_->request("tools/list", cursor.empty() ? "{}" : R"({"cursor":")" + cursor + "\"}")
              .at("result");
      ++n;
      for (const auto& t : r.at("tools").as_array()) names.emplace_back(t.at("name").as_string());
      cursor =
          r.as_object().contains("nextCursor") ? std::string(r.at("nextCursor").as_string()) : "";
    } while (!cursor.empty() && n < 100);
    if (pages) *pages = n;
    return names;
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
  bj::value init_;
};

TEST_F(Aggregate, EveryDownstreamToolIsListedAsServerTool) {
  start("all");
  EXPECT_EQ(init_.at("result").at("capabilities").at("tools").at("listChanged"), true);
  auto names = all_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "fx__echo"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "gateway.invoke"), names.end());
  auto r = sluice_->call_tool("fx__echo", R"({"text":"direct"})");
  EXPECT_EQ(text_of(r), "direct");
  auto bad = sluice_->call_tool("fx__add", R"({"a":"SENTINEL-agg"})");
  EXPECT_TRUE(is_error(bad));
  EXPECT_EQ(text_of(bad).find("SENTINEL-agg"), std::string::npos);
}

TEST_F(Aggregate, MetaAndAllTogetherListBoth) {
  start("meta,all");
  auto names = all_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "gateway.catalog_search"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "fx__add"), names.end());
}

TEST_F(Aggregate, LongListsArePaginatedAtTheConfiguredPageSize) {
  start("all", {"--tools=250"}, {"--list-page-size", "100"});
  std::size_t pages = 0;
  auto names = all_names(&pages);
  EXPECT_GE(names.size(), 250u);
  EXPECT_EQ(pages, 3u) << "250 tools and a few more, 100 a page";
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "no duplicates";
}

TEST_F(Aggregate, FifteenHundredToolsOfThreeServersAreListedInTwoRoundTripsByDefault) {
  start("meta,all", {"--tools=500"}, {}, 3);
  std::size_t pages = 0;
  auto names = all_names(&pages);
  EXPECT_GE(names.size(), 1500u);
  EXPECT_LE(pages, 2u);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "no duplicates";
  for (const char* name : {"fx__echo", "fx1__echo", "fx2__echo", "gateway.invoke"}) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), name)) << name;
  }
}

TEST_F(Aggregate, EveryToolOfALongListIsFoundByItsNameAndAnUnknownOneIsNot) {
  // Lookups go through an index sorted by name, not the order the server listed.
  start("meta,all", {"--tools=500"});
  auto names = all_names();
  std::size_t checked = 0;
  for (std::size_t i = 0; i < names.size(); i += 7) {
    if (names[i].rfind("fx__", 0) != 0) continue;
    const std::string id = "fx::" + names[i].substr(4);
    auto r = sluice_->call_tool("gateway.describe", R"({"tool_id":")" + id + R"("})");
    EXPECT_FALSE(is_error(r)) << id << ": " << text_of(r);
    ++checked;
  }
  EXPECT_GE(checked, 70u);
  auto unknown = sluice_->call_tool("gateway.describe", R"({"tool_id":"fx::no_such_tool"})");
  EXPECT_TRUE(is_error(unknown));
}

TEST_F(Aggregate, AChangedDownstreamListIsAnnouncedToTheClient) {
  start("all");
  all_names();  // starts the server (whose tools, now known, are announced once)
  auto announcements = [&] {
    std::size_t n = 0;
    for (const auto& line : sluice_->notifications()) {
      if (line.find("notifications/tools/list_changed") != std::string::npos) ++n;
    }
    return n;
  };
  sluice_->request("ping", "");
  std::size_t before = announcements();
  sluice_->call_tool("fx__list_changed", "{}");
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (announcements() == before && std::chrono::steady_clock::now() < deadline) {
    sluice_->request("ping", "");
  }
  EXPECT_GT(announcements(), before);
  auto names = all_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "fx__added_later"), names.end());
}

}  // namespace
}  // namespace sluice::test

namespace sluice::test {
namespace {

// The conformance fixture behind sluice in aggregate mode: a downstream's sampling request
// reaches the client and the answer goes back; its log notifications reach the client.
class AggregateRelay : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  void start(std::vector<std::string> extra) {
    bj::object entry{{"command", CONFORMANCE_SERVER},
                     {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{"conf":)" + bj::serialize(entry) + "}}");
    std::vector<std::string> args{"serve",      "--no-discover", "--config",
                                  cfg.string(), "--expose",      "all"};
    args.insert(args.end(), extra.begin(), extra.end());
    if (sluice_) expect_clean_exit(*sluice_);
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    sluice_->request("initialize",
                     R"({"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},)"
                     R"("clientInfo":{"name":"relay-test","version":"1"}})");
    sluice_->send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
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

TEST_F(AggregateRelay, ADownstreamsSamplingRequestIsAnsweredByTheClient) {
  sluice_->send(R"({"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":)"
                R"({"name":"conf__test_sampling","arguments":{"prompt":"Say hi"}}})");
  bool sampled = false;
  std::string result;
  while (result.empty()) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line.has_value()) << "no answer";
    bj::value v = bj::parse(*line);
    const auto& o = v.as_object();
    if (o.contains("method") && o.at("method") == "sampling/createMessage") {
      sampled = true;
      std::string id = bj::serialize(o.at("id"));
      sluice_->send(R"({"jsonrpc":"2.0","id":)" + id +
                    R"(,"result":{"role":"assistant","content":{"type":"text","text":"hi from )"
                    R"(the client"},"model":"test-model","stopReason":"endTurn"}})");
    } else if (o.contains("id") && o.at("id") == "call-1") {
      result = *line;
    }
  }
  EXPECT_TRUE(sampled);
  EXPECT_NE(result.find("hi from the client"), std::string::npos) << result;
}

TEST_F(AggregateRelay, ADownstreamsLogMessagesReachTheClient) {
  auto r = sluice_->call_tool("conf__test_tool_with_logging", "{}");
  EXPECT_FALSE(is_error(r));
  std::size_t logs = 0;
  for (const auto& n : sluice_->notifications()) {
    if (n.find("notifications/message") != std::string::npos) ++logs;
  }
  EXPECT_EQ(logs, 3u);
}

TEST_F(AggregateRelay, PromptsAreListedAsServerPromptAndRoutedBack) {
  auto init_caps =
      sluice_->request("initialize", R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                                     R"("clientInfo":{"name":"again","version":"1"}})");
  EXPECT_TRUE(init_caps.at("result").at("capabilities").as_object().contains("prompts"));
  auto list = sluice_->request("prompts/list", "{}").at("result").at("prompts").as_array();
  std::vector<std::string> names;
  for (const auto& p : list) names.emplace_back(p.at("name").as_string());
  EXPECT_NE(std::find(names.begin(), names.end(), "conf__test_prompt_with_arguments"), names.end());
  auto got = sluice_->request("prompts/get", R"({"name":"conf__test_prompt_with_arguments",)"
                                             R"("arguments":{"arg1":"one","arg2":"two"}})");
  ASSERT_TRUE(got.as_object().contains("result")) << bj::serialize(got);
  EXPECT_NE(bj::serialize(got).find("one"), std::string::npos);
  auto unknown = sluice_->request("prompts/get", R"({"name":"nope__x"})");
  EXPECT_EQ(unknown.at("error").at("code"), -32602);
}

TEST_F(AggregateRelay, ResourcesAreListedAndReadThroughTheirServer) {
  auto list = sluice_->request("resources/list", "{}").at("result").at("resources").as_array();
  bool found = false;
  for (const auto& r : list) found = found || r.at("uri") == "test://static-text";
  EXPECT_TRUE(found);
  auto read = sluice_->request("resources/read", R"({"uri":"test://static-text"})");
  ASSERT_TRUE(read.as_object().contains("result")) << bj::serialize(read);
  EXPECT_EQ(read.at("result").at("contents").at(0).at("uri"), "test://static-text");
  auto templated = sluice_->request("resources/read", R"({"uri":"test://template/123/data"})");
  ASSERT_TRUE(templated.as_object().contains("result")) << bj::serialize(templated);
  EXPECT_NE(bj::serialize(templated).find("123"), std::string::npos);
  auto missing = sluice_->request("resources/read", R"({"uri":"nowhere://x"})");
  EXPECT_EQ(missing.at("error").at("code"), -32002);
  auto templates = sluice_->request("resources/templates/list", "{}");
  EXPECT_FALSE(templates.at("result").at("resourceTemplates").as_array().empty());
  auto sub = sluice_->request("resources/subscribe", R"({"uri":"test://watched-resource"})");
  EXPECT_TRUE(sub.as_object().contains("result")) << bj::serialize(sub);
}

TEST_F(AggregateRelay, PassthroughShowsTheServersOwnNames) {
  start({"--passthrough"});
  auto tools = sluice_->request("tools/list", "{}").at("result").at("tools").as_array();
  bool bare = false;
  for (const auto& t : tools) bare = bare || t.at("name") == "test_simple_text";
  EXPECT_TRUE(bare);
  auto r = sluice_->call_tool("test_simple_text", "{}");
  EXPECT_FALSE(is_error(r)) << bj::serialize(r);
  auto got = sluice_->request("prompts/get", R"({"name":"test_simple_prompt"})");
  EXPECT_TRUE(got.as_object().contains("result")) << bj::serialize(got);
}

TEST(Passthrough, NeedsExactlyOneServer) {
  TempDir dir;
  auto cfg = dir.write(".mcp.json", R"({"mcpServers":{"a":{"command":"/bin/true"},)"
                                    R"("b":{"command":"/bin/true"}}})");
  auto r = run_sluice(
      {"serve", "--no-discover", "--config", cfg.string(), "--expose", "all", "--passthrough"},
      dir.path(), dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exactly one configured server"), std::string::npos) << r.err;
}

TEST_F(AggregateRelay, CompletionAndLogLevelGoToTheOwningServer) {
  auto c =
      sluice_->request("completion/complete",
                       R"({"ref":{"type":"ref/prompt","name":"conf__test_prompt_with_arguments"},)"
                       R"("argument":{"name":"arg1","value":"x"}})");
  ASSERT_TRUE(c.as_object().contains("result")) << bj::serialize(c);
  EXPECT_TRUE(c.at("result").as_object().contains("completion"));
  auto level = sluice_->request("logging/setLevel", R"({"level":"warning"})");
  EXPECT_TRUE(level.as_object().contains("result")) << bj::serialize(level);
}

}  // namespace
}  // namespace sluice::test
