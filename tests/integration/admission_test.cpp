// invariants §2 (A1-A3) and §3 (C1-C7) through real stdio framing: the sluice
// binary and the fixture's `gate` tool, which blocks until a file appears, then writes a
// marker and answers.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

class Admission : public ::testing::Test {
 protected:
  // gate has a budget of `gate_budget`; `policy` is the top-level "sluice" object.
  void start(int gate_budget, const std::string& policy = "{}") {
    std::string fx = fixture_entry(marker_);
    fx.pop_back();  // add the server's own "sluice" block to its entry
    fx += R"(,"sluice":{"tools":{"gate":)" + std::to_string(gate_budget) + "}}}";
    auto cfg = dir_.write("cfg/.mcp.json",
                          R"({"mcpServers":{"fx":)" + fx + R"(},"sluice":)" + policy + "}");
    sluice_ = std::make_unique<Sluice>(
        // debug: the fixture's stderr (which says what cancels it received) is logged there.
        std::vector<std::string>{"serve", "--log-stderr", "--no-discover", "--config", cfg.string(),
                                 "--log-level", "debug"},
        dir_.path(), dir_.path());
    sluice_->initialize();
    auto c = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
    ASSERT_FALSE(is_error(c)) << text_of(c);
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  // Sends a gate call with JSON-RPC id `id` (a string) without waiting for its answer.
  void send_gate(const std::string& id, const std::string& name) {
    sluice_->send(R"({"jsonrpc":"2.0","id":")" + id +
                  R"(","method":"tools/call","params":{"name":"gateway.invoke","arguments":)"
                  R"({"tool_id":"fx::gate","arguments":{"path":")" +
                  (dir_.path() / (name + ".open")).string() + R"(","marker":")" +
                  (dir_.path() / (name + ".done")).string() + R"(","started":")" +
                  (dir_.path() / (name + ".started")).string() + R"("}}}})");
  }
  void cancel(const std::string& id) {
    sluice_->send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":")" +
                  id + R"("}})");
  }
  void open_gate(const std::string& name) { std::ofstream(dir_.path() / (name + ".open")) << ""; }
  fs::path file(const std::string& name) const { return dir_.path() / name; }
  bj::value gate_row() {
    auto servers = sluice_->call_tool("gateway.health", "{}").at("structuredContent").at("servers");
    for (const auto& t : servers.at(0).at("tools").as_array()) {
      if (t.at("tool") == "gate") return t;
    }
    return bj::object();
  }
  template <class Pred>
  bj::value wait_gate_row(Pred pred) {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    for (;;) {
      bj::value row = gate_row();
      if ((row.as_object().contains("tool") && pred(row)) ||
          std::chrono::steady_clock::now() > deadline) {
        return row;
      }
    }
  }
  // Every line sluice wrote so far that carries JSON-RPC id `id`.
  bool answered(const std::string& id) {
    for (const auto& n : sluice_->notifications()) {
      if (n.find(R"("id":")" + id + "\"") != std::string::npos) return true;
    }
    return false;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(Admission, ACancelledCallKeepsItsPermitUntilTheDownstreamAnswers) {
  start(2);
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  auto row = gate_row();
  EXPECT_EQ(row.at("budget"), 2);
  EXPECT_EQ(row.at("permits_held"), 1);
  cancel("g1");
  row = wait_gate_row([](const bj::value& r) { return r.at("abandoned_in_flight") == 1; });
  EXPECT_EQ(row.at("abandoned_in_flight"), 1);
  EXPECT_EQ(row.at("permits_held"), 1) << "the slot stays with the work (C2)";
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done")));
  row = wait_gate_row([](const bj::value& r) { return r.at("permits_held") == 0; });
  EXPECT_EQ(row.at("permits_held"), 0);
  EXPECT_EQ(row.at("completed"), 1);
  EXPECT_EQ(row.at("abandoned_in_flight"), 0);
  auto echo = sluice_->call_tool("gateway.invoke",
                                 R"({"tool_id":"fx::echo","arguments":{"text":"next"}})");
  EXPECT_EQ(text_of(echo), "next");
  EXPECT_FALSE(answered("g1")) << "nothing is sent for a cancelled id (C4)";
  // C1: the downstream got notifications/cancelled with its own (numeric) id, not "g1".
  sluice_->close_stdin();
  EXPECT_EQ(sluice_->wait_exit(), 0);
  sluice_->join_stderr();
  std::string err = sluice_->stderr_text();
  auto at = err.find(R"(fixture received notifications/cancelled {"requestId":)");
  ASSERT_NE(at, std::string::npos) << "the cancel never reached the downstream";
  char first = err[at + std::string(R"(fixture received notifications/cancelled {"requestId":)").size()];
  EXPECT_TRUE(first >= '1' && first <= '9') << "forwarded with the client's id";
  sluice_.reset();
}

