// The tasks sluice brokers: each bound to its caller under an id of sluice's own, kept for the
// server's ttlMs (at most a day), and a full table makes room only by forgetting ended tasks. In
// simulated time.
#include "gateway/calls/task_table.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice::gateway {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

BrokeredTask made(std::string server, std::string caller, std::string status = "working") {
  BrokeredTask t;
  t.server = std::move(server);
  t.server_task = "server-1";
  t.tool_id = t.server + "::slow";
  t.caller = std::move(caller);
  t.client = "http 127.0.0.1";
  t.status = std::move(status);
  return t;
}

// Ids 1, 2, 3... instead of random ones.
TaskTable::MakeId counting() {
  return [n = 0]() mutable { return "task-" + std::to_string(++n); };
}

TEST(TaskTable, ATaskIsFoundOnlyByTheCallerItIsBoundTo) {
  TaskTable table(8, counting());
  auto id = table.add(made("a", "stateless alice"), milliseconds(60000));
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, "task-1");
  ASSERT_NE(table.find(*id, "stateless alice"), nullptr);
  EXPECT_EQ(table.find(*id, "stateless alice")->server_task, "server-1");
  EXPECT_EQ(table.find(*id, "stateless bob"), nullptr) << "another caller's task is unknown";
  EXPECT_NE(table.find(*id), nullptr) << "the operator sees every task";
  EXPECT_EQ(table.find("task-9", "stateless alice"), nullptr);
}

TEST(TaskTable, ATaskIsKeptForItsServersTtlAndAtMostADay) {
  core::SimulatedTime sim;
  TaskTable table(8, counting());
  auto short_lived = *table.add(made("a", "c"), milliseconds(1000));
  auto unbounded = *table.add(made("a", "c"), std::nullopt);
  auto too_long = *table.add(made("a", "c"), hours(1000));
  sim.advance(milliseconds(999));
  EXPECT_NE(table.find(short_lived, "c"), nullptr) << "not before its ttlMs";
  sim.advance(milliseconds(1));
  EXPECT_EQ(table.find(short_lived, "c"), nullptr) << "forgotten at its ttlMs";
  sim.advance(TaskTable::kLongestKept - milliseconds(1001));
  EXPECT_NE(table.find(unbounded, "c"), nullptr);
  EXPECT_NE(table.find(too_long, "c"), nullptr);
  sim.advance(milliseconds(1));
  EXPECT_EQ(table.find(unbounded, "c"), nullptr) << "no ttlMs: a day";
  EXPECT_EQ(table.find(too_long, "c"), nullptr) << "a longer ttlMs: a day";
}

TEST(TaskTable, AFullTableForgetsTheOldestEndedTaskAndRefusesWhenAllAreLive) {
  core::SimulatedTime sim;
  TaskTable table(2, counting());
  auto ended = *table.add(made("a", "c", "completed"), std::nullopt);
  sim.advance(milliseconds(1));
  auto live = *table.add(made("a", "c"), std::nullopt);
  auto third = table.add(made("a", "c"), std::nullopt);
  ASSERT_TRUE(third) << "an ended task makes room";
  EXPECT_EQ(table.find(ended), nullptr);
  EXPECT_NE(table.find(live), nullptr);
  EXPECT_FALSE(table.add(made("a", "c"), std::nullopt)) << "every held task is live";
  EXPECT_EQ(table.size(), 2u);
}

TEST(TaskTable, AServerWithALiveTaskIsHeldAndTheListShowsItsTasks) {
  core::SimulatedTime sim;
  TaskTable table(8, counting());
  auto id = *table.add(made("a", "c"), milliseconds(5000));
  table.add(made("b", "c", "cancelled"), milliseconds(5000));
  EXPECT_TRUE(table.live_on("a"));
  EXPECT_FALSE(table.live_on("b")) << "an ended task holds nothing";
  sim.advance(milliseconds(20));
  auto rows = table.list(std::string_view("a"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("task_id"), "task-1");
  EXPECT_EQ(rows[0].at("tool_id"), "a::slow");
  EXPECT_EQ(rows[0].at("status"), "working");
  EXPECT_EQ(rows[0].at("age_ms"), 20);
  EXPECT_EQ(table.list(std::nullopt).size(), 2u);
  table.find(id)->status = "completed";
  EXPECT_FALSE(table.live_on("a"));
  sim.advance(milliseconds(5000));
  EXPECT_TRUE(table.list(std::nullopt).empty()) << "expired tasks are not listed";
}

TEST(TaskTable, TheDefaultIdsAreRandomAndUnguessable) {
  TaskTable table;
  auto a = *table.add(made("a", "c"), std::nullopt);
  auto b = *table.add(made("a", "c"), std::nullopt);
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.starts_with("task-"));
  EXPECT_GE(a.size(), 5u + 22u) << "128 random bits, base64url";
}

}  // namespace
}  // namespace sluice::gateway
