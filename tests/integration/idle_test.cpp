// Idle shutdown (ds_idle_stop) through the real binary and real fixture processes: a server
// idle for its idleTimeoutMs is stopped (its child is gone), health shows it idle_stopped and
// when, the audit ring records it, and the next gateway.invoke starts a new generation; the
// default idle timeout leaves autoStart servers running.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace sluice::test {
namespace {
namespace bj = boost::json;

// The fixture server's idle_entry with `extra` members added (idleTimeoutMs).
std::string idle_entry(const std::string& marker, const bj::object& extra = {}) {
  bj::object o{{"command", FIXTURE_SERVER}, {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker}}}};
  for (const auto& kv : extra) o[kv.key()] = kv.value();
  return bj::serialize(o);
}

class IdleShutdown : public ::testing::Test {
 protected:
  void start(const std::string& config, const std::vector<std::string>& extra = {}) {
    auto cfg = dir_.write("cfg/.mcp.json", config);
    std::vector<std::string> args{"serve", "--no-discover", "--config", cfg.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    sluice_->initialize();
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    for (const std::string& m : {marker_, other_marker_}) {
      EXPECT_TRUE(wait_no_marker(m, kGuard).empty()) << "a process was left behind";
    }
  }
  bj::value health() { return sluice_->call_tool("gateway.health", "{}").at("structuredContent"); }
  bj::value row(const std::string& name) {
    const bj::value report = health();  // a named value: the loop below borrows from it
    for (const auto& r : report.at("servers").as_array()) {
      if (r.at("name").as_string() == name) return r;
    }
    ADD_FAILURE() << "no health row for " << name;
    return {};
  }
  // The server's row once no child is attached to it any more, bounded by kGuard.
  bj::value settled_row(const std::string& name) {
    const auto deadline = std::chrono::steady_clock::now() + kGuard;
    for (;;) {
      bj::value r = row(name);
      if (!r.is_object() || !r.as_object().contains("pid") ||
          std::chrono::steady_clock::now() > deadline) {
        return r;
      }
    }
  }
  std::string echo(const std::string& server, const std::string& text) {
    auto result = sluice_->call_tool(
        "gateway.invoke",
        R"({"tool_id":")" + server + R"(::echo","arguments":{"text":")" + text + R"("}})");
    EXPECT_FALSE(is_error(result)) << text_of(result);
    return text_of(result);
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::string other_marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(IdleShutdown, AnIdleChildIsStoppedShownInHealthAndStartedAgainByTheNextCall) {
  start(R"({"mcpServers":{"fx":)" + idle_entry(marker_, {{"idleTimeoutMs", 1000}}) + "}}");
  EXPECT_EQ(echo("fx", "first"), "first");
  bj::value online = row("fx");
  EXPECT_EQ(online.at("status"), "online");
  EXPECT_EQ(online.at("idle_timeout_ms"), 1000);
  EXPECT_TRUE(online.at("idle_stopped_at").is_null());
  ASSERT_EQ(processes_with_marker(marker_).size(), 1u);

  // Idle for a second: its child goes away by itself.
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "the idle child was not stopped";
  // The child's environment is gone once it has exited, a moment before sluice has reaped it
  // and let its pipes go; wait for the row to settle (the pid leaves it with the reap).
  bj::value stopped = settled_row("fx");
  EXPECT_EQ(stopped.at("status"), "idle_stopped");
  EXPECT_FALSE(stopped.as_object().contains("pid"));
  EXPECT_EQ(stopped.at("generation"), 1);
  EXPECT_TRUE(stopped.at("tools_known").as_bool()) << "its tools stay known";
  ASSERT_TRUE(stopped.at("idle_stopped_at").is_string());
  std::string at(stopped.at("idle_stopped_at").as_string());
  EXPECT_EQ(at.size(), 20u) << at;  // 2026-12-01T15:04:05Z
  EXPECT_EQ(at.back(), 'Z') << at;
  EXPECT_EQ(at[10], 'T') << at;
  bool audited = false;
  const bj::value report = health();
  for (const auto& e : report.at("audit").as_array()) {
    if (e.at("kind") == "idle_stop" && e.at("server") == "fx") audited = true;
  }
  EXPECT_TRUE(audited) << "no idle_stop audit record";

  // The next call starts it again, transparently, as a new generation.
  EXPECT_EQ(echo("fx", "again"), "again");
  bj::value back = row("fx");
  EXPECT_EQ(back.at("status"), "online");
  EXPECT_EQ(back.at("generation"), 2);
  EXPECT_EQ(processes_with_marker(marker_).size(), 1u);
}

TEST_F(IdleShutdown, TheDefaultIdleTimeoutLeavesAnAutoStartServerRunning) {
  // Both take the gateway-wide default; "auto" is started first, yet only "lazy" is stopped.
  start(R"({"mcpServers":{"auto":)" + idle_entry(other_marker_) + R"(,"lazy":)" +
        idle_entry(marker_) + R"(},"autoStart":["auto"],"sluice":{"idleTimeoutMs":1000}})");
  EXPECT_EQ(echo("auto", "up"), "up");
  EXPECT_EQ(echo("lazy", "up"), "up");
  EXPECT_TRUE(row("auto").at("idle_timeout_ms").is_null());
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "the lazy server was not stopped";
  EXPECT_EQ(row("lazy").at("status"), "idle_stopped");
  EXPECT_EQ(row("auto").at("status"), "online");
  EXPECT_EQ(processes_with_marker(other_marker_).size(), 1u);
}

TEST_F(IdleShutdown, AServerWithASubscribedClientIsNotIdleStoppedUntilItUnsubscribes) {
  // "fx" is the clock: each time it is idle-stopped, a whole idle timeout has passed.
  bj::object conf{{"command", CONFORMANCE_SERVER},
                  {"env", bj::object{{"SLUICE_FIXTURE_MARKER", other_marker_}}},
                  {"idleTimeoutMs", 1000}};
  start(R"({"mcpServers":{"conf":)" + bj::serialize(conf) + R"(,"fx":)" +
            idle_entry(marker_, {{"idleTimeoutMs", 1000}}) + "}}",
        {"--expose", "meta,all"});
  auto sub = sluice_->request("resources/subscribe", R"({"uri":"test://watched-resource"})");
  ASSERT_TRUE(sub.as_object().contains("result")) << bj::serialize(sub);
  EXPECT_EQ(echo("fx", "tick"), "tick");
  ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  EXPECT_EQ(echo("fx", "tock"), "tock");  // a second generation, idle for another timeout
  ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  EXPECT_EQ(row("conf").at("status"), "online") << "stopped while a client is subscribed";
  EXPECT_EQ(processes_with_marker(other_marker_).size(), 1u);

  auto unsub = sluice_->request("resources/unsubscribe", R"({"uri":"test://watched-resource"})");
  ASSERT_TRUE(unsub.as_object().contains("result")) << bj::serialize(unsub);
  EXPECT_TRUE(wait_no_marker(other_marker_, kGuard).empty()) << "not stopped once unsubscribed";
  EXPECT_EQ(row("conf").at("status"), "idle_stopped");
}

TEST_F(IdleShutdown, AServerRunningAClientsTaskIsNotIdleStoppedUntilTheTaskEnds) {
  // The conformance fixture in its 2026 form runs the task; "fx" is the clock again.
  bj::object conf{{"command", CONFORMANCE_SERVER},
                  {"args", bj::array{"--era", "2026-07-28"}},
                  {"env", bj::object{{"SLUICE_FIXTURE_MARKER", other_marker_}}},
                  {"idleTimeoutMs", 1000}};
  start(R"({"mcpServers":{"conf":)" + bj::serialize(conf) + R"(,"fx":)" +
            idle_entry(marker_, {{"idleTimeoutMs", 1000}}) + "}}",
        {"--expose", "meta,all"});
  // A 2026-07-28 caller over stdio that declares the tasks extension.
  const std::string meta =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})";
  auto created = sluice_->request(
      "tools/call", R"({"name":"conf__slow_compute","arguments":{"seconds":60},)" + meta + "}");
  ASSERT_EQ(created.at("result").at("resultType"), "task") << bj::serialize(created);
  std::string id(created.at("result").at("taskId").as_string());
  EXPECT_EQ(echo("fx", "tick"), "tick");
  ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  EXPECT_EQ(echo("fx", "tock"), "tock");
  ASSERT_TRUE(wait_no_marker(marker_, kGuard).empty());
  EXPECT_EQ(row("conf").at("status"), "online") << "stopped while a client's task runs on it";
  auto got = sluice_->request("tasks/get", R"({"taskId":")" + id + R"(",)" + meta + "}");
  EXPECT_EQ(got.at("result").at("status"), "working") << bj::serialize(got);

  auto cancelled = sluice_->request("tasks/cancel", R"({"taskId":")" + id + R"(",)" + meta + "}");
  ASSERT_TRUE(cancelled.as_object().contains("result")) << bj::serialize(cancelled);
  EXPECT_TRUE(wait_no_marker(other_marker_, kGuard).empty()) << "not stopped once the task ended";
}

}  // namespace
}  // namespace sluice::test