TEST_F(Admission, EachCallGivesBackExactlyItsOwnPermit) {
  start(2);
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  // The fixture serves one call at a time: the second waits in its stdin, holding a slot.
  send_gate("g2", "b");
  auto row = wait_gate_row([](const bj::value& r) { return r.at("permits_held") == 2; });
  EXPECT_EQ(row.at("permits_held"), 2);
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done")));
  row = wait_gate_row([](const bj::value& r) { return r.at("completed") == 1; });
  EXPECT_EQ(row.at("permits_held"), 1) << "g2 still holds its own slot";
  open_gate("b");
  ASSERT_TRUE(wait_file(file("b.done")));
  row = wait_gate_row([](const bj::value& r) { return r.at("completed") == 2; });
  EXPECT_EQ(row.at("permits_held"), 0);
  EXPECT_EQ(row.at("in_flight"), 0);
}

TEST_F(Admission, ACallCancelledWhileQueuedTakesNoPermitAndIsNeverSent) {
  start(1);
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  send_gate("g2", "b");
  auto pending = sluice_->call_tool("gateway.list_pending", "{}").at("structuredContent");
  ASSERT_EQ(pending.at("count"), 2);
  EXPECT_EQ(pending.at("calls").at(1).at("state"), "queued");
  cancel("g2");
  auto row = wait_gate_row([](const bj::value& r) { return r.at("cancelled_while_queued") == 1; });
  EXPECT_EQ(row.at("cancelled_while_queued"), 1);
  EXPECT_EQ(row.at("queued"), 0);
  open_gate("a");
  open_gate("b");
  ASSERT_TRUE(wait_file(file("a.done")));
  row = wait_gate_row([](const bj::value& r) { return r.at("permits_held") == 0; });
  EXPECT_EQ(row.at("completed"), 1);
  EXPECT_FALSE(fs::exists(file("b.started"))) << "a call cancelled while queued is never sent";
  EXPECT_FALSE(answered("g2"));
}

TEST_F(Admission, AFullQueueIsRefusedWithRetryLater) {
  start(1, R"({"queueSize":0})");
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  auto r = sluice_->call_tool("gateway.invoke",
                              R"({"tool_id":"fx::gate","arguments":{"path":"/nonexistent",)"
                              R"("marker":"/nonexistent"}})");
  EXPECT_TRUE(is_error(r));
  EXPECT_FALSE(r.as_object().contains("structuredContent"));
  std::string t = text_of(r);
  for (const char* part : {"server fx", "tool gate", "budget of 1", "retry later"}) {
    EXPECT_NE(t.find(part), std::string::npos) << part << ": " << t;
  }
  EXPECT_EQ(gate_row().at("rejected_overflow"), 1);
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done")));
}

TEST_F(Admission, AQueuedCallThatWaitsTooLongIsRefused) {
  start(1, R"({"queueTimeoutMs":200})");
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  auto r = sluice_->call_tool("gateway.invoke",
                              R"({"tool_id":"fx::gate","arguments":{"path":"/nonexistent",)"
                              R"("marker":"/nonexistent"}})");
  EXPECT_TRUE(is_error(r));
  EXPECT_NE(text_of(r).find("retry later"), std::string::npos) << text_of(r);
  EXPECT_EQ(gate_row().at("rejected_queue_timeout"), 1);
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done")));
}

