// The persistent catalog through the real binary: a second run finds a server's tools in the
// cache without starting it, describes them from the cache, and starts it only for a call
// (validated against the live list, which then replaces the cached one); a search indexes
// servers with no cached listing within sluice.indexWaitMs; two sluice processes share one
// state directory; `sluice index` fills the cache; a corrupt cache file is rebuilt.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <map>
#include <set>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

class CatalogCache : public ::testing::Test {
 protected:
  // A config whose server `fx` runs the fixture with `args` (through `command`).
  fs::path config(const std::vector<std::string>& args, const std::string& policy = "{}",
                  const std::string& name = "cfg/.mcp.json") {
    return dir_.write(name, R"({"mcpServers":{"fx":)" + fixture_entry(marker_, args) +
                                R"(},"sluice":)" + policy + "}");
  }
  std::unique_ptr<Sluice> run(const fs::path& cfg, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--no-discover", "--config", cfg.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto s = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    s->initialize();
    return s;
  }
  static bj::value search(Sluice& s, const std::string& args) {
    return s.call_tool("gateway.catalog_search", args).at("structuredContent");
  }
  static bj::value server_row(Sluice& s) {
    return s.call_tool("gateway.health", "{}").at("structuredContent").at("servers").at(0);
  }
  // One run that lists fx (a search indexes it) and ends cleanly: the cache now holds it.
  void fill_cache(const fs::path& cfg) {
    auto s = run(cfg);
    auto found = search(*s, R"({"query":"echo"})");
    ASSERT_FALSE(found.at("results").as_array().empty()) << found;
    expect_clean_exit(*s);
    ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  void TearDown() override { EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()); }

  TempDir dir_;
  std::string marker_ = new_marker();
};

TEST_F(CatalogCache, ASecondRunFindsAndDescribesToolsWithoutStartingTheServer) {
  auto cfg = config({});
  fill_cache(cfg);
  auto s = run(cfg);
  auto found = search(*s, R"({"query":"echo"})");
  const auto& results = found.at("results").as_array();
  ASSERT_FALSE(results.empty()) << found;
  EXPECT_EQ(results[0].at("tool_id"), "fx::echo");
  EXPECT_EQ(results[0].at("source"), "cached");
  EXPECT_TRUE(results[0].as_object().contains("cached_age_s")) << results[0];
  EXPECT_GT(found.at("total_tools").to_number<std::int64_t>(), 1);
  auto described = s->call_tool("gateway.describe", R"({"tool_id":"fx::echo"})");
  ASSERT_FALSE(is_error(described)) << text_of(described);
  EXPECT_EQ(described.at("structuredContent").at("source"), "cached");
  // The whole schema, as the server listed it (sluice keeps only a summary in memory).
  const auto& schema = described.at("structuredContent").at("inputSchema");
  EXPECT_EQ(schema.at("required"), bj::array{"text"}) << schema;
  EXPECT_EQ(schema.at("properties").at("text").at("type"), "string") << schema;
  EXPECT_EQ(schema.at("additionalProperties"), false) << schema;
  // Neither the search nor the description started it.
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  auto row = server_row(*s);
  EXPECT_EQ(row.at("status"), "lazy");
  EXPECT_EQ(row.at("lists_from"), "cache");
  // A call starts it; the card then says online.
  auto called = s->call_tool("gateway.invoke",
                             R"({"tool_id":"fx::echo","arguments":{"text":"hi"}})");
  ASSERT_FALSE(is_error(called)) << text_of(called);
  auto again = search(*s, R"({"query":"echo"})");
  EXPECT_EQ(again.at("results").at(0).at("source"), "online");
  EXPECT_EQ(server_row(*s).at("lists_from"), "this_run");
  expect_clean_exit(*s);
}

// The tool ids an empty search lists, and where their cards came from.
std::map<std::string, std::string> listed(Sluice& s) {
  std::map<std::string, std::string> ids;
  auto found = s.call_tool("gateway.catalog_search", R"({"limit":100})").at("structuredContent");
  for (const auto& card : found.at("results").as_array()) {
    ids[std::string(card.at("tool_id").as_string())] = std::string(card.at("source").as_string());
  }
  return ids;
}

