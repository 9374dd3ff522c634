// The call object (invariants C2-C4), in simulated time: a cancelled call keeps its permit
// until the downstream answers; an abandoned call expires after the abandon bound and then
// keeps its permit until the answer or the close (stdio) or releases it (remote); every call
// ends with exactly one outcome, and no counter goes below zero.
#include "gateway/calls/call.hpp"

#include "core/clock.hpp"
#include "mcp/session.hpp"
#include "../run_until.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::gateway {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

class RecordingOutbox : public mcp::Outbox {
 public:
  void send(std::string frame) override { frames.push_back(std::move(frame)); }
  std::vector<std::string> frames;
};

using ReplySlot = std::shared_ptr<std::optional<mcp::Reply>>;

std::uint64_t outcomes(const OutcomeCounters& c) {
  return c.completed + c.errored + c.transport_lost + c.expired;
}

class CallLifetimeTest : public ::testing::Test {
 protected:
  CallLifetimeTest() {
    downstream_ = mcp::Session::create(io_, mcp::SessionOptions{"fx", rpc::Strictness::peer, nullptr});
    downstream_->attach(&outbox_, nullptr);
  }
  ~CallLifetimeTest() override {
    downstream_->on_closed();
    run_until([&] { return ledger_.empty(); });
    downstream_->detach();
  }

  template <class Pred>
  bool run_until(Pred done) {
    return test::run_until(io_, done);
  }

  Call open_call() {
    CallRecord record;
    record.server = "fx";
    record.tool_id = "fx::slow";
    record.client = "test";
    record.timeout = 10s;
    return Call(ledger_, audit_, admission_, std::move(record), [] { return std::uint64_t{7}; });
  }

  // Admits `call` (its one budget has room) and sends its downstream request; the slot
  // holds what the session returns.
  ReplySlot admit_and_send(Call& call, std::uint64_t* id) {
    auto granted = std::make_shared<std::optional<Budget::Outcome>>();
    asio::co_spawn(io_, admission_.budget.acquire(5s, &call.work_cancel(), call.permit()),
                   [granted](std::exception_ptr, Budget::Outcome o) { *granted = o; });
    EXPECT_TRUE(run_until([&] { return granted->has_value(); }));
    EXPECT_EQ(**granted, Budget::Outcome::granted);
    call.admitted();
    auto slot = std::make_shared<std::optional<mcp::Reply>>();
    const std::size_t sent = outbox_.frames.size();
    asio::co_spawn(io_,
                   downstream_->request("tools/call", "{}", 1h, &call.work_cancel(), id, &tracking_),
                   [slot](std::exception_ptr e, mcp::Reply reply) {
                     if (!e) *slot = std::move(reply);
                   });
    EXPECT_TRUE(run_until([&] { return outbox_.frames.size() > sent; }));
    return slot;
  }

  void answer(std::uint64_t id) {
    downstream_->on_frame(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":{}})");
  }

  std::string last_audit_outcome() const {
    auto events = audit_.to_json(1);
    return events.empty() ? "" : std::string(events.at(0).at("outcome").as_string());
  }

  asio::io_context io_;
  RecordingOutbox outbox_;
  std::shared_ptr<mcp::Session> downstream_;
  CallLedger ledger_{io_};
  AuditRing audit_{16};
  ToolAdmission admission_{io_, 1, 8};
  mcp::CallTracking tracking_;
};

