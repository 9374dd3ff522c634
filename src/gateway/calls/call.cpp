#include "gateway/calls/call.hpp"

#include "core/log.hpp"

#include <utility>

namespace sluice::gateway {

std::string_view to_string(Call::Outcome outcome) {
  switch (outcome) {
    case Call::Outcome::completed: return "completed";
    case Call::Outcome::errored: return "errored";
    case Call::Outcome::transport_lost: return "transport_lost";
    case Call::Outcome::expired:
    case Call::Outcome::expired_holding_permit: return "expired";
    case Call::Outcome::cancelled_while_queued: return "cancelled_while_queued";
    case Call::Outcome::rejected_overflow: return "rejected_overflow";
    case Call::Outcome::rejected_queue_timeout: return "rejected_queue_timeout";
  }
  return "unknown";
}

Call::Outcome Call::outcome_of(mcp::Reply::Status status) {
  switch (status) {
    case mcp::Reply::Status::result: return Outcome::completed;
    case mcp::Reply::Status::error: return Outcome::errored;
    case mcp::Reply::Status::cancelled: return Outcome::cancelled_while_queued;
    default: return Outcome::transport_lost;
  }
}

Call::Call(CallLedger& ledger, AuditRing& audit, ToolAdmission& admission, CallRecord record,
           std::function<std::uint64_t()> generation)
    : ledger_(&ledger),
      audit_(&audit),
      admission_(&admission),
      record_(ledger.open(std::move(record))),
      generation_(std::move(generation)) {}

Call::Call(Call&& other) noexcept
    : ledger_(std::exchange(other.ledger_, nullptr)),
      audit_(other.audit_),
      admission_(other.admission_),
      record_(other.record_),
      permit_(std::move(other.permit_)),
      generation_(std::move(other.generation_)),
      outcome_(other.outcome_),
      admitted_(other.admitted_),
      abandoned_(other.abandoned_) {}

Call::~Call() {
  if (open()) end(Outcome::transport_lost);
}

void Call::admitted() {
  record_->state = CallRecord::State::running;
  admitted_ = true;
  ++admission_->counters.in_flight;
}

void Call::refused(Outcome why) {
  count(why);
  close();
}

void Call::abandon() {
  if (abandoned_) return;
  abandoned_ = true;
  record_->state = CallRecord::State::abandoned;
  record_->abandoned_at = core::Clock::now();
  ++admission_->counters.abandoned_in_flight;
}

void Call::end(Outcome outcome) {
  if (!open()) return;
  count(outcome);
  close();
}

void Call::count(Outcome outcome) {
  if (outcome_) return;  // an expired call was counted when it expired
  outcome_ = outcome;
  OutcomeCounters& c = admission_->counters;
  switch (outcome) {
    case Outcome::completed: ++c.completed; break;
    case Outcome::errored: ++c.errored; break;
    case Outcome::transport_lost: ++c.transport_lost; break;
    case Outcome::expired: ++c.expired; break;
    case Outcome::expired_holding_permit:
      ++c.expired;
      ++c.expired_holding_permit;
      break;
    case Outcome::cancelled_while_queued: ++c.cancelled_while_queued; break;
    case Outcome::rejected_overflow: ++c.rejected_overflow; break;
    case Outcome::rejected_queue_timeout: ++c.rejected_queue_timeout; break;
  }
}

void Call::close() {
  permit_.release();
  const CallRecord& r = *record_;
  std::string tool(std::string_view(r.tool_id).substr(r.server.size() + 2));
  const std::string_view word = to_string(*outcome_);
  if (!admitted_) {
    audit_->record({"refusal", r.client, r.server, std::move(tool), std::string(word), -1,
                    generation_()});
  } else {
    OutcomeCounters& c = admission_->counters;
    if (c.in_flight > 0) --c.in_flight;
    if (abandoned_) {
      if (c.abandoned_in_flight > 0) --c.abandoned_in_flight;
      core::log::info("abandoned call {} of {} ended ({})", r.request_id, r.tool_id,
                      *outcome_ == Outcome::completed ? "answered, dropped" : "not answered");
    }
    const auto took = core::Clock::now() - r.started_at;
    ledger_->latency().observe(std::chrono::duration<double>(took).count());
    audit_->record({abandoned_ ? "abandoned_call" : "call", r.client, r.server, std::move(tool),
                    std::string(word),
                    std::chrono::duration_cast<std::chrono::milliseconds>(took).count(),
                    generation_()});
  }
  std::exchange(ledger_, nullptr)->close(record_);
}

boost::asio::awaitable<void> Call::follow(Call call,
                                          std::unique_ptr<mcp::OutstandingRequest> late,
                                          AbandonPolicy policy) {
  call.abandon();
  mcp::Reply reply = co_await late->wait_until(call.record().abandoned_at + policy.abandon_bound);
  if (reply.status == mcp::Reply::Status::timeout) {
    // Past the abandon bound (invariant C2): counted expired now.
    if (!policy.hold_after_expiry) {
      call.end(Outcome::expired);  // the permit is released; `late` forgets the id
      co_return;
    }
    call.count(Outcome::expired_holding_permit);
    reply = co_await late->wait_until(std::chrono::steady_clock::time_point::max());
  }
  call.end(outcome_of(reply.status));
}

}  // namespace sluice::gateway
