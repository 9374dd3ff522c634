#pragma once
// The counters of admitted calls, per tool, as ONE list: SLUICE_CALL_COUNTERS generates the
// OutcomeCounters struct, its gateway.health row (add_to) and its /metrics lines (the
// kCallCounters table, read by report/metrics.cpp), so the three cannot drift apart. Adding a
// counter is one line here, plus the place in Call that counts it.
//
// Every admitted call ends with exactly one of completed, errored, transport_lost or expired
// (invariant C3); in_flight and abandoned_in_flight are gauges that never go below zero.
// Only Call writes them. Threading: the gateway's io_context thread only.
#include <boost/json/object.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace sluice::gateway {

// X(field, metric, type, label, help): `metric` is the Prometheus family the counter is one
// series of, `label` the label pair that tells it apart within that family (empty for a
// family of its own), and `help` the family's help text (given on its first entry only).
// Entries of one family are adjacent. The order is the order of the health row.
#define SLUICE_CALL_COUNTERS(X)                                                               \
  X(in_flight, "sluice_calls_in_flight", "gauge", "",                                         \
    "Admitted calls not ended (abandoned included).")                                         \
  X(abandoned_in_flight, "sluice_calls_abandoned_in_flight", "gauge", "",                     \
    "Calls their client gave up on, still holding their permit.")                             \
  X(completed, "sluice_calls_total", "counter", "outcome=\"completed\"",                      \
    "Tool calls admitted and ended, by server and outcome.")                                  \
  X(errored, "sluice_calls_total", "counter", "outcome=\"errored\"", "")                      \
  X(transport_lost, "sluice_calls_total", "counter", "outcome=\"transport_lost\"", "")        \
  X(expired, "sluice_calls_total", "counter", "outcome=\"expired\"", "")                      \
  X(cancelled_while_queued, "sluice_calls_refused_total", "counter",                          \
    "reason=\"cancelled_while_queued\"", "Calls refused by admission, by server and reason.") \
  X(rejected_overflow, "sluice_calls_refused_total", "counter", "reason=\"queue_full\"", "")   \
  X(rejected_queue_timeout, "sluice_calls_refused_total", "counter",                          \
    "reason=\"queue_timeout\"", "")                                                           \
  X(expired_holding_permit, "sluice_calls_expired_holding_permit_total", "counter", "",       \
    "Abandoned calls past the abandon bound whose stdio server kept their permit until it "   \
    "answered or exited.")

// completed: the downstream answered with a result; errored: with a JSON-RPC error;
// transport_lost: its connection closed or its process exited first; expired: abandoned and
// not answered within the abandon bound; the rejected_* and cancelled_while_queued counters:
// calls that never got past admission.
struct OutcomeCounters {
#define SLUICE_COUNTER_FIELD(field, metric, type, label, help) std::uint64_t field = 0;
  SLUICE_CALL_COUNTERS(SLUICE_COUNTER_FIELD)
#undef SLUICE_COUNTER_FIELD

  OutcomeCounters& operator+=(const OutcomeCounters& other);
  // Writes every counter into a health row, under its field name.
  void add_to(boost::json::object& row) const;
};

struct CounterInfo {
  std::string_view field;
  std::uint64_t OutcomeCounters::*member;
  std::string_view metric;
  std::string_view type;
  std::string_view label;
  std::string_view help;
};

inline constexpr std::array kCallCounters = {
#define SLUICE_COUNTER_INFO(field, metric, type, label, help) \
  CounterInfo{#field, &OutcomeCounters::field, metric, type, label, help},
    SLUICE_CALL_COUNTERS(SLUICE_COUNTER_INFO)
#undef SLUICE_COUNTER_INFO
};

}  // namespace sluice::gateway
