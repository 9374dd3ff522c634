// /metrics: the gateway's counters in the Prometheus text exposition format (0.0.4). The
// call counters come from the one list in calls/counters.hpp.
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"

#include <fmt/format.h>

namespace sluice::gateway {

namespace {

// Server names come from the operator's config; a label value escapes \, " and newline.
std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// One server's call counters, summed over its tools.
struct ServerRow {
  std::string server;  // as a label value
  OutcomeCounters c;
  std::size_t held = 0, queued = 0;
};

std::vector<ServerRow> server_rows(const std::vector<std::unique_ptr<Downstream>>& downstreams) {
  std::vector<ServerRow> rows;
  rows.reserve(downstreams.size());
  for (const auto& d : downstreams) {
    ServerRow r;
    r.server = label_value(d->name());
    for (const auto& [name, a] : d->admissions()) {
      r.c += a->counters;
      r.held += a->budget.held();
      r.queued += a->budget.queued();
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

// Every counter of the list, by family: one header, then each server's series.
void append_call_counters(std::string& out, const std::vector<ServerRow>& rows) {
  for (std::size_t first = 0; first < kCallCounters.size();) {
    std::size_t end = first + 1;
    while (end < kCallCounters.size() && kCallCounters[end].metric == kCallCounters[first].metric) {
      ++end;
    }
    const CounterInfo& family = kCallCounters[first];
    header(out, family.metric, family.type, family.help);
    for (const auto& r : rows) {
      for (std::size_t i = first; i < end; ++i) {
        const CounterInfo& c = kCallCounters[i];
        out += fmt::format("{}{{server=\"{}\"{}{}}} {}\n", c.metric, r.server,
                           c.label.empty() ? "" : ",", c.label, r.c.*c.member);
      }
    }
    first = end;
  }
  header(out, "sluice_call_errors_total", "counter",
         "Tool calls that did not complete (errored, transport_lost, expired), by server.");
  for (const auto& r : rows) {
    out += fmt::format("sluice_call_errors_total{{server=\"{}\"}} {}\n", r.server,
                       r.c.errored + r.c.transport_lost + r.c.expired);
  }
}

void append_latency(std::string& out, const LatencyHistogram& latency) {
  header(out, "sluice_call_duration_seconds", "histogram",
         "Admitted tool calls from admission to their end.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < LatencyHistogram::kBounds.size(); ++i) {
    cumulative += latency.buckets[i];
    out += fmt::format("sluice_call_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                       LatencyHistogram::kBounds[i], cumulative);
  }
  out += fmt::format("sluice_call_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", latency.count);
  out += fmt::format("sluice_call_duration_seconds_sum {}\n", latency.sum);
  out += fmt::format("sluice_call_duration_seconds_count {}\n", latency.count);
}

// Per server: permits, queue, whether it is up, its restarts and what its lists lost.
void append_servers(std::string& out, const std::vector<ServerRow>& rows,
                    const std::vector<std::unique_ptr<Downstream>>& downstreams) {
  auto gauge = [&](std::string_view name, std::string_view help, auto value_of) {
    header(out, name, "gauge", help);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out += fmt::format("{}{{server=\"{}\"}} {}\n", name, rows[i].server, value_of(i));
    }
  };
  gauge("sluice_permits_held", "Admission permits held.",
        [&](std::size_t i) { return rows[i].held; });
  gauge("sluice_queued_calls", "Calls waiting in an admission queue.",
        [&](std::size_t i) { return rows[i].queued; });
  gauge("sluice_server_up", "1 when the server's process is running and initialized.",
        [&](std::size_t i) { return downstreams[i]->phase() == Phase::online ? 1 : 0; });
  header(out, "sluice_server_restarts_total", "counter",
         "Automatic restarts of a server after it exited.");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += fmt::format("sluice_server_restarts_total{{server=\"{}\"}} {}\n", rows[i].server,
                       downstreams[i]->restarts());
  }
  header(out, "sluice_list_entries_skipped", "gauge",
         "Malformed entries skipped in a server's last listing, by server and list.");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& skipped = downstreams[i]->skipped_entries();
    for (auto [list, n] : {std::pair{"tools", skipped.tools}, std::pair{"prompts", skipped.prompts},
                           std::pair{"resources", skipped.resources},
                           std::pair{"resource_templates", skipped.resource_templates}}) {
      out += fmt::format("sluice_list_entries_skipped{{server=\"{}\",list=\"{}\"}} {}\n",
                         rows[i].server, list, n);
    }
  }
}

// The era bridge (bridge/input_bridge.hpp).
void append_bridge(std::string& out, const InputBridge& bridge) {
  const InputBridge::Counters& c = bridge.counters();
  struct Row {
    std::string_view name, type, help;
    std::uint64_t value;
  };
  const Row rows[] = {
      {"sluice_input_required_total", "counter",
       "2026-07-28 requests answered with input_required (a 2025 server asked for the client's "
       "input).",
       c.input_required},
      {"sluice_input_required_resumed_total", "counter",
       "Retries that continued a request waiting for the client's input.", c.resumed},
      {"sluice_input_required_abandoned_total", "counter",
       "Requests waiting for the client's input that were not resumed in time (their work "
       "cancelled).",
       c.abandoned},
      {"sluice_request_state_refused_total", "counter",
       "requestStates refused: forged, altered, replayed, expired or another caller's.",
       c.refused_states},
      {"sluice_missing_client_capability_total", "counter",
       "2026-07-28 requests refused with -32021: the server asked for a capability the client "
       "did not declare.",
       c.missing_capability},
      {"sluice_input_required_waiting", "gauge", "Requests waiting for their client's input.",
       bridge.waiting()},
  };
  for (const Row& row : rows) {
    header(out, row.name, row.type, row.help);
    out += fmt::format("{} {}\n", row.name, row.value);
  }
}

}  // namespace

std::string Gateway::metrics() const {
  std::string out;
  const std::vector<ServerRow> rows = server_rows(fleet_.servers());
  append_call_counters(out, rows);
  append_latency(out, calls_.latency());
  append_servers(out, rows, fleet_.servers());
  std::size_t children = 0;
  for (const auto& d : fleet_.servers()) children += d->pid() > 0 ? 1 : 0;
  header(out, "sluice_children", "gauge", "Downstream processes sluice owns.");
  out += fmt::format("sluice_children {}\n", children);
  header(out, "sluice_pending_calls", "gauge", "Calls admitted and not ended, all servers.");
  out += fmt::format("sluice_pending_calls {}\n", calls_.size());
  header(out, "sluice_coroutine_failures_total", "counter",
         "Coroutines and request handlers ended by an exception (each one logged).");
  out += fmt::format("sluice_coroutine_failures_total {}\n", core::coroutine_failures());
  header(out, "sluice_permit_over_releases_total", "counter",
         "Releases of an admission slot that was not held (a broken invariant; release "
         "builds).");
  out += fmt::format("sluice_permit_over_releases_total {}\n", Budget::over_releases());
  header(out, "sluice_log_lines_dropped_total", "counter",
         "Log lines not written: the log's queue was full or its file or pipe took no more.");
  out += fmt::format("sluice_log_lines_dropped_total {}\n", core::log::dropped());
  append_bridge(out, bridge_);
  append_audit_log_metrics(out, audit_log_.get());
  return out;
}

}  // namespace sluice::gateway
