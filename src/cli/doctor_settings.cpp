// The settings table of `sluice doctor` (doctor_report.hpp): each field of core::Limits and
// config::GatewayPolicy that an operator may want to see, and where its value came from.
#include "cli/doctor_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string_view>

namespace sluice::cli::doctor {
namespace {

std::string ms(std::chrono::milliseconds d) { return fmt::format("{} ms", d.count()); }
std::string yes_no(bool b) { return b ? "true" : "false"; }

// A bound of core::Limits: its field name, its value, the flag that sets it (empty: none of
// the flags doctor takes).
struct LimitRow {
  std::string_view field;
  std::function<std::string(const core::Limits&)> value;
  std::string_view flag;
};

// A key of the top-level "sluice" object: its value, whether a file's block sets it, the flag
// that overrides it.
struct PolicyRow {
  std::string_view key;
  std::function<std::string(const config::GatewayPolicy&)> value;
  std::function<bool(const config::FilePolicy&)> set;
  std::string_view flag;
};

// The access policy as counts of patterns (never the patterns: they may name what is hidden).
std::string access_text(const config::AccessPolicy& access) {
  std::size_t allow = 0, deny = 0;
  for (auto subject : {config::Subject::servers, config::Subject::tools, config::Subject::prompts,
                       config::Subject::resources, config::Subject::meta_tools}) {
    allow += access.allow.of(subject).size();
    deny += access.deny.of(subject).size();
  }
  return fmt::format("{} allow, {} deny", allow, deny);
}

std::string audit_text(const config::AuditSettings& audit) {
  if (!audit.enabled) return "off";
  return fmt::format("{}, rotated at {} bytes, keep {}",
                     audit.file.empty() ? "audit.jsonl in the state directory" : audit.file,
                     audit.max_bytes, audit.keep);
}

// Data table.
const std::vector<LimitRow>& limit_rows() {
  using L = core::Limits;
  static const std::vector<LimitRow> rows{
      {"max_message_bytes", [](const L& l) { return std::to_string(l.max_message_bytes); },
       "--max-message-bytes"},
      {"max_json_depth", [](const L& l) { return std::to_string(l.max_json_depth); }, ""},
      {"max_stderr_line_bytes", [](const L& l) { return std::to_string(l.max_stderr_line_bytes); },
       ""},
      {"max_pending_requests", [](const L& l) { return std::to_string(l.max_pending_requests); },
       ""},
      {"max_tools_per_server", [](const L& l) { return std::to_string(l.max_tools_per_server); },
       ""},
      {"initialize_timeout", [](const L& l) { return ms(l.initialize_timeout); },
       "--initialize-timeout-ms"},
      {"list_timeout", [](const L& l) { return ms(l.list_timeout); }, ""},
      {"restart_backoff_initial", [](const L& l) { return ms(l.restart_backoff_initial); },
       "--restart-backoff-ms"},
      {"max_auto_restarts", [](const L& l) { return std::to_string(l.max_auto_restarts); },
       "--max-auto-restarts"},
      {"sigterm_grace", [](const L& l) { return ms(l.sigterm_grace); }, ""},
      {"http_max_connections", [](const L& l) { return std::to_string(l.http_max_connections); },
       ""},
      {"http_max_sessions", [](const L& l) { return std::to_string(l.http_max_sessions); }, ""},
      {"http_session_idle", [](const L& l) { return ms(l.http_session_idle); }, ""},
      {"http_rate_limit", [](const L& l) { return fmt::format("{}/s", l.http_rate_limit); }, ""},
      {"http_rate_limit_loopback",
       [](const L& l) { return std::string(l.http_rate_limit_loopback ? "on" : "off"); }, ""},
      {"list_page_size", [](const L& l) { return std::to_string(l.list_page_size); }, ""},
  };
  return rows;
}

// Data table.
const std::vector<PolicyRow>& policy_rows() {
  using P = config::GatewayPolicy;
  using F = config::FilePolicy;
  static const std::vector<PolicyRow> rows{
      {"readBudget", [](const P& p) { return std::to_string(p.read_budget); },
       [](const F& f) { return f.read_budget.has_value(); }, ""},
      {"mutatingBudget", [](const P& p) { return std::to_string(p.mutating_budget); },
       [](const F& f) { return f.mutating_budget.has_value(); }, ""},
      {"writesPerServer", [](const P& p) { return std::to_string(p.writes_per_server); },
       [](const F& f) { return f.writes_per_server.has_value(); }, ""},
      {"clientCap", [](const P& p) { return std::to_string(p.client_cap); },
       [](const F& f) { return f.client_cap.has_value(); }, ""},
      {"queueSize", [](const P& p) { return std::to_string(p.queue_size); },
       [](const F& f) { return f.queue_size.has_value(); }, ""},
      {"queueTimeoutMs", [](const P& p) { return ms(p.queue_timeout); },
       [](const F& f) { return f.queue_timeout.has_value(); }, ""},
      {"callTimeoutMs", [](const P& p) { return ms(p.call_timeout); },
       [](const F& f) { return f.call_timeout.has_value(); }, "--call-timeout-ms"},
      {"maxCallMs", [](const P& p) { return ms(p.max_call); },
       [](const F& f) { return f.max_call.has_value(); }, "--max-call-ms"},
      {"abandonMs", [](const P& p) { return ms(p.abandon_bound); },
       [](const F& f) { return f.abandon_bound.has_value(); }, ""},
      {"drainMs", [](const P& p) { return ms(p.drain_bound); },
       [](const F& f) { return f.drain_bound.has_value(); }, ""},
      {"startConcurrency", [](const P& p) { return std::to_string(p.start_concurrency); },
       [](const F& f) { return f.start_concurrency.has_value(); }, "--start-concurrency"},
      {"idleTimeoutMs", [](const P& p) { return ms(p.idle_timeout); },
       [](const F& f) { return f.idle_timeout.has_value(); }, ""},
      {"indexConcurrency", [](const P& p) { return std::to_string(p.index_concurrency); },
       [](const F& f) { return f.index_concurrency.has_value(); }, ""},
      {"indexWaitMs", [](const P& p) { return ms(p.index_wait); },
       [](const F& f) { return f.index_wait.has_value(); }, ""},
      {"indexIdleMs", [](const P& p) { return ms(p.index_idle); },
       [](const F& f) { return f.index_idle.has_value(); }, ""},
      {"forbidForce", [](const P& p) { return yes_no(p.forbid_force); },
       [](const F& f) { return f.forbid_force.has_value(); }, ""},
      {"failClosedWhenStale", [](const P& p) { return yes_no(p.fail_closed_when_stale); },
       [](const F& f) { return f.fail_closed_when_stale.has_value(); }, ""},
      {"allowUnvalidatedTools", [](const P& p) { return yes_no(p.allow_unvalidated_tools); },
       [](const F& f) { return f.allow_unvalidated_tools.has_value(); }, ""},
      {"maxOutputBytes",
       [](const P& p) {
         return p.max_output_bytes ? std::to_string(*p.max_output_bytes) : std::string("no cap");
       },
       [](const F& f) { return f.max_output_bytes.has_value(); }, ""},
      {"policy", [](const P& p) { return access_text(p.access); },
       [](const F& f) { return f.access.has_value(); }, ""},
      {"redact",
       [](const P& p) {
         return fmt::format("built-in {}, {} own", p.redact.built_in ? "on" : "off",
                            p.redact.patterns.size());
       },
       [](const F& f) { return f.redact.has_value(); }, ""},
      {"audit", [](const P& p) { return audit_text(p.audit); },
       [](const F& f) { return f.audit.has_value(); }, ""},
  };
  return rows;
}

bool given(const SettingSources& sources, std::string_view flag) {
  return !flag.empty() &&
         std::find(sources.flags.begin(), sources.flags.end(), flag) != sources.flags.end();
}

}  // namespace

std::vector<Setting> settings_of(const core::Limits& limits, const config::GatewayPolicy& policy,
                                 const SettingSources& sources) {
  std::vector<Setting> out;
  for (const PolicyRow& row : policy_rows()) {
    std::string source = "default";
    if (given(sources, row.flag)) {
      source = "flag " + std::string(row.flag);
    } else {
      auto file = std::find_if(sources.files.begin(), sources.files.end(),
                               [&](const auto& f) { return row.set(f.second); });
      if (file != sources.files.end()) source = file->first;
    }
    out.push_back({"sluice." + std::string(row.key), row.value(policy), std::move(source)});
  }
  for (const LimitRow& row : limit_rows()) {
    out.push_back({"limits." + std::string(row.field), row.value(limits),
                   given(sources, row.flag) ? "flag " + std::string(row.flag) : "default"});
  }
  return out;
}

}  // namespace sluice::cli::doctor
