#include "gateway/audit.hpp"

#include "core/wall_clock.hpp"

#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <charconv>
#include <ctime>
#include <iterator>

namespace sluice::gateway {
namespace {

// `text` as the inside of a JSON string. The texts are names (valid UTF-8, as parsed or
// validated), so only quotes, backslashes and control characters are escaped.
void append_json_text(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
}

void append_field(std::string& out, std::string_view key, std::string_view text) {
  out += ",\"";
  out += key;
  out += "\":\"";
  append_json_text(out, text);
  out += '"';
}

template <typename Integer>
void append_number(std::string& out, Integer n) {
  std::array<char, 24> digits{};
  auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), n);
  out.append(digits.data(), end);
}

// `{"time":"YYYY-MM-DDTHH:MM:SS.` for the second `unix_ms` falls in: formatted once a second
// (every call is audited; gmtime_r and a nine-argument format are most of a line's cost).
void append_time_prefix(std::string& out, std::int64_t unix_ms) {
  thread_local std::int64_t cached_second = -1;
  thread_local std::string cached;
  const std::int64_t second = unix_ms / 1000;
  if (second != cached_second) {
    std::time_t secs = static_cast<std::time_t>(second);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    cached = fmt::format(R"({{"time":"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.)", tm.tm_year + 1900,
                         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_second = second;
  }
  out += cached;
}

}  // namespace

void append_audit_line(std::string& out, std::int64_t unix_ms, const AuditEvent& event) {
  static const pid_t kPid = ::getpid();  // once: getpid is a system call
  append_time_prefix(out, unix_ms);
  const auto millis = static_cast<int>(unix_ms % 1000);
  out += static_cast<char>('0' + millis / 100);
  out += static_cast<char>('0' + millis / 10 % 10);
  out += static_cast<char>('0' + millis % 10);
  out += R"(Z","unix_ms":)";
  append_number(out, unix_ms);
  out += R"(,"pid":)";
  append_number(out, kPid);
  append_field(out, "kind", event.kind);
  append_field(out, "client", event.client);
  append_field(out, "server", event.server);
  if (!event.tool.empty()) append_field(out, "tool", event.tool);
  append_field(out, "outcome", event.outcome);
  if (event.latency_ms >= 0) {
    out += R"(,"duration_ms":)";
    append_number(out, event.latency_ms);
  }
  out += R"(,"generation":)";
  append_number(out, event.generation);
  out += "}\n";
}

void AuditRing::record(AuditEvent event) {
  auto now = core::unix_ms_now();
  if (log_ != nullptr && log_->accepting()) {
    line_.clear();
    append_audit_line(line_, now, event);
    log_->append(line_);
  }
  events_.push_front(Stamped{now, std::move(event)});
  if (events_.size() > capacity_) {
    events_.pop_back();
    ++dropped_;
  }
}

boost::json::array AuditRing::to_json(std::size_t limit) const {
  boost::json::array out;
  for (const auto& s : events_) {
    if (out.size() >= limit) break;
    boost::json::object e;
    e["unix_ms"] = s.unix_ms;
    e["kind"] = s.event.kind;
    e["client"] = s.event.client;
    e["server"] = s.event.server;
    if (!s.event.tool.empty()) e["tool"] = s.event.tool;
    e["outcome"] = s.event.outcome;
    if (s.event.latency_ms >= 0) e["latency_ms"] = s.event.latency_ms;
    e["generation"] = s.event.generation;
    out.push_back(std::move(e));
  }
  return out;
}

boost::json::object audit_log_report(const store::AuditLog* log, std::string_view off_reason) {
  boost::json::object out;
  if (log == nullptr) {
    out["active"] = false;
    out["problem"] = off_reason;
    return out;
  }
  store::AuditLogStatus s = log->status();
  out["active"] = s.active;
  out["path"] = s.path;
  out["written"] = s.written;
  out["dropped"] = s.dropped;
  out["write_errors"] = s.write_errors;
  out["rotations"] = s.rotations;
  if (!s.problem.empty()) out["problem"] = s.problem;
  return out;
}

void append_audit_log_metrics(std::string& out, const store::AuditLog* log) {
  store::AuditLogStatus s = log != nullptr ? log->status() : store::AuditLogStatus{};
  out +=
      "# HELP sluice_audit_log_active Whether the persistent audit log is open and written.\n"
      "# TYPE sluice_audit_log_active gauge\n";
  fmt::format_to(std::back_inserter(out), "sluice_audit_log_active {}\n", s.active ? 1 : 0);
  out +=
      "# HELP sluice_audit_log_records_total Audit records by what became of them: written to "
      "the file, or dropped (a full queue, a failed write, left at exit).\n"
      "# TYPE sluice_audit_log_records_total counter\n";
  fmt::format_to(std::back_inserter(out),
                 "sluice_audit_log_records_total{{outcome=\"written\"}} {}\n"
                 "sluice_audit_log_records_total{{outcome=\"dropped\"}} {}\n",
                 s.written, s.dropped);
  out +=
      "# HELP sluice_audit_log_write_errors_total Writes of the audit log that failed.\n"
      "# TYPE sluice_audit_log_write_errors_total counter\n";
  fmt::format_to(std::back_inserter(out), "sluice_audit_log_write_errors_total {}\n",
                 s.write_errors);
}

}  // namespace sluice::gateway
