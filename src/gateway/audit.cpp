#include "gateway/audit.hpp"

#include "core/wall_clock.hpp"

#include <boost/json/object.hpp>

namespace sluice::gateway {

void AuditRing::record(AuditEvent event) {
  auto now = core::unix_ms_now();
  events_.push_front(Stamped{now, std::move(event)});
  if (events_.size() > capacity_) {
    events_.pop_back();
    ++dropped_;
  }
}

boost::json::array AuditRing::to_json(std::size_t limit) const {
  boost::json::array out;
  for (const auto& s : events_) {
    if (out.size() >= limit) break;
    boost::json::object e;
    e["unix_ms"] = s.unix_ms;
    e["kind"] = s.event.kind;
    e["client"] = s.event.client;
    e["server"] = s.event.server;
    if (!s.event.tool.empty()) e["tool"] = s.event.tool;
    e["outcome"] = s.event.outcome;
    if (s.event.latency_ms >= 0) e["latency_ms"] = s.event.latency_ms;
    e["generation"] = s.event.generation;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace sluice::gateway
