// A downstream's lists are bounded while they are read: a server listing 100,000 tools keeps
// the first Limits::max_tools_per_server and the rest are counted, a listing that would need
// more than Limits::max_list_pages pages stops there and says so, a repeated name is skipped
// and counted, and a huge description is cut at a UTF-8 boundary and marked. Health counts
// each, one log line per listing says so, and sluice keeps answering meanwhile. The fixture's
// generated tools (--tools=N) are distinct and differ from one server's seed to another's.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <map>
#include <set>

namespace sluice::test {
namespace {
namespace bj = boost::json;

constexpr std::size_t kCap = 16 * 1024;  // kMaxListedTextBytes
constexpr std::string_view kMark = "\u2026 (truncated)";

class ListCaps : public ::testing::Test {
 protected:
  void start(const std::string& servers, const std::string& expose = "meta") {
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{)" + servers + "}}");
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--log-stderr", "--no-discover", "--config", cfg.string(),
                                 "--expose", expose, "--log-level", "info"},
        dir_.path(), dir_.path());
    sluice_->initialize();
  }
  void start_fixture(const std::vector<std::string>& args) {
    start(R"("fx":)" + fixture_entry(marker_, args));
  }
  bj::value server_row() {
    return sluice_->call_tool("gateway.health", "{}").at("structuredContent").at("servers").at(0);
  }
  std::string description_of(const std::string& tool_id) {
    auto r = sluice_->call_tool("gateway.describe", R"({"tool_id":")" + tool_id + "\"}");
    EXPECT_FALSE(is_error(r)) << text_of(r);
    return std::string(r.at("structuredContent").at("description").as_string());
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

// A cut description: at most the cap, then the mark, and still whole characters.
void expect_cut(const std::string& description) {
  ASSERT_GT(description.size(), kMark.size());
  EXPECT_LE(description.size(), kCap + kMark.size());
  EXPECT_EQ(description.substr(description.size() - kMark.size()), kMark);
  const std::string kept = description.substr(0, description.size() - kMark.size());
  EXPECT_EQ(kept.substr(kept.size() - 3), "\u20ac") << "cut between characters, not inside one";
}

TEST_F(ListCaps, AHundredThousandToolsAreCappedAndCountedWhileSluiceKeepsAnswering) {
  // 1 verbose tool, 100,000 generated ones, the first 5 listed twice: 100,006 entries in 51
  // pages of 2,000.
  start_fixture({"--mode=oversized-lists", "--tools=100000", "--page-size=2000",
                 "--duplicate-tools=5", "--description-bytes=100000"});
  sluice_->send(R"({"jsonrpc":"2.0","id":"connect","method":"tools/call","params":)"
                R"({"name":"gateway.connect_server","arguments":{"server_name":"fx"}}})");
  sluice_->send(R"({"jsonrpc":"2.0","id":"ping","method":"ping"})");
  std::vector<std::string> order;
  while (order.size() < 2) {
    auto line = sluice_->read_line();
    ASSERT_TRUE(line.has_value()) << "no answer within the guard";
    bj::value v = bj::parse(*line);
    if (!v.as_object().contains("id")) continue;
    order.emplace_back(v.at("id").as_string());
    if (order.back() == "connect") {
      EXPECT_FALSE(v.at("result").as_object().contains("isError") &&
                   v.at("result").at("isError") == true)
          << *line;
    }
  }
  EXPECT_EQ(order.front(), "ping") << "the ping waited for the listing";

  auto row = server_row();
  EXPECT_EQ(row.at("status"), "online");
  EXPECT_EQ(row.at("tool_count"), 10000);
  EXPECT_EQ(row.at("skipped_list_entries").at("tools"), 5) << "the repeated names";
  EXPECT_EQ(row.at("list_entries_over_cap").at("tools"), 100006 - 10000 - 5);
  EXPECT_EQ(row.at("list_texts_cut").at("tools"), 1);
  EXPECT_FALSE(row.as_object().contains("list_pages_unread"));
  expect_cut(description_of("fx::verbose"));
  EXPECT_TRUE(sluice_->request("ping", "").at("result").is_object());

  expect_clean_exit(*sluice_);
  std::string err = sluice_->stderr_text();
  sluice_.reset();
  EXPECT_NE(err.find("tools/list: skipped 5 malformed entries (the first, entry 3: its \"name\" "
                     "repeats an earlier entry's); dropped 90001 entries beyond the cap of 10000 "
                     "(max_tools_per_server); cut the description or title of 1 entry to 16384 "
                     "bytes"),
            std::string::npos)
      << err.substr(0, 4000);
}

TEST_F(ListCaps, AListingStopsAtThePageBoundAndSaysSo) {
  // 20,000 tools in pages of 100: the page bound (100) is reached with more offered.
  start_fixture({"--mode=oversized-lists", "--tools=20000", "--page-size=100"});
  auto conn = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(conn)) << text_of(conn);
  auto row = server_row();
  EXPECT_EQ(row.at("tool_count"), 10000);
  EXPECT_EQ(row.at("list_entries_over_cap").at("tools"), 0);
  EXPECT_EQ(bj::serialize(row.at("list_pages_unread")), R"(["tools"])");
  expect_clean_exit(*sluice_);
  std::string err = sluice_->stderr_text();
  sluice_.reset();
  EXPECT_NE(err.find("tools/list: stopped after 100 pages (max_list_pages) with more offered"),
            std::string::npos)
      << err.substr(0, 4000);
}

TEST_F(ListCaps, AHugeDescriptionIsCutForTheCatalogAndTheToolStillAnswers) {
  start_fixture({"--description-bytes=50001"});
  auto r = sluice_->call_tool("gateway.invoke", R"({"tool_id":"fx::verbose"})");
  EXPECT_EQ(text_of(r), "verbose");
  expect_cut(description_of("fx::verbose"));
  EXPECT_EQ(server_row().at("list_texts_cut").at("tools"), 1);
  EXPECT_EQ(description_of("fx::echo"), "Returns the given text unchanged.") << "short ones stay";
}

TEST_F(ListCaps, GeneratedToolsAreDistinctAndDifferFromServerToServer) {
  start(R"("a":)" + fixture_entry(marker_, {"--tools=100", "--name=alpha"}) + R"(,"b":)" +
            fixture_entry(marker_, {"--tools=100", "--name=beta"}),
        "all");
  std::map<std::string, std::set<std::string>> names, descriptions;
  std::string cursor;
  for (int page = 0; page < 20; ++page) {
    auto r =
        sluice_->request("tools/list", cursor.empty() ? "{}" : R"({"cursor":")" + cursor + "\"}")
            .at("result");
    for (const auto& t : r.at("tools").as_array()) {
      std::string name(t.at("name").as_string());
      std::string server = name.substr(0, name.find("__"));
      names[server].insert(name.substr(name.find("__") + 2));
      descriptions[server].insert(std::string(t.at("description").as_string()));
    }
    if (!r.as_object().contains("nextCursor")) break;
    cursor = std::string(r.at("nextCursor").as_string());
  }
  ASSERT_EQ(names["a"].size(), 113u) << "the 13 fixture tools and 100 generated ones";
  EXPECT_EQ(names["b"].size(), 113u);
  EXPECT_GE(descriptions["a"].size(), 110u) << "descriptions differ too";
  EXPECT_EQ(names["a"].count("tool_0001"), 0u);
  std::size_t shared = 0;
  for (const auto& n : names["a"]) shared += names["b"].count(n);
  EXPECT_LT(shared, 13u + 50u) << "another seed draws other tools";
}

}  // namespace
}  // namespace sluice::test