TEST_F(CallLifetimeTest, ACancelledCallKeepsItsPermitUntilTheDownstreamAnswers) {
  core::SimulatedTime sim;
  std::uint64_t id = 0;
  Call call = open_call();
  ReplySlot reply = admit_and_send(call, &id);
  call.work_cancel().cancel();
  ASSERT_TRUE(run_until([&] { return reply->has_value(); }));
  ASSERT_NE((*reply)->late, nullptr);
  call.abandon();
  asio::co_spawn(io_, Call::follow(std::move(call), std::move((*reply)->late), AbandonPolicy{}),
                 asio::detached);
  ASSERT_TRUE(run_until([&] { return admission_.counters.abandoned_in_flight == 1; }));
  EXPECT_EQ(admission_.budget.held(), 1u) << "the slot belongs to the work, not the caller";
  EXPECT_EQ(admission_.counters.in_flight, 1u);
  ASSERT_EQ(ledger_.size(), 1u);
  EXPECT_EQ(ledger_.records().front().state, CallRecord::State::abandoned);
  sim.advance(119s);  // within the abandon bound (120 s)
  io_.restart();
  io_.run_for(5ms);
  EXPECT_EQ(admission_.budget.held(), 1u);
  EXPECT_EQ(admission_.counters.expired, 0u);

  answer(id);
  ASSERT_TRUE(run_until([&] { return ledger_.empty(); }));
  EXPECT_EQ(admission_.budget.held(), 0u);
  EXPECT_EQ(admission_.counters.completed, 1u);
  EXPECT_EQ(admission_.counters.abandoned_in_flight, 0u);
  EXPECT_EQ(admission_.counters.in_flight, 0u);
  EXPECT_EQ(outcomes(admission_.counters), 1u);
  EXPECT_EQ(last_audit_outcome(), "completed");
}

TEST_F(CallLifetimeTest, AnAbandonedCallExpiresAfterTheBoundAndKeepsItsPermitUntilTheClose) {
  core::SimulatedTime sim;
  std::uint64_t id = 0;
  Call call = open_call();
  ReplySlot reply = admit_and_send(call, &id);
  call.work_cancel().cancel();
  ASSERT_TRUE(run_until([&] { return reply->has_value(); }));
  call.abandon();
  asio::co_spawn(io_,
                 Call::follow(std::move(call), std::move((*reply)->late),
                              AbandonPolicy{std::chrono::seconds(30), true}),
                 asio::detached);
  io_.restart();
  io_.run_for(5ms);
  EXPECT_EQ(admission_.counters.expired, 0u);
  sim.advance(30s);
  ASSERT_TRUE(run_until([&] { return admission_.counters.expired == 1; }));
  EXPECT_EQ(admission_.counters.expired_holding_permit, 1u);
  EXPECT_EQ(admission_.budget.held(), 1u) << "stdio: the slot stays until the answer or the exit";
  EXPECT_EQ(ledger_.size(), 1u);
  EXPECT_EQ(downstream_->pending_outgoing(), 1u);

  downstream_->on_closed();
  ASSERT_TRUE(run_until([&] { return ledger_.empty(); }));
  EXPECT_EQ(admission_.budget.held(), 0u);
  EXPECT_EQ(admission_.counters.expired, 1u);
  EXPECT_EQ(admission_.counters.transport_lost, 0u) << "exactly one outcome per call";
  EXPECT_EQ(outcomes(admission_.counters), 1u);
  EXPECT_EQ(admission_.counters.abandoned_in_flight, 0u);
  EXPECT_EQ(admission_.counters.in_flight, 0u);
  EXPECT_EQ(last_audit_outcome(), "expired");
}

TEST_F(CallLifetimeTest, WithoutHoldingAnExpiredCallReleasesItsPermitAtTheBound) {
  core::SimulatedTime sim;
  std::uint64_t id = 0;
  Call call = open_call();
  ReplySlot reply = admit_and_send(call, &id);
  call.work_cancel().cancel();
  ASSERT_TRUE(run_until([&] { return reply->has_value(); }));
  call.abandon();
  asio::co_spawn(io_,
                 Call::follow(std::move(call), std::move((*reply)->late),
                              AbandonPolicy{std::chrono::seconds(20), false}),
                 asio::detached);
  sim.advance(20s);
  ASSERT_TRUE(run_until([&] { return ledger_.empty(); }));
  EXPECT_EQ(admission_.counters.expired, 1u);
  EXPECT_EQ(admission_.counters.expired_holding_permit, 0u);
  EXPECT_EQ(admission_.budget.held(), 0u);
  EXPECT_EQ(downstream_->pending_outgoing(), 0u) << "the request's id is forgotten";
  answer(id);
  EXPECT_EQ(downstream_->counters().unmatched_responses, 1u);
  EXPECT_EQ(outcomes(admission_.counters), 1u);
}

