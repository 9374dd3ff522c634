#pragma once
// The HTTP front end's counters and their Prometheus lines (appended to the gateway's in
// /metrics). Plain values, written on the server's loop thread.
#include "transport/http_session_table.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace sluice::transport {

// What the listener and the connections count (the sessions count in SessionCounters).
struct ConnectionCounters {
  std::map<unsigned, std::uint64_t> by_status;    // responses by status code
  std::uint64_t resumed = 0;                      // streams resumed with Last-Event-ID
  std::uint64_t connections = 0;                  // accepted
  std::uint64_t connections_refused = 0;          // at the connection cap
  std::uint64_t connections_refused_address = 0;  // at the per-address cap
  std::uint64_t keepalive_closed_address = 0;     // kept-alive ones closed at that cap
};

// The sluice_http_* lines, with the gauges read now.
std::string http_metrics_text(const ConnectionCounters& connections, const SessionTable& sessions,
                              std::size_t open_connections);

}  // namespace sluice::transport
