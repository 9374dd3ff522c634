#include "gateway/calls/ledger.hpp"

#include "core/log.hpp"

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <vector>

namespace sluice::gateway {
namespace bj = boost::json;

namespace {

std::int64_t age_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(core::Clock::now() - since)
      .count();
}

}  // namespace

std::string_view to_string(CallRecord::State state) {
  switch (state) {
    case CallRecord::State::queued: return "queued";
    case CallRecord::State::running: return "running";
    case CallRecord::State::abandoned: return "abandoned";
  }
  return "unknown";
}

void LatencyHistogram::observe(double seconds) {
  ++count;
  sum += seconds;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++buckets[i];
      return;
    }
  }
}

CallLedger::Records::iterator CallLedger::open(CallRecord record) {
  record.request_id = fmt::format("{}::{}", record.server, next_id_++);
  return records_.insert(records_.end(), std::move(record));
}

void CallLedger::close(Records::iterator record) {
  records_.erase(record);
  if (records_.empty() && idle_) idle_->set();
}

CallRecord* CallLedger::find(std::string_view request_id) {
  for (auto& c : records_) {
    if (c.request_id == request_id) return &c;
  }
  return nullptr;
}

std::size_t CallLedger::cancel_all(std::string_view server) {
  // Collected first: a cancel may close a queued call's record synchronously.
  std::vector<CallRecord*> targets;
  for (auto& c : records_) {
    if (server.empty() || c.server == server) targets.push_back(&c);
  }
  for (auto* c : targets) {
    c->cancelled_by_operator = true;
    c->work_cancel.cancel();
  }
  return targets.size();
}

bj::object CallLedger::list(std::optional<std::string_view> server) const {
  bj::array calls;
  for (const auto& c : records_) {
    if (server && c.server != *server) continue;
    bj::object row;
    row["request_id"] = c.request_id;
    row["tool_id"] = c.tool_id;
    row["state"] = to_string(c.state);
    row["age_ms"] = age_ms(c.started_at);
    row["client"] = c.client;
    row["timeout_ms"] = c.timeout.count();
    if (c.state == CallRecord::State::abandoned) row["abandoned_ms"] = age_ms(c.abandoned_at);
    calls.push_back(std::move(row));
  }
  bj::object out;
  out["count"] = calls.size();
  out["calls"] = std::move(calls);
  return out;
}

asio::awaitable<void> CallLedger::drain(std::chrono::milliseconds bound) {
  if (records_.empty()) co_return;
  idle_ = std::make_unique<core::Event>(io_);
  co_await idle_->wait_for(bound);
  if (!records_.empty()) {
    core::log::info("drain: {} call(s) still pending after the drain bound", records_.size());
  }
}

}  // namespace sluice::gateway
