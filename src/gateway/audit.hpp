#pragma once
// The audit ring: one event per call, cancel, refusal, restart and crash, newest first,
// bounded (the oldest is dropped and counted). Events never carry argument values: only
// names sluice or the configuration chose (client label, server, tool), an outcome word,
// a latency and the server's generation.
// Threading: the gateway's io_context thread only.
#include <boost/json/array.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>

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

class AuditRing {
 public:
  explicit AuditRing(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
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
};

}  // namespace sluice::gateway