TEST_F(CatalogCache, ACallValidatesAgainstTheLiveListWhichReplacesTheCachedOne) {
  // The same definition (same command and env names) lists more tools in the second run: the
  // env value changes, and values are not part of what keys the cache.
  auto script = dir_.write("fx.sh", std::string("#!/bin/sh\nexec ") + FIXTURE_SERVER +
                                        " --tools=\"$FX_TOOLS\"\n");
  fs::permissions(script, fs::perms::owner_all);
  auto write_cfg = [&](const std::string& tools) {
    bj::object fx{{"command", script.string()},
                  {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}, {"FX_TOOLS", tools}}}};
    return dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + bj::serialize(fx) + "}}");
  };
  fill_cache(write_cfg("1"));
  auto s = run(write_cfg("3"));
  auto cached = listed(*s);
  for (const auto& [id, source] : cached) EXPECT_EQ(source, "cached") << id;
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  // A call starts the server: its live list (two tools more) replaces the cached one.
  auto echo = s->call_tool("gateway.invoke", R"({"tool_id":"fx::echo","arguments":{"text":"hi"}})");
  ASSERT_FALSE(is_error(echo)) << text_of(echo);
  auto live = listed(*s);
  ASSERT_EQ(live.size(), cached.size() + 2);
  std::string only_live;
  for (const auto& [id, source] : live) {
    EXPECT_EQ(source, "online") << id;
    if (!cached.count(id)) only_live = id;
  }
  ASSERT_FALSE(only_live.empty());
  // Calls of a tool only the live list has are validated against its live schema.
  auto bad = s->call_tool("gateway.invoke", R"({"tool_id":")" + only_live + R"(","arguments":{}})");
  EXPECT_TRUE(is_error(bad));
  EXPECT_NE(text_of(bad).find("query"), std::string::npos) << text_of(bad);
  auto good = s->call_tool("gateway.invoke", R"({"tool_id":")" + only_live +
                                                 R"(","arguments":{"query":"q"}})");
  ASSERT_FALSE(is_error(good)) << text_of(good);
  expect_clean_exit(*s);
  ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  // The next run has the live list in its cache.
  auto next = run(write_cfg("3"));
  auto again = listed(*next);
  EXPECT_EQ(again.size(), live.size());
  EXPECT_EQ(again.count(only_live), 1u);
  EXPECT_EQ(again[only_live], "cached");
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  expect_clean_exit(*next);
}

TEST_F(CatalogCache, AChangedDefinitionDoesNotUseTheOldListing) {
  fill_cache(config({}));
  auto s = run(config({"--tools=2"}));
  // The args changed: the old listing does not apply, so the search indexes the server again.
  auto now = listed(*s);
  ASSERT_FALSE(now.empty());
  for (const auto& [id, source] : now) EXPECT_EQ(source, "online") << id;
  expect_clean_exit(*s);
}

TEST_F(CatalogCache, ASearchAnswersWithinTheIndexWaitAndListsTheServersStillComing) {
  auto cfg = dir_.write(
      "cfg/.mcp.json",
      R"({"mcpServers":{"slow":)" + fixture_entry(marker_, {"--start-delay-ms=4000"}) +
          R"(,"quick":)" + fixture_entry(marker_, {"--name=quick"}) +
          R"(},"sluice":{"indexWaitMs":800}})");
  auto s = run(cfg);
  auto found = search(*s, R"({"query":"echo"})");
  // The quick server's tools arrived; the slow one is still coming, with its status.
  bool quick = false;
  for (const auto& card : found.at("results").as_array()) {
    quick = quick || card.at("server") == "quick";
  }
  EXPECT_TRUE(quick) << found;
  ASSERT_TRUE(found.as_object().contains("offline_servers")) << found;
  const auto& offline = found.at("offline_servers").as_array();
  ASSERT_EQ(offline.size(), 1u) << found;
  EXPECT_EQ(offline[0].at("server"), "slow");
  EXPECT_EQ(offline[0].at("status"), "starting");
  // It goes on in the background: a later search waits for it again (each within the bound).
  bool slow_found = false;
  for (int i = 0; i < 25 && !slow_found; ++i) {
    auto later = search(*s, R"({"query":"echo","filters":{"server":"slow"}})");
    slow_found = !later.at("results").as_array().empty();
  }
  EXPECT_TRUE(slow_found);
  expect_clean_exit(*s);
}

