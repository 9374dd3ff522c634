#include "transport/http_metrics.hpp"

#include <fmt/format.h>

namespace sluice::transport {

std::string http_metrics_text(const ConnectionCounters& c, const SessionTable& sessions,
                              std::size_t open_connections) {
  const SessionCounters& s = sessions.counters();
  std::string out;
  auto line = [&](std::string_view name, std::string_view type, std::string_view help,
                  std::uint64_t value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
  };
  out +=
      "# HELP sluice_http_requests_total HTTP responses by status code.\n"
      "# TYPE sluice_http_requests_total counter\n";
  for (const auto& [code, n] : c.by_status) {
    out += fmt::format("sluice_http_requests_total{{code=\"{}\"}} {}\n", code, n);
  }
  line("sluice_http_sessions", "gauge", "Open MCP sessions.", sessions.size());
  line("sluice_http_sessions_retired", "gauge", "Ended sessions whose calls are still finishing.",
       sessions.retired());
  line("sluice_http_sessions_created_total", "counter", "Sessions created.", s.created);
  line("sluice_http_sessions_deleted_total", "counter", "Sessions ended by DELETE or shutdown.",
       s.deleted);
  line("sluice_http_sessions_expired_total", "counter", "Sessions ended after being idle.",
       s.expired);
  line("sluice_http_sessions_refused_total", "counter", "initialize refused at the session cap.",
       s.refused);
  line("sluice_http_connections", "gauge", "Open HTTP connections.", open_connections);
  line("sluice_http_connections_total", "counter", "HTTP connections accepted.", c.connections);
  out +=
      "# HELP sluice_http_connections_refused_total Connections answered 503 and closed at a "
      "cap.\n# TYPE sluice_http_connections_refused_total counter\n";
  out += fmt::format("sluice_http_connections_refused_total{{reason=\"connections\"}} {}\n",
                     c.connections_refused);
  out +=
      fmt::format("sluice_http_connections_refused_total{{reason=\"incomplete_per_address\"}} {}\n",
                  c.connections_refused_address);
  line("sluice_http_keepalive_closed_total", "counter",
       "Kept-alive connections closed because their address had too many without a request.",
       c.keepalive_closed_address);
  line("sluice_http_sse_replay_dropped_total", "counter",
       "SSE events dropped from a full replay buffer before they were delivered.",
       s.replay_dropped);
  line("sluice_http_sse_resumed_total", "counter", "Streams resumed with Last-Event-ID.",
       c.resumed);
  return out;
}

}  // namespace sluice::transport
