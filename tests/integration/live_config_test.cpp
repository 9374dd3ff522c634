// Live configuration (ds_config_reload) through the real binary and real fixture servers:
// the config file is rewritten as an editor saves it (a new file renamed over the old one)
// while sluice serves, and sluice applies it without restarting itself: an added server is
// found, a removed one's child goes, a changed one restarts only once its pending call ends,
// a broken file keeps the last good configuration until it is fixed, and aggregate clients
// hear that their lists changed. Every wait polls gateway.health within a guard.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <signal.h>

#include <fstream>
#include <functional>
#include <map>
#include <thread>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

class LiveConfig : public ::testing::Test {
 protected:
  // The config file with these servers (name -> fixture args), saved as editors save it.
  void save(const std::map<std::string, std::vector<std::string>>& servers) {
    std::string entries;
    for (const auto& [name, args] : servers) {
      if (!entries.empty()) entries += ",";
      entries += "\"" + name + "\":" + fixture_entry(marker_, args);
    }
    save_text(R"({"mcpServers":{)" + entries + "}}");
  }
  void save_text(const std::string& text) {
    fs::create_directories(dir_.path() / "cfg");
    fs::path tmp = dir_.path() / "cfg" / ".mcp.json.tmp";
    std::ofstream(tmp) << text;
    fs::rename(tmp, config_path());
  }
  fs::path config_path() const { return dir_.path() / "cfg" / ".mcp.json"; }

  void start(const std::map<std::string, std::vector<std::string>>& servers,
             std::vector<std::string> extra = {}) {
    save(servers);
    std::vector<std::string> args{"serve", "--log-stderr", "--no-discover", "--config",
                                  config_path().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    sluice_->initialize();
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }

  bj::object health() {
    return sluice_->call_tool("gateway.health", "{}").at("structuredContent").as_object();
  }
  // The first health report `ok` accepts, within the guard (the last one otherwise).
  bj::object health_until(const std::function<bool(const bj::object&)>& ok) {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    bj::object h = health();
    while (!ok(h) && std::chrono::steady_clock::now() < deadline) h = health();
    EXPECT_TRUE(ok(h)) << bj::serialize(h);
    return h;
  }
  static const bj::object* row(const bj::object& h, const std::string& name) {
    for (const auto& r : h.at("servers").as_array()) {
      if (r.at("name") == name.c_str()) return &r.as_object();
    }
    return nullptr;
  }
  void connect(const std::string& name) {
    auto c = sluice_->call_tool("gateway.connect_server", R"({"server_name":")" + name + "\"}");
    ASSERT_FALSE(is_error(c)) << text_of(c);
  }
  void send_gate(const std::string& id, const std::string& tool_id) {
    sluice_->send(R"({"jsonrpc":"2.0","id":")" + id +
                  R"(","method":"tools/call","params":{"name":"gateway.invoke","arguments":)"
                  R"({"tool_id":")" +
                  tool_id + R"(","arguments":{"path":")" + (dir_.path() / "open").string() +
                  R"(","marker":")" + (dir_.path() / "done").string() + R"(","started":")" +
                  (dir_.path() / "started").string() + R"("}}}})");
    ASSERT_TRUE(wait_file(dir_.path() / "started"));
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(LiveConfig, AnAddedServerIsFoundWithoutRestartingSluice) {
  start({{"one", {}}});
  const pid_t pid = sluice_->pid();
  save({{"one", {}}, {"two", {"--tools=3"}}});
  bj::object h = health_until([](const bj::object& h) { return row(h, "two") != nullptr; });
  EXPECT_EQ(h.at("config_generation"), 2);
  EXPECT_EQ(h.at("config_reload").at("last").at("added"), 1);
  auto found = sluice_->call_tool("gateway.catalog_search",
                                  R"({"query":"echo","filters":{"server":"two"}})");
  EXPECT_NE(bj::serialize(found).find("two"), std::string::npos) << bj::serialize(found);
  connect("two");
  found = sluice_->call_tool("gateway.catalog_search",
                             R"({"query":"echo","filters":{"server":"two"}})");
  EXPECT_NE(bj::serialize(found).find("two::echo"), std::string::npos) << bj::serialize(found);
  EXPECT_EQ(sluice_->pid(), pid);
  // The log is written by its own thread: wait for the line (bounded), do not race it.
  std::string err = sluice_->stderr_text();
  for (auto until = std::chrono::steady_clock::now() + kGuard;
       err.find("ds_config_reload") == std::string::npos &&
       std::chrono::steady_clock::now() < until;
       err = sluice_->stderr_text()) {
    std::this_thread::yield();
  }
  EXPECT_NE(err.find("ds_config_reload"), std::string::npos) << err;
}