TEST_F(CatalogCache, IndexingStartsAtMostIndexConcurrencyServersAtOnce) {
  const fs::path gate = dir_.path() / "gate";
  std::string servers;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "g" + std::to_string(i);
    if (i > 0) servers += ",";
    servers += "\"" + name + "\":" +
               fixture_entry(marker_, {"--name=" + name, "--start-gate=" + gate.string()});
  }
  auto cfg = dir_.write("cfg/.mcp.json", R"({"mcpServers":{)" + servers +
                                             R"(},"sluice":{"indexConcurrency":2,"indexWaitMs":0}})");
  auto s = run(cfg);
  auto first = search(*s, R"({"query":"echo"})");
  EXPECT_TRUE(first.at("results").as_array().empty()) << first;
  // Two servers are started and held at the gate; the other three wait their turn.
  auto started = [&] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      n += e.path().filename().string().starts_with("gate.started.") ? 1 : 0;
    }
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (started() < 2 && std::chrono::steady_clock::now() < deadline) {
    processes_with_marker(marker_);  // a wait on state, bounded: each pass scans /proc
  }
  ASSERT_EQ(started(), 2u);
  auto health = s->call_tool("gateway.health", "{}").at("structuredContent");
  EXPECT_EQ(health.at("servers_by_status").at("starting"), 2) << health.at("servers_by_status");
  EXPECT_EQ(health.at("servers_by_status").at("lazy"), 3) << health.at("servers_by_status");
  EXPECT_EQ(health.at("gateway").at("servers_indexing"), 5);
  EXPECT_EQ(processes_with_marker(marker_).size(), 2u);
  // The gate opens: every server is indexed, two at a time.
  std::ofstream(gate) << "open";
  std::set<std::string> found;
  const auto indexed_by = std::chrono::steady_clock::now() + kGuard;
  while (found.size() < 5 && std::chrono::steady_clock::now() < indexed_by) {
    auto all = s->call_tool("gateway.catalog_search",
                            R"({"query":"echo","limit":100})").at("structuredContent");
    for (const auto& card : all.at("results").as_array()) {
      if (card.at("tool_name") == "echo") found.insert(std::string(card.at("server").as_string()));
    }
  }
  EXPECT_EQ(found.size(), 5u);
  expect_clean_exit(*s);
}

TEST_F(CatalogCache, TwoProcessesShareOneStateDirectory) {
  auto one = dir_.write("one/.mcp.json",
                        R"({"mcpServers":{"alpha":)" + fixture_entry(marker_, {"--tools=1"}) + "}}");
  auto two = dir_.write("two/.mcp.json",
                        R"({"mcpServers":{"beta":)" + fixture_entry(marker_, {"--tools=2"}) + "}}");
  auto both = dir_.write("both/.mcp.json", R"({"mcpServers":{"alpha":)" +
                                               fixture_entry(marker_, {"--tools=1"}) +
                                               R"(,"beta":)" + fixture_entry(marker_, {"--tools=2"}) +
                                               "}}");
  {
    auto a = run(one);
    auto b = run(two);
    EXPECT_FALSE(search(*a, R"({"query":"echo"})").at("results").as_array().empty());
    EXPECT_FALSE(search(*b, R"({"query":"echo"})").at("results").as_array().empty());
    expect_clean_exit(*a);
    expect_clean_exit(*b);
  }
  ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  auto s = run(both);
  auto found = search(*s, R"({"query":"echo"})");
  std::set<std::string> servers;
  for (const auto& card : found.at("results").as_array()) {
    servers.insert(std::string(card.at("server").as_string()));
    EXPECT_EQ(card.at("source"), "cached");
  }
  EXPECT_EQ(servers, (std::set<std::string>{"alpha", "beta"})) << found;
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  expect_clean_exit(*s);
}

TEST_F(CatalogCache, IndexFillsTheCacheAndSaysWhatItDid) {
  auto cfg = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker_) +
                                             R"(,"off":{"command":"nope","disabled":true}}})");
  RunResult r = run_sluice({"index", "--json", "--no-discover", "--config", cfg.string()},
                           dir_.path(), dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bj::value summary = bj::parse(r.out);
  EXPECT_EQ(summary.at("indexed"), 1);
  EXPECT_EQ(summary.at("failed"), 0);
  EXPECT_EQ(summary.at("skipped"), 1);
  EXPECT_EQ(summary.at("concurrency"), 8);
  EXPECT_TRUE(summary.at("cache").at("available").as_bool());
  const auto& rows = summary.at("servers").as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("server"), "fx");
  EXPECT_EQ(rows[0].at("status"), "indexed");
  EXPECT_GT(rows[0].at("tools").to_number<std::int64_t>(), 1);
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  // What it indexed serves the next run from the cache.
  auto s = run(cfg);
  auto found = search(*s, R"({"query":"echo"})");
  ASSERT_FALSE(found.at("results").as_array().empty());
  EXPECT_EQ(found.at("results").at(0).at("source"), "cached");
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  expect_clean_exit(*s);
  // Without --json: a line per server and a summary.
  RunResult text = run_sluice({"index", "--no-discover", "--config", cfg.string(), "fx"},
                              dir_.path(), dir_.path());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("fx: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("indexed 1 of 1 server(s)"), std::string::npos) << text.out;
  // An unknown name is refused, naming what it meant.
  RunResult unknown = run_sluice({"index", "--no-discover", "--config", cfg.string(), "fy"},
                                 dir_.path(), dir_.path());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("did you mean fx"), std::string::npos) << unknown.err;
}