TEST_F(Admission, PastTheAbandonBoundAStdioChildKeepsThePermitUntilItAnswers) {
  start(2, R"({"abandonMs":1000})");
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  cancel("g1");
  auto row = wait_gate_row([](const bj::value& r) { return r.at("expired_holding_permit") == 1; });
  EXPECT_EQ(row.at("expired_holding_permit"), 1);
  EXPECT_EQ(row.at("expired"), 1);
  EXPECT_EQ(row.at("permits_held"), 1);
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done")));
  row = wait_gate_row([](const bj::value& r) { return r.at("permits_held") == 0; });
  EXPECT_EQ(row.at("expired"), 1);
  EXPECT_EQ(row.at("completed"), 0) << "exactly one outcome per call (C3)";
  EXPECT_EQ(row.at("abandoned_in_flight"), 0);
}

TEST_F(Admission, AServerThatDiesWithAbandonedWorkEndsItAsTransportLost) {
  start(2);
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  cancel("g1");
  wait_gate_row([](const bj::value& r) { return r.at("abandoned_in_flight") == 1; });
  auto server = sluice_->call_tool("gateway.health", "{}").at("structuredContent").at("servers");
  ASSERT_EQ(::kill(static_cast<pid_t>(server.at(0).at("pid").as_int64()), SIGKILL), 0);
  auto row = wait_gate_row([](const bj::value& r) { return r.at("permits_held") == 0; });
  EXPECT_EQ(row.at("transport_lost"), 1);
  EXPECT_EQ(row.at("abandoned_in_flight"), 0);
  EXPECT_EQ(row.at("in_flight"), 0);
}

TEST_F(Admission, GatewayCancelRefusesAHealthyCallUnlessForced) {
  start(2);
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  auto pending = sluice_->call_tool("gateway.list_pending", R"({"server":"fx"})");
  auto calls = pending.at("structuredContent").at("calls");
  ASSERT_EQ(calls.as_array().size(), 1u);
  EXPECT_EQ(calls.at(0).at("state"), "running");
  EXPECT_EQ(calls.at(0).at("tool_id"), "fx::gate");
  EXPECT_EQ(calls.at(0).at("client"), "stdio");
  std::string id(calls.at(0).at("request_id").as_string());
  auto refused = sluice_->call_tool("gateway.cancel", R"({"request_id":")" + id + R"("})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_NE(text_of(refused).find("force"), std::string::npos);
  auto done = sluice_->call_tool("gateway.cancel",
                                 R"({"request_id":")" + id + R"(","force":true})");
  EXPECT_FALSE(is_error(done)) << text_of(done);
  // The original caller is told, with an error, instead of waiting forever.
  std::optional<std::string> line;
  for (;;) {
    line = sluice_->read_line();
    ASSERT_TRUE(line.has_value());
    if (line->find(R"("id":"g1")") != std::string::npos) break;
  }
  EXPECT_NE(line->find("cancelled by an operator"), std::string::npos) << *line;
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done")));
  wait_gate_row([](const bj::value& r) { return r.at("permits_held") == 0; });
}

TEST_F(Admission, ClosingStdinLetsAbandonedWorkFinishWithinTheDrainBound) {
  start(2, R"({"drainMs":20000})");
  send_gate("g1", "a");
  ASSERT_TRUE(wait_file(file("a.started")));
  sluice_->close_stdin();
  // Still draining: the child is not signalled while the bound lasts, so it can finish.
  EXPECT_FALSE(sluice_->wait_exit(300ms).has_value());
  open_gate("a");
  ASSERT_TRUE(wait_file(file("a.done"))) << "the child finished its work: it was not killed";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(sluice_->wait_exit(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "exits once the work is done";
  sluice_.reset();
}

}  // namespace
}  // namespace sluice::test