TEST_F(LiveConfig, ARemovedServersChildIsGoneAndHealthNoLongerListsIt) {
  start({{"one", {}}, {"two", {}}});
  connect("two");
  bj::object before = health();
  ASSERT_NE(row(before, "two"), nullptr);
  const auto child = static_cast<pid_t>(row(before, "two")->at("pid").to_number<std::int64_t>());
  save({{"one", {}}});
  health_until([](const bj::object& h) {
    return row(h, "two") == nullptr && h.at("config_reload").at("draining").as_array().empty();
  });
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (::kill(child, 0) == 0 && std::chrono::steady_clock::now() < deadline) health();
  EXPECT_NE(::kill(child, 0), 0) << "the removed server's child is gone";
  auto refused = sluice_->call_tool("gateway.invoke", R"({"tool_id":"two::echo","arguments":{}})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_NE(text_of(refused).find("removed from the configuration"), std::string::npos)
      << text_of(refused);
}

TEST_F(LiveConfig, AChangedServerRestartsWithItsNewArgumentsOnlyOnceItsPendingCallEnds) {
  start({{"fx", {}}});
  connect("fx");
  const auto tools_before = row(health(), "fx")->at("tool_count").to_number<std::int64_t>();
  const auto pid_before = row(health(), "fx")->at("pid").to_number<std::int64_t>();
  send_gate("g1", "fx::gate");
  save({{"fx", {"--tools=5"}}});
  bj::object waiting = health_until([](const bj::object& h) {
    const bj::object* r = row(h, "fx");
    return r && r->contains("config_change");
  });
  const bj::object& r = *row(waiting, "fx");
  std::string next_step(r.at("config_change").at("next_step").as_string());
  EXPECT_NE(next_step.find("finish or cancel its 1 pending call(s)"), std::string::npos)
      << next_step;
  EXPECT_EQ(r.at("pid").to_number<std::int64_t>(), pid_before) << "not restarted while busy";
  EXPECT_EQ(waiting.at("config_generation"), 2);
  std::ofstream(dir_.path() / "open") << "";
  ASSERT_TRUE(wait_file(dir_.path() / "done"));
  bj::object after = health_until([&](const bj::object& h) {
    const bj::object* r = row(h, "fx");
    return r && r->at("status") == "online" &&
           r->at("tool_count").to_number<std::int64_t>() == tools_before + 5;
  });
  EXPECT_FALSE(row(after, "fx")->contains("config_change"));
  EXPECT_NE(row(after, "fx")->at("pid").to_number<std::int64_t>(), pid_before);
  // The replacement counts its generations on from the old server's (distinct owner tokens).
  EXPECT_GT(row(after, "fx")->at("generation").to_number<std::int64_t>(),
            row(waiting, "fx")->at("generation").to_number<std::int64_t>());
}

TEST_F(LiveConfig, ABrokenFileKeepsTheLastGoodConfigurationUntilItIsFixed) {
  start({{"one", {}}});
  save_text(R"({"mcpServers": {"one": )");
  bj::object broken = health_until([](const bj::object& h) {
    return h.at("config_reload").at("last").at("outcome") == "rejected";
  });
  EXPECT_NE(row(broken, "one"), nullptr) << "the last good configuration is kept";
  EXPECT_EQ(broken.at("config_generation"), 1);
  const auto& problem = broken.at("config_reload").at("problem");
  EXPECT_EQ(problem.at("rejected_files").at(0).at("file"), config_path().c_str());
  EXPECT_EQ(bj::serialize(problem).find("mcpServers\": {\"one"), std::string::npos)
      << "value-free: no file content";
  save({{"one", {}}, {"two", {}}});
  bj::object fixed = health_until([](const bj::object& h) { return row(h, "two") != nullptr; });
  EXPECT_FALSE(fixed.at("config_reload").as_object().contains("problem"));
  EXPECT_EQ(fixed.at("config_generation"), 2);
}

TEST_F(LiveConfig, AggregateClientsHearThatTheirListsChanged) {
  start({{"one", {}}}, {"--expose", "all"});
  sluice_->request("tools/list", "{}");  // starts "one", which is a list change of its own
  auto heard = [&] {
    std::size_t n = 0;
    for (const auto& line : sluice_->notifications()) {
      if (line.find("notifications/tools/list_changed") != std::string::npos) ++n;
    }
    return n;
  };
  const std::size_t before = heard();
  save({{"one", {}}, {"two", {}}});
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (heard() == before && std::chrono::steady_clock::now() < deadline) {
    sluice_->request("ping", "{}");
  }
  EXPECT_GT(heard(), before);
  auto listed = sluice_->request("tools/list", "{}");
  EXPECT_NE(bj::serialize(listed).find("two__echo"), std::string::npos) << bj::serialize(listed);
}

}  // namespace
}  // namespace sluice::test
