#include "gateway/pending.hpp"

namespace sluice::gateway {

void OutcomeCounters::add_to(boost::json::object& row) const {
  row["in_flight"] = in_flight;
  row["abandoned_in_flight"] = abandoned_in_flight;
  row["completed"] = completed;
  row["errored"] = errored;
  row["transport_lost"] = transport_lost;
  row["expired"] = expired;
  row["cancelled_while_queued"] = cancelled_while_queued;
  row["rejected_overflow"] = rejected_overflow;
  row["rejected_queue_timeout"] = rejected_queue_timeout;
  row["expired_holding_permit"] = expired_holding_permit;
}

std::string_view to_string(PendingCall::State state) {
  switch (state) {
    case PendingCall::State::queued: return "queued";
    case PendingCall::State::running: return "running";
    case PendingCall::State::abandoned: return "abandoned";
  }
  return "unknown";
}

}  // namespace sluice::gateway
