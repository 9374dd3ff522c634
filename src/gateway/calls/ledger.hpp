#pragma once
// The ledger of admitted calls: one CallRecord per call from admission to its end (what
// gateway.list_pending shows, gateway.cancel and forced restarts find, health ages and drain
// waits on), and the latency histogram of the calls that ended.
//
// Ownership: the Gateway owns the one ledger; a record is opened and closed only by its Call
// (calls/call.hpp), so a record lives exactly as long as its call. Threading: the gateway's
// io_context thread only. Guarantees: a record is never erased while its Call is open;
// drain() resumes when the last record closes or its bound passes.
#include "core/cancel.hpp"
#include "core/clock.hpp"
#include "core/event.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::mcp {
class Session;
}

namespace sluice::gateway {

namespace asio = boost::asio;

struct CallRecord {
  enum class State { queued, running, abandoned };
  std::string request_id;  // "server::n", given by the ledger
  std::string server;
  std::string tool_id;  // "server::tool"
  std::string client;
  // The client session and the raw id of its request this call serves: where a request or
  // log the downstream sends during the call is relayed (aggregate mode).
  std::weak_ptr<mcp::Session> client_session;
  std::string client_request_id;
  State state = State::queued;
  std::chrono::steady_clock::time_point started_at = core::Clock::now();
  std::chrono::steady_clock::time_point abandoned_at{};
  std::chrono::milliseconds timeout{0};
  // The one cancel of the work: queued, it leaves the queue; running, the downstream request
  // is cancelled. The caller's cancel and gateway.cancel both end here.
  core::CancelSignal work_cancel;
  bool cancelled_by_operator = false;
};

std::string_view to_string(CallRecord::State state);

// Admitted calls from admission to their end, in seconds (a Prometheus histogram).
struct LatencyHistogram {
  static constexpr std::array<double, 14> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,   60};
  std::array<std::uint64_t, kBounds.size()> buckets{};  // non-cumulative
  std::uint64_t count = 0;
  double sum = 0;
  void observe(double seconds);
};

class CallLedger {
 public:
  using Records = std::list<CallRecord>;

  explicit CallLedger(asio::io_context& io) : io_(io) {}
  CallLedger(const CallLedger&) = delete;
  CallLedger& operator=(const CallLedger&) = delete;

  const Records& records() const { return records_; }
  std::size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  CallRecord* find(std::string_view request_id);
  // An operator's cancel of every call of `server` (all servers when empty): each is marked
  // cancelled by the operator and its work cancelled. Returns how many.
  std::size_t cancel_all(std::string_view server);
  // gateway.list_pending's body: one row per call (of `server` when given).
  boost::json::object list(std::optional<std::string_view> server) const;
  // Invariant C7: resumes when no call is left, or `bound` passes.
  asio::awaitable<void> drain(std::chrono::milliseconds bound);

  LatencyHistogram& latency() { return latency_; }
  const LatencyHistogram& latency() const { return latency_; }

 private:
  friend class Call;  // the only writer of records
  Records::iterator open(CallRecord record);
  void close(Records::iterator record);

  asio::io_context& io_;
  Records records_;
  std::uint64_t next_id_ = 1;
  std::unique_ptr<core::Event> idle_;  // set when the last record closes during a drain
  LatencyHistogram latency_;
};

}  // namespace sluice::gateway
