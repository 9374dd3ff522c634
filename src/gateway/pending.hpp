#pragma once
// What the gateway knows about calls it admitted (GATEWAY-INVARIANTS §2-§3): per tool, a
// Budget and the outcome counters; per call, a record that gateway.list_pending shows and
// gateway.cancel finds. Every admitted call ends with exactly one outcome (completed,
// errored, transport_lost or expired); counters never go negative.
// Threading: the gateway's io_context thread only.
#include "gateway/admission.hpp"
#include "mcp/session.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace sluice::gateway {

struct OutcomeCounters {
  std::uint64_t completed = 0;       // the downstream answered with a result
  std::uint64_t errored = 0;         // the downstream answered with a JSON-RPC error
  std::uint64_t transport_lost = 0;  // its connection closed or its process exited first
  std::uint64_t expired = 0;         // abandoned and not answered within the abandon bound
  std::uint64_t cancelled_while_queued = 0;
  std::uint64_t rejected_overflow = 0;
  std::uint64_t rejected_queue_timeout = 0;
  std::uint64_t expired_holding_permit = 0;
  std::uint64_t in_flight = 0;            // admitted and not ended (abandoned included)
  std::uint64_t abandoned_in_flight = 0;  // of those, given up by their caller

  void add_to(boost::json::object& row) const;
};

// One tool's admission: its budget (resolved: tool override, then the server's default,
// then the class default from readOnlyHint) and its counters.
struct ToolAdmission {
  ToolAdmission(asio::io_context& io, std::size_t budget, std::size_t queue_limit)
      : budget(io, budget, queue_limit) {}
  Budget budget;
  OutcomeCounters counters;
};

struct PendingCall {
  enum class State { queued, running, abandoned };
  std::string request_id;  // "server::n"
  std::string server;
  std::string tool_id;
  std::string client;
  // The client session and the raw id of its request this call serves: where a request or
  // log the downstream sends during the call is relayed (aggregate mode).
  std::weak_ptr<mcp::Session> client_session;
  std::string client_request_id;
  State state = State::queued;
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point abandoned_at{};
  std::chrono::milliseconds timeout{0};
  // Cancels the work (the downstream request); set by the caller's cancel or gateway.cancel.
  core::CancelSignal work_cancel;
  bool cancelled_by_operator = false;
};

std::string_view to_string(PendingCall::State state);

}  // namespace sluice::gateway