TEST_F(CallLifetimeTest, EveryCallEndsWithExactlyOneOutcomeAndNoCounterGoesNegative) {
  core::SimulatedTime sim;
  const auto over_releases_before = Budget::over_releases();
  // Answered, errored, refused, dropped while open: four calls, one outcome each.
  {
    std::uint64_t id = 0;
    Call call = open_call();
    ReplySlot reply = admit_and_send(call, &id);
    answer(id);
    ASSERT_TRUE(run_until([&] { return reply->has_value(); }));
    call.end(Call::outcome_of((*reply)->status));
    call.end(Call::Outcome::transport_lost);  // a second end changes nothing
  }
  {
    std::uint64_t id = 0;
    Call call = open_call();
    ReplySlot reply = admit_and_send(call, &id);
    downstream_->on_frame(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                          R"(,"error":{"code":-1,"message":"no"}})");
    ASSERT_TRUE(run_until([&] { return reply->has_value(); }));
    call.end(Call::outcome_of((*reply)->status));
  }
  {
    Call call = open_call();
    call.refused(Call::Outcome::rejected_overflow);
  }
  {
    Call call = open_call();
    call.admitted();
    Call moved(std::move(call));
  }  // destroyed open: ended once, as transport_lost, by its last owner only
  const OutcomeCounters& c = admission_.counters;
  EXPECT_EQ(c.completed, 1u);
  EXPECT_EQ(c.errored, 1u);
  EXPECT_EQ(c.transport_lost, 1u);
  EXPECT_EQ(c.rejected_overflow, 1u);
  EXPECT_EQ(c.expired, 0u);
  EXPECT_EQ(c.in_flight, 0u);
  EXPECT_EQ(c.abandoned_in_flight, 0u);
  EXPECT_EQ(admission_.budget.held(), 0u);
  EXPECT_TRUE(ledger_.empty());
  EXPECT_EQ(Budget::over_releases(), over_releases_before);
}

TEST_F(CallLifetimeTest, TheLedgerShowsACallFromAdmissionToItsEnd) {
  Call call = open_call();
  ASSERT_EQ(ledger_.size(), 1u);
  const CallRecord& record = ledger_.records().front();
  EXPECT_EQ(record.request_id, "fx::1");
  EXPECT_EQ(record.state, CallRecord::State::queued);
  EXPECT_EQ(ledger_.find("fx::1"), &call.record());
  call.admitted();
  EXPECT_EQ(record.state, CallRecord::State::running);
  auto listed = ledger_.list(std::nullopt);
  EXPECT_EQ(listed.at("count").as_uint64(), 1u);
  EXPECT_EQ(listed.at("calls").at(0).at("state").as_string(), "running");
  call.end(Call::Outcome::completed);
  EXPECT_TRUE(ledger_.empty());
  EXPECT_EQ(ledger_.find("fx::1"), nullptr);
}

TEST_F(CallLifetimeTest, AnOperatorCancelOfAQueuedCallLeavesTheQueue) {
  Call holder = open_call();
  std::uint64_t id = 0;
  ReplySlot reply = admit_and_send(holder, &id);
  Call queued = open_call();
  auto outcome = std::make_shared<std::optional<Budget::Outcome>>();
  asio::co_spawn(io_, admission_.budget.acquire(5s, &queued.work_cancel(), queued.permit()),
                 [outcome](std::exception_ptr, Budget::Outcome o) { *outcome = o; });
  io_.restart();
  io_.poll();
  EXPECT_EQ(admission_.budget.queued(), 1u);
  EXPECT_EQ(ledger_.cancel_all("fx"), 2u);
  ASSERT_TRUE(run_until([&] { return outcome->has_value() && reply->has_value(); }));
  EXPECT_EQ(**outcome, Budget::Outcome::cancelled);
  EXPECT_TRUE(queued.record().cancelled_by_operator);
  queued.refused(Call::Outcome::cancelled_while_queued);
  EXPECT_EQ(admission_.counters.cancelled_while_queued, 1u);
  EXPECT_TRUE(queued.permit().empty());
  (*reply)->late.reset();
  holder.end(Call::Outcome::transport_lost);
}

}  // namespace
}  // namespace sluice::gateway
