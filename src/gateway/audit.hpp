#pragma once
// The audit ring: one event per call, cancel, refusal, restart and crash, newest first,
// bounded (the oldest is dropped and counted). Events never carry argument values: only
// names sluice or the configuration chose (client label, server, tool), an outcome word,
// a latency and the server's generation.
// AuditRing::record is the one function every part calls to audit something (a governance
// action, a trust or policy refusal, a call's end): the event goes to the ring and, when the
// gateway has one, as one JSON line to the persistent audit log (store::AuditLog, which the
// gateway owns and which outlives the ring). docs/state.md lists the line's fields.
// Threading: the gateway's io_context thread only.
#include "store/audit_log.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace sluice::gateway {

struct AuditEvent {
  std::string kind;     // call, cancel, refusal, restart, disconnect, refresh, crash
  std::string client;   // "stdio", "http#N", "cli", or "operator" for meta-tool actions
  std::string server;
  std::string tool;     // empty when not about one tool
  std::string outcome;  // completed, errored, transport_lost, expired, refused, ok, ...
  std::int64_t latency_ms = -1;
  std::uint64_t generation = 0;
};

// Appends `event` as one JSON line (ending in '\n') to `out`: time, unix_ms, pid, kind, client,
// server, tool (when set), outcome, duration_ms (when known), generation.
void append_audit_line(std::string& out, std::int64_t unix_ms, const AuditEvent& event);

class AuditRing {
 public:
  // `log` (borrowed, may be null): where each event also goes, as a line.
  explicit AuditRing(std::size_t capacity, store::AuditLog* log = nullptr)
      : capacity_(capacity == 0 ? 1 : capacity), log_(log) {}
  void record(AuditEvent event);
  boost::json::array to_json(std::size_t limit) const;  // newest first
  std::uint64_t dropped() const { return dropped_; }
  std::size_t size() const { return events_.size(); }

 private:
  struct Stamped {
    std::int64_t unix_ms;
    AuditEvent event;
  };
  std::size_t capacity_;
  std::deque<Stamped> events_;  // newest at the front
  std::uint64_t dropped_ = 0;
  store::AuditLog* log_;
  std::string line_;  // reused for each line, so that a record allocates nothing more
};

// gateway.health's `audit_log` object: active, path, written, dropped, write_errors,
// rotations, problem; without a log, active false and `off_reason` as the problem.
boost::json::object audit_log_report(const store::AuditLog* log, std::string_view off_reason);
// The persistent audit log's /metrics series.
void append_audit_log_metrics(std::string& out, const store::AuditLog* log);

}  // namespace sluice::gateway
