// /metrics: the gateway's counters in the Prometheus text exposition format (0.0.4).
#include "gateway/gateway.hpp"

#include "core/log.hpp"
#include "core/spawn.hpp"

#include <fmt/format.h>

namespace sluice::gateway {

void Gateway::LatencyHistogram::observe(double seconds) {
  ++count;
  sum += seconds;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++buckets[i];
      return;
    }
  }
}

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

}  // namespace

std::string Gateway::metrics() const {
  std::string out;
  struct Row {
    std::string server;
    OutcomeCounters c;
    std::size_t held = 0, queued = 0;
  };
  std::vector<Row> rows;
  for (const auto& d : downstreams_) {
    Row r;
    r.server = label_value(d->name());
    for (const auto& [name, a] : d->admissions()) {
      const auto& c = a->counters;
      r.c.completed += c.completed;
      r.c.errored += c.errored;
      r.c.transport_lost += c.transport_lost;
      r.c.expired += c.expired;
      r.c.cancelled_while_queued += c.cancelled_while_queued;
      r.c.rejected_overflow += c.rejected_overflow;
      r.c.rejected_queue_timeout += c.rejected_queue_timeout;
      r.c.in_flight += c.in_flight;
      r.c.abandoned_in_flight += c.abandoned_in_flight;
      r.held += a->budget.held();
      r.queued += a->budget.queued();
    }
    rows.push_back(std::move(r));
  }
  header(out, "sluice_calls_total", "counter",
         "Tool calls admitted and ended, by server and outcome.");
  for (const auto& r : rows) {
    for (auto [outcome, n] :
         {std::pair{"completed", r.c.completed}, std::pair{"errored", r.c.errored},
          std::pair{"transport_lost", r.c.transport_lost}, std::pair{"expired", r.c.expired}}) {
      out += fmt::format("sluice_calls_total{{server=\"{}\",outcome=\"{}\"}} {}\n", r.server,
                         outcome, n);
    }
  }
  header(out, "sluice_call_errors_total", "counter",
         "Tool calls that did not complete (errored, transport_lost, expired), by server.");
  for (const auto& r : rows) {
    out += fmt::format("sluice_call_errors_total{{server=\"{}\"}} {}\n", r.server,
                       r.c.errored + r.c.transport_lost + r.c.expired);
  }
  header(out, "sluice_calls_refused_total", "counter",
         "Calls refused by admission, by server and reason.");
  for (const auto& r : rows) {
    for (auto [reason, n] : {std::pair{"cancelled_while_queued", r.c.cancelled_while_queued},
                             std::pair{"queue_full", r.c.rejected_overflow},
                             std::pair{"queue_timeout", r.c.rejected_queue_timeout}}) {
      out += fmt::format("sluice_calls_refused_total{{server=\"{}\",reason=\"{}\"}} {}\n", r.server,
                         reason, n);
    }
  }
  header(out, "sluice_call_duration_seconds", "histogram",
         "Admitted tool calls from admission to their end.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < LatencyHistogram::kBounds.size(); ++i) {
    cumulative += latency_.buckets[i];
    out += fmt::format("sluice_call_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                       LatencyHistogram::kBounds[i], cumulative);
  }
  out += fmt::format("sluice_call_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", latency_.count);
  out += fmt::format("sluice_call_duration_seconds_sum {}\n", latency_.sum);
  out += fmt::format("sluice_call_duration_seconds_count {}\n", latency_.count);
  auto gauge = [&](std::string_view name, std::string_view help, auto value_of) {
    header(out, name, "gauge", help);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out += fmt::format("{}{{server=\"{}\"}} {}\n", name, rows[i].server, value_of(i));
    }
  };
  gauge("sluice_calls_in_flight", "Admitted calls not ended (abandoned included).",
        [&](std::size_t i) { return rows[i].c.in_flight; });
  gauge("sluice_calls_abandoned_in_flight",
        "Calls their client gave up on, still holding their permit.",
        [&](std::size_t i) { return rows[i].c.abandoned_in_flight; });
  gauge("sluice_permits_held", "Admission permits held.",
        [&](std::size_t i) { return rows[i].held; });
  gauge("sluice_queued_calls", "Calls waiting in an admission queue.",
        [&](std::size_t i) { return rows[i].queued; });
  gauge("sluice_server_up", "1 when the server's process is running and initialized.",
        [&](std::size_t i) { return downstreams_[i]->status() == Status::online ? 1 : 0; });
  header(out, "sluice_server_restarts_total", "counter",
         "Automatic restarts of a server after it exited.");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += fmt::format("sluice_server_restarts_total{{server=\"{}\"}} {}\n", rows[i].server,
                       downstreams_[i]->restarts());
  }
  std::size_t children = 0;
  for (const auto& d : downstreams_) children += d->pid() > 0 ? 1 : 0;
  header(out, "sluice_children", "gauge", "Downstream processes sluice owns.");
  out += fmt::format("sluice_children {}\n", children);
  header(out, "sluice_pending_calls", "gauge", "Calls admitted and not ended, all servers.");
  out += fmt::format("sluice_pending_calls {}\n", pending_.size());
  header(out, "sluice_list_entries_skipped", "gauge",
         "Malformed entries skipped in a server's last listing, by server and list.");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& skipped = downstreams_[i]->skipped_entries();
    for (auto [list, n] :
         {std::pair{"tools", skipped.tools}, std::pair{"prompts", skipped.prompts},
          std::pair{"resources", skipped.resources},
          std::pair{"resource_templates", skipped.resource_templates}}) {
      out += fmt::format("sluice_list_entries_skipped{{server=\"{}\",list=\"{}\"}} {}\n",
                         rows[i].server, list, n);
    }
  }
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
  return out;
}

}  // namespace sluice::gateway