TEST_F(CatalogCache, ACorruptCacheFileIsRebuiltAndSluiceServes) {
  auto cfg = config({});
  fs::path state = dir_.path() / ".local" / "state" / "sluice";
  fs::create_directories(state);
  std::ofstream(state / "catalog.sqlite3") << std::string(8192, 'x');
  auto s = run(cfg);
  auto found = search(*s, R"({"query":"echo"})");
  EXPECT_FALSE(found.at("results").as_array().empty()) << found;
  auto cache = s->call_tool("gateway.health", "{}").at("structuredContent").at("gateway").at(
      "catalog_cache");
  EXPECT_TRUE(cache.at("problem").is_string()) << cache;
  expect_clean_exit(*s);
  // Rebuilt: the next run is served from it.
  auto next = run(cfg);
  EXPECT_EQ(search(*next, R"({"query":"echo"})").at("results").at(0).at("source"), "cached");
  expect_clean_exit(*next);
}

TEST_F(CatalogCache, WordNetSynonymsAreLookedUpOffTheLoopAndServeTheNextSearch) {
  auto s = run(config({}));
  // "reverberate" is WordNet's synonym of the fixture's "echo", in no curated row.
  search(*s, R"({"query":"reverberate"})");
  const auto by = std::chrono::steady_clock::now() + kGuard;
  auto pending = [&] {
    return s->call_tool("gateway.health", R"({"limit":1})")
        .at("structuredContent")
        .at("gateway")
        .at("synonym_words_pending")
        .to_number<std::int64_t>();
  };
  while (pending() > 0 && std::chrono::steady_clock::now() < by) {
  }
  ASSERT_EQ(pending(), 0);
  auto found = search(*s, R"({"query":"reverberate"})");
  ASSERT_FALSE(found.at("results").as_array().empty()) << found;
  EXPECT_EQ(found.at("results").at(0).at("tool_id"), "fx::echo") << found;
  expect_clean_exit(*s);
}

TEST_F(CatalogCache, FiltersKeepOnlineOrCachedServersAndReadOnlyTools) {
  auto both = dir_.write("both/.mcp.json", R"({"mcpServers":{"old":)" + fixture_entry(marker_) +
                                               R"(,"live":)" + fixture_entry(marker_) + "}}");
  fill_cache(both);  // both listed once: the next run has both cached
  auto s = run(both);
  auto connected = s->call_tool("gateway.connect_server", R"({"server_name":"live"})");
  ASSERT_FALSE(is_error(connected)) << text_of(connected);
  auto servers_of = [&](const std::string& filters) {
    std::set<std::string> servers;
    auto found = search(*s, R"({"limit":100,"filters":)" + filters + "}");
    for (const auto& card : found.at("results").as_array()) {
      servers.insert(std::string(card.at("server").as_string()));
    }
    return servers;
  };
  EXPECT_EQ(servers_of(R"({"availability":"online"})"), std::set<std::string>{"live"});
  EXPECT_EQ(servers_of(R"({"availability":"cached"})"), std::set<std::string>{"old"});
  EXPECT_EQ(servers_of(R"({"availability":"any"})"), (std::set<std::string>{"live", "old"}));
  auto read_only = search(*s, R"({"limit":100,"filters":{"read_only":true}})");
  const auto& cards = read_only.at("results").as_array();
  ASSERT_FALSE(cards.empty());
  for (const auto& card : cards) EXPECT_EQ(card.at("read_only"), true) << card;
  auto all = search(*s, R"({"limit":100})");
  EXPECT_LT(read_only.at("total_matches").to_number<std::int64_t>(),
            all.at("total_matches").to_number<std::int64_t>());
  expect_clean_exit(*s);
}

TEST_F(CatalogCache, NoCacheNeitherReadsNorWrites) {
  auto cfg = config({});
  fill_cache(cfg);
  auto s = run(cfg, {"--no-cache"});
  auto found = search(*s, R"({"query":"echo"})");
  ASSERT_FALSE(found.at("results").as_array().empty());
  EXPECT_EQ(found.at("results").at(0).at("source"), "online");
  auto cache = s->call_tool("gateway.health", "{}").at("structuredContent").at("gateway").at(
      "catalog_cache");
  EXPECT_FALSE(cache.at("available").as_bool());
  expect_clean_exit(*s);
}

}  // namespace
}  // namespace sluice::test
