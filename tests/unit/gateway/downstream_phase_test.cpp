// The downstream phase machine: every move the table allows, every move it refuses, and the
// names health shows for each phase.
#include "gateway/downstream/phase.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace sluice::gateway {
namespace {

constexpr Phase kAll[] = {Phase::lazy,    Phase::starting,     Phase::online,
                          Phase::restarting, Phase::failed, Phase::offline,
                          Phase::idle_stopped, Phase::disabled, Phase::untrusted};

// Every move between two different phases that a downstream makes, and nothing else.
const std::set<std::pair<Phase, Phase>>& legal_moves() {
  static const std::set<std::pair<Phase, Phase>> moves = {
      {Phase::lazy, Phase::starting},         {Phase::lazy, Phase::failed},
      {Phase::lazy, Phase::offline},          {Phase::lazy, Phase::disabled},
      {Phase::lazy, Phase::untrusted},         {Phase::starting, Phase::online},
      {Phase::starting, Phase::failed},       {Phase::starting, Phase::offline},
      {Phase::online, Phase::restarting},     {Phase::online, Phase::failed},
      {Phase::online, Phase::offline},        {Phase::restarting, Phase::starting},
      {Phase::restarting, Phase::failed},     {Phase::restarting, Phase::offline},
      {Phase::failed, Phase::starting},       {Phase::failed, Phase::restarting},
      {Phase::failed, Phase::offline},        {Phase::offline, Phase::starting},
      {Phase::offline, Phase::failed},        {Phase::online, Phase::idle_stopped},
      {Phase::idle_stopped, Phase::starting}, {Phase::idle_stopped, Phase::offline},
      {Phase::idle_stopped, Phase::failed},
  };
  return moves;
}

// A machine brought to `target` through legal moves only.
PhaseMachine machine_in(Phase target) {
  PhaseMachine m("test");
  std::vector<Phase> path;
  switch (target) {
    case Phase::lazy:
      break;
    case Phase::starting:
      path = {Phase::starting};
      break;
    case Phase::online:
      path = {Phase::starting, Phase::online};
      break;
    case Phase::restarting:
      path = {Phase::starting, Phase::online, Phase::restarting};
      break;
    case Phase::failed:
      path = {Phase::failed};
      break;
    case Phase::offline:
      path = {Phase::offline};
      break;
    case Phase::idle_stopped:
      path = {Phase::starting, Phase::online, Phase::idle_stopped};
      break;
    case Phase::disabled:
      path = {Phase::disabled};
      break;
    case Phase::untrusted:
      path = {Phase::untrusted};
      break;
  }
  for (Phase p : path) EXPECT_TRUE(m.transition(p));
  EXPECT_EQ(m.phase(), target);
  return m;
}

TEST(DownstreamPhase, StartsLazy) { EXPECT_EQ(PhaseMachine("test").phase(), Phase::lazy); }

TEST(DownstreamPhase, TheTableAllowsExactlyTheMovesADownstreamMakes) {
  for (Phase from : kAll) {
    for (Phase to : kAll) {
      bool expected = from == to || legal_moves().count({from, to}) > 0;
      EXPECT_EQ(transition_allowed(from, to), expected)
          << to_string(from) << " -> " << to_string(to);
    }
  }
}

TEST(DownstreamPhase, EveryLegalMoveIsMade) {
  for (const auto& [from, to] : legal_moves()) {
    PhaseMachine m = machine_in(from);
    EXPECT_TRUE(m.transition(to)) << to_string(from) << " -> " << to_string(to);
    EXPECT_EQ(m.phase(), to);
  }
}

TEST(DownstreamPhase, AnIllegalMoveIsRefusedAndThePhaseStays) {
  for (Phase from : kAll) {
    for (Phase to : kAll) {
      if (from == to || legal_moves().count({from, to})) continue;
      PhaseMachine m = machine_in(from);
      EXPECT_FALSE(m.transition(to)) << to_string(from) << " -> " << to_string(to);
      EXPECT_EQ(m.phase(), from);
    }
  }
}

// Untrusted (a project file not approved) is set at construction and final: nothing starts it.
TEST(DownstreamPhase, AnUntrustedServerNeverLeavesItsPhase) {
  for (Phase to : kAll) {
    EXPECT_EQ(transition_allowed(Phase::untrusted, to), to == Phase::untrusted) << to_string(to);
  }
  EXPECT_EQ(to_string(Phase::untrusted), "untrusted");
}

TEST(DownstreamPhase, AServerThatWasNeverOnlineCannotBecomeOnlineWithoutStarting) {
  PhaseMachine m("test");
  EXPECT_FALSE(m.transition(Phase::online));
  EXPECT_EQ(m.phase(), Phase::lazy);
  ASSERT_TRUE(m.transition(Phase::failed));
  EXPECT_FALSE(m.transition(Phase::online));
  EXPECT_EQ(m.phase(), Phase::failed);
}

TEST(DownstreamPhase, OnlyAnOnlineServerIsIdleStoppedAndItStartsAgainWithoutBeingHeld) {
  for (Phase from : kAll) {
    EXPECT_EQ(transition_allowed(from, Phase::idle_stopped),
              from == Phase::online || from == Phase::idle_stopped)
        << to_string(from);
  }
  PhaseMachine m = machine_in(Phase::idle_stopped);
  EXPECT_FALSE(m.transition(Phase::online)) << "it must start again, not jump back online";
  EXPECT_TRUE(m.transition(Phase::starting));
}

TEST(DownstreamPhase, DisabledIsFinal) {
  for (Phase to : kAll) {
    if (to == Phase::disabled) continue;
    PhaseMachine m = machine_in(Phase::disabled);
    EXPECT_FALSE(m.transition(to)) << "disabled -> " << to_string(to);
    EXPECT_EQ(m.phase(), Phase::disabled);
  }
}

// Health, the catalog and `sluice status` print these names; scripts read them.
TEST(DownstreamPhase, NamesAreTheOnesHealthHasAlwaysShown) {
  EXPECT_EQ(to_string(Phase::lazy), "lazy");
  EXPECT_EQ(to_string(Phase::starting), "starting");
  EXPECT_EQ(to_string(Phase::online), "online");
  EXPECT_EQ(to_string(Phase::restarting), "restarting");
  EXPECT_EQ(to_string(Phase::failed), "failed");
  EXPECT_EQ(to_string(Phase::offline), "offline");
  EXPECT_EQ(to_string(Phase::idle_stopped), "idle_stopped");
  EXPECT_EQ(to_string(Phase::disabled), "disabled");
}

}  // namespace
}  // namespace sluice::gateway
