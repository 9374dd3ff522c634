#pragma once
// One admitted tools/call, from admission to its end: the Call owns the call's ledger record
// (what gateway.list_pending shows and gateway.cancel finds), the permits it holds, the work
// cancel (the record's), the abandon bound and the one place its outcome is counted.
//
// Lifetime (invariants A2-A3, C2-C4): opened queued; admitted() once every budget granted a
// slot; abandon() when its caller gives up (a cancel or the timeout) while the downstream
// request is still out; follow() then waits for the late answer, the close, or the abandon
// bound, and after the bound either keeps the permit until the answer or the close
// (hold_after_expiry, a stdio child) or ends at once. The call ends exactly once with exactly
// one outcome; the permits are released and the record closed at that end, never earlier.
//
// Ownership: move-only; the one live Call of a record owns it (gateway.invoke's frame, then
// the follow coroutine for an abandoned call). Destroying an open Call ends it (counted
// transport_lost unless an outcome was already counted), so an exception cannot leak the
// record or the permits. The ledger, audit ring and admission must outlive it.
// Threading: the gateway's io_context thread only.
#include "gateway/audit.hpp"
#include "gateway/calls/admission.hpp"
#include "gateway/calls/ledger.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace sluice::gateway {

// What happens to an abandoned call (invariant C2).
struct AbandonPolicy {
  std::chrono::milliseconds abandon_bound{120000};
  // Past the bound, keep the permit until the answer or the close (a stdio child, counted
  // expired_holding_permit); else end the call as expired and release it (a remote server).
  bool hold_after_expiry = true;
};

class Call {
 public:
  enum class Outcome {
    completed,               // the downstream answered with a result
    errored,                 // with a JSON-RPC error
    transport_lost,          // its connection closed or its process exited first
    expired,                 // abandoned and past the abandon bound
    expired_holding_permit,  // the same, its permit kept until the answer or the close
    cancelled_while_queued,  // cancelled before the request was sent
    rejected_overflow,       // a budget's queue was full
    rejected_queue_timeout,  // a budget stayed full for the queue timeout
  };
  // The outcome a settled downstream request ends its call with.
  static Outcome outcome_of(mcp::Reply::Status status);

  // Opens `record` in `ledger` (queued). `generation`: the server's generation, read when the
  // call ends (for the audit event).
  Call(CallLedger& ledger, AuditRing& audit, ToolAdmission& admission, CallRecord record,
       std::function<std::uint64_t()> generation);
  Call(Call&& other) noexcept;
  Call& operator=(Call&&) = delete;
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call();

  bool open() const { return ledger_ != nullptr; }
  CallRecord& record() const { return *record_; }
  core::CancelSignal& work_cancel() const { return record_->work_cancel; }
  // Budgets grant their slots into this permit (calls/admission.hpp).
  Permit& permit() { return permit_; }

  // Every budget granted its slot: the call runs (in_flight).
  void admitted();
  // A budget refused or the call was cancelled while queued (one of the rejected_* outcomes
  // or cancelled_while_queued): the call ends.
  void refused(Outcome why);
  // The caller gave up (a cancel or the timeout); the downstream request is still out.
  void abandon();
  // The call ends with `outcome` (or with the one already counted, after an expiry).
  void end(Outcome outcome);

  // Follows an abandoned call to its end: the late answer, the close, or the abandon bound
  // under `policy`. The call (and its permits) lives until then.
  static boost::asio::awaitable<void> follow(Call call,
                                             std::unique_ptr<mcp::OutstandingRequest> late,
                                             AbandonPolicy policy);

 private:
  // The one place outcomes are counted: exactly one per call (invariant C3).
  void count(Outcome outcome);
  // Releases the permits, settles the gauges, records latency and audit, closes the record.
  void close();

  CallLedger* ledger_;  // null once closed or moved from
  AuditRing* audit_;
  ToolAdmission* admission_;
  CallLedger::Records::iterator record_;
  Permit permit_;
  std::function<std::uint64_t()> generation_;
  std::optional<Outcome> outcome_;
  bool admitted_ = false;
  bool abandoned_ = false;
};

std::string_view to_string(Call::Outcome outcome);

}  // namespace sluice::gateway
