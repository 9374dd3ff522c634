// Budget and Permit (invariants A2-A3, C3), in simulated time where waiting matters: waiters
// are served in FIFO order and leave the queue at its timeout or at a cancel; a slot is given
// back exactly once, by the Permit that holds it (at its destruction at the latest); a release of a slot that is not held cannot be written, and if the
// Budget is driven into one anyway it asserts (debug, sanitizer builds) or counts it
// (release builds) without letting available slots exceed the budget.
#include "gateway/calls/admission.hpp"

#include "core/clock.hpp"
#include "../run_until.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <type_traits>

namespace sluice::gateway {

// Reaches the private release() the way a bug inside admission would.
struct BudgetTestAccess {
  static void release(Budget& budget) { budget.release(); }
};

namespace {
using namespace std::chrono_literals;

// Only a Permit can give a slot back, and only acquire() (or try_acquire()) can put one in it.
template <class B>
concept CanReleaseDirectly = requires(B& b) { b.release(); };
template <class P>
concept CanAddASlot = requires(P& p, Budget& b) { p.add(b); };
static_assert(!CanReleaseDirectly<Budget>);
static_assert(!CanAddASlot<Permit>);
static_assert(!std::is_copy_constructible_v<Permit>);
static_assert(!std::is_copy_assignable_v<Permit>);
static_assert(std::is_nothrow_move_constructible_v<Permit>);
static_assert(std::is_nothrow_move_assignable_v<Permit>);

class AdmissionTest : public ::testing::Test {
 protected:
  // Acquires one slot of `budget` into `permit`; the outcome once the loop settles.
  std::shared_ptr<std::optional<Budget::Outcome>> acquire(Budget& budget, Permit& permit,
                                                          std::chrono::milliseconds wait = 5s) {
    auto outcome = std::make_shared<std::optional<Budget::Outcome>>();
    boost::asio::co_spawn(io_, budget.acquire(wait, nullptr, permit),
                          [outcome](std::exception_ptr e, Budget::Outcome o) {
                            if (!e) *outcome = o;
                          });
    settle();
    return outcome;
  }
  void settle() {
    io_.restart();
    io_.poll();
  }
  void run_for(std::chrono::milliseconds d) {
    io_.restart();
    io_.run_for(d);
  }
  template <class Pred>
  bool run_until(Pred done) {
    return test::run_until(io_, done);
  }
  boost::asio::io_context io_;
};

TEST_F(AdmissionTest, AGrantedSlotLivesInThePermitAndIsGivenBackOnce) {
  Budget budget(io_, 2, 8);
  Permit a, b;
  ASSERT_EQ(*acquire(budget, a), Budget::Outcome::granted);
  ASSERT_EQ(*acquire(budget, b), Budget::Outcome::granted);
  EXPECT_EQ(a.slots(), 1u);
  EXPECT_EQ(budget.held(), 2u);
  const auto before = Budget::over_releases();
  a.release();
  a.release();  // nothing left to give: b's slot stays held
  EXPECT_EQ(budget.held(), 1u);
  EXPECT_EQ(budget.available(), 1u);
  EXPECT_EQ(Budget::over_releases(), before);
}

TEST_F(AdmissionTest, AMovedPermitTakesItsSlotAlongAndTheMovedFromOneHoldsNothing) {
  Budget budget(io_, 1, 8);
  const auto before = Budget::over_releases();
  {
    Permit moved;
    {
      Permit original;
      ASSERT_EQ(*acquire(budget, original), Budget::Outcome::granted);
      moved = std::move(original);
      EXPECT_TRUE(original.empty());  // NOLINT(bugprone-use-after-move): the contract
    }
    EXPECT_EQ(budget.held(), 1u) << "destroying the moved-from permit released nothing";
    Permit again(std::move(moved));
    EXPECT_EQ(budget.held(), 1u);
  }
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_EQ(Budget::over_releases(), before);
}

TEST_F(AdmissionTest, AReleasedSlotPassesToTheFirstWaiterInsideItsPermit) {
  Budget budget(io_, 1, 8);
  Permit first, second;
  ASSERT_EQ(*acquire(budget, first), Budget::Outcome::granted);
  auto waiting = acquire(budget, second);
  EXPECT_FALSE(waiting->has_value());
  EXPECT_EQ(budget.queued(), 1u);
  first.release();
  settle();
  ASSERT_TRUE(waiting->has_value());
  EXPECT_EQ(**waiting, Budget::Outcome::granted);
  EXPECT_EQ(second.slots(), 1u);
  EXPECT_EQ(budget.held(), 1u);
  second.release();
  EXPECT_EQ(budget.held(), 0u);
}

TEST_F(AdmissionTest, ARefusedAcquireLeavesThePermitEmpty) {
  Budget budget(io_, 1, 0);  // no queue
  Permit holder, refused;
  ASSERT_EQ(*acquire(budget, holder), Budget::Outcome::granted);
  EXPECT_EQ(*acquire(budget, refused), Budget::Outcome::overflow);
  EXPECT_TRUE(refused.empty());
  refused.release();
  EXPECT_EQ(budget.held(), 1u);
}

// try_acquire answers what acquire would answer at once, and nothing that would need a wait:
// it never queues, and never takes a slot ahead of a queued waiter.
TEST_F(AdmissionTest, TryAcquireAnswersOnlyWhatNeedsNoWait) {
  Budget budget(io_, 1, 1);
  Permit first, queued, tried;
  EXPECT_EQ(budget.try_acquire(nullptr, first), Budget::Outcome::granted);
  EXPECT_EQ(first.slots(), 1u);
  EXPECT_EQ(budget.held(), 1u);
  // Full, with room in the queue: acquire would wait, so try_acquire leaves it to acquire.
  EXPECT_EQ(budget.try_acquire(nullptr, tried), std::nullopt);
  EXPECT_TRUE(tried.empty());
  EXPECT_EQ(budget.queued(), 0u);
  auto waiting = acquire(budget, queued);
  ASSERT_EQ(budget.queued(), 1u);
  // The queue is full now.
  EXPECT_EQ(budget.try_acquire(nullptr, tried), Budget::Outcome::overflow);
  // The slot given back goes to the waiter, not to a later try.
  first.release();
  EXPECT_EQ(budget.try_acquire(nullptr, tried), std::nullopt);
  settle();
  ASSERT_TRUE(waiting->has_value());
  EXPECT_EQ(**waiting, Budget::Outcome::granted);
  EXPECT_TRUE(tried.empty());
  core::CancelSignal cancel;
  cancel.cancel();
  queued.release();
  EXPECT_EQ(budget.try_acquire(&cancel, tried), Budget::Outcome::cancelled);
  EXPECT_TRUE(tried.empty());
  EXPECT_EQ(budget.held(), 0u);
}

TEST_F(AdmissionTest, WaitersAreGrantedInTheOrderTheyQueued) {
  core::SimulatedTime sim;
  Budget budget(io_, 1, 8);
  Permit holder, first, second, third;
  ASSERT_EQ(*acquire(budget, holder), Budget::Outcome::granted);
  auto w1 = acquire(budget, first);
  auto w2 = acquire(budget, second);
  auto w3 = acquire(budget, third);
  EXPECT_EQ(budget.queued(), 3u);
  holder.release();
  settle();
  EXPECT_EQ(first.slots(), 1u);
  EXPECT_TRUE(second.empty());
  EXPECT_TRUE(third.empty());
  first.release();
  settle();
  EXPECT_EQ(second.slots(), 1u);
  EXPECT_TRUE(third.empty());
  second.release();
  settle();
  EXPECT_EQ(third.slots(), 1u);
  EXPECT_EQ(budget.queued(), 0u);
  EXPECT_EQ(budget.held(), 1u);
}

TEST_F(AdmissionTest, AQueuedCallLeavesTheQueueAtTheQueueTimeoutWithoutASlot) {
  core::SimulatedTime sim;
  Budget budget(io_, 1, 8);
  Permit holder, waiting;
  ASSERT_EQ(*acquire(budget, holder), Budget::Outcome::granted);
  auto outcome = acquire(budget, waiting, 30s);
  sim.advance(29s);
  run_for(5ms);
  EXPECT_FALSE(outcome->has_value()) << "29 s into a 30 s queue timeout";
  sim.advance(1s);
  ASSERT_TRUE(run_until([&] { return outcome->has_value(); }));
  EXPECT_EQ(**outcome, Budget::Outcome::expired);
  EXPECT_TRUE(waiting.empty());
  EXPECT_EQ(budget.queued(), 0u);
  holder.release();
  EXPECT_EQ(budget.held(), 0u) << "the expired waiter took no slot";
}

TEST_F(AdmissionTest, ACancelWhileQueuedLeavesTheQueueWithoutASlot) {
  core::SimulatedTime sim;
  Budget budget(io_, 1, 8);
  Permit holder, waiting;
  ASSERT_EQ(*acquire(budget, holder), Budget::Outcome::granted);
  core::CancelSignal cancel;
  auto outcome = std::make_shared<std::optional<Budget::Outcome>>();
  boost::asio::co_spawn(io_, budget.acquire(30s, &cancel, waiting),
                        [outcome](std::exception_ptr e, Budget::Outcome o) {
                          if (!e) *outcome = o;
                        });
  settle();
  EXPECT_EQ(budget.queued(), 1u);
  cancel.cancel();
  ASSERT_TRUE(run_until([&] { return outcome->has_value(); }));
  EXPECT_EQ(**outcome, Budget::Outcome::cancelled);
  EXPECT_TRUE(waiting.empty());
  EXPECT_EQ(budget.queued(), 0u);
  holder.release();
  EXPECT_EQ(budget.held(), 0u);
}

TEST_F(AdmissionTest, DestroyingAPermitHandsItsSlotToTheNextWaiter) {
  core::SimulatedTime sim;
  Budget budget(io_, 1, 8);
  Permit next;
  std::shared_ptr<std::optional<Budget::Outcome>> waiting;
  {
    Permit holder;
    ASSERT_EQ(*acquire(budget, holder), Budget::Outcome::granted);
    waiting = acquire(budget, next);
    EXPECT_FALSE(waiting->has_value());
  }
  settle();
  ASSERT_TRUE(waiting->has_value());
  EXPECT_EQ(**waiting, Budget::Outcome::granted);
  EXPECT_EQ(next.slots(), 1u);
  EXPECT_EQ(budget.held(), 1u);
}

#ifdef NDEBUG
TEST_F(AdmissionTest, InAReleaseBuildAReleaseOfASlotNotHeldIsCountedAndChangesNothing) {
  Budget budget(io_, 2, 8);
  Permit p;
  ASSERT_EQ(*acquire(budget, p), Budget::Outcome::granted);
  p.release();
  const auto before = Budget::over_releases();
  BudgetTestAccess::release(budget);  // the bug: a second release of the same slot
  EXPECT_EQ(Budget::over_releases(), before + 1);
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_EQ(budget.available(), budget.capacity()) << "never more than the budget";
  // The budget still admits exactly its capacity.
  Permit a, b, c;
  EXPECT_EQ(*acquire(budget, a), Budget::Outcome::granted);
  EXPECT_EQ(*acquire(budget, b), Budget::Outcome::granted);
  EXPECT_FALSE(acquire(budget, c, 10s)->has_value()) << "the third call waits";
  EXPECT_EQ(budget.held(), 2u);
  a.release();
  settle();
  EXPECT_EQ(c.slots(), 1u);
}
#else
TEST_F(AdmissionTest, InADebugBuildAReleaseOfASlotNotHeldAsserts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Budget budget(io_, 2, 8);
  EXPECT_DEATH(BudgetTestAccess::release(budget), "released that was not held");
}
#endif

}  // namespace
}  // namespace sluice::gateway
