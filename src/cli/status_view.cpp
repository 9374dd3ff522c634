#include "cli/status_view.hpp"

#include "core/wall_clock.hpp"

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <chrono>

namespace sluice::cli {
namespace bj = boost::json;

namespace {

constexpr std::size_t kLabel = 13;  // "  servers    ": where a block's values start

std::int64_t int_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  return 0;
}

std::string string_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

const bj::object* object_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  return v ? v->if_object() : nullptr;
}

std::string labelled(std::string_view label) {
  std::string out = "  " + std::string(label);
  out.resize(kLabel, ' ');
  return out;
}

// "127.0.0.1:3344", "[::1]:3344".
std::string address_of(const RegistryEntry& e) {
  return e.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", e.host, e.port)
                                               : fmt::format("{}:{}", e.host, e.port);
}

std::string heading(const GatewayStatus& g) {
  std::string line = fmt::format("pid {}  {}", g.entry.pid, g.entry.kind);
  if (g.entry.kind == "http") line += "  " + address_of(g.entry);
  if (!g.entry.version.empty()) line += "  sluice " + g.entry.version;
  if (g.document) {
    line += "  up " + uptime_text(int_of(*g.document, "uptime_ms"));
  } else {
    line += "  started " + core::utc_text(std::chrono::system_clock::time_point(
                               std::chrono::milliseconds(g.entry.started_unix_ms)));
  }
  return line;
}

std::string clients_text(const bj::object& doc) {
  std::string text;
  std::size_t count = 0;
  if (const bj::value* clients = doc.if_contains("clients"); clients && clients->is_array()) {
    for (const bj::value& c : clients->get_array()) {
      if (!c.is_object()) continue;
      std::string one = string_of(c.get_object(), "name");
      if (one.empty()) one = "(no name)";
      if (std::string version = string_of(c.get_object(), "version"); !version.empty()) {
        one += " " + version;
      }
      text += (count++ ? ", " : "") + one;
    }
  }
  if (std::int64_t more = int_of(doc, "clients_not_listed"); more > 0) {
    text += fmt::format(" and {} more", more);
  }
  return count ? text : std::string("none yet (no initialize)");
}

std::string servers_text(const bj::object& summary) {
  std::string text = fmt::format("{} online of {}", int_of(summary, "servers_online"),
                                 int_of(summary, "servers_total"));
  if (const bj::object* by = object_of(summary, "servers_by_status"); by && !by->empty()) {
    std::string parts;
    for (const auto& entry : *by) {
      if (!entry.value().is_int64() && !entry.value().is_uint64()) continue;
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", int_of(*by, entry.key()),
                           std::string_view(entry.key()));
    }
    text += " (" + parts + ")";
  }
  return text;
}

std::string http_text(const HttpCheck& http) {
  if (!http.answered) return "/health did not answer: " + http.problem;
  std::string text = fmt::format("/health answers (HTTP {})", http.status);
  if (http.sessions >= 0) text += fmt::format(", {} session(s)", http.sessions);
  if (http.token == "accepted") {
    text += ", the token was accepted";
  } else if (http.token == "not_given") {
    text += "; its details need the token (SLUICE_AUTH_TOKEN or --auth-token)";
  } else if (http.token == "not_accepted") {
    text += "; the token given was not accepted";
  }
  return text;
}

void add_restarts(const bj::object& summary, std::vector<std::string>& lines) {
  const bj::value* list = summary.if_contains("restart_required");
  if (!list || !list->is_array() || list->get_array().empty()) {
    lines.push_back(labelled("restart") + "not required");
    return;
  }
  for (const bj::value& item : list->get_array()) {
    if (!item.is_object()) continue;
    const bj::object& r = item.get_object();
    std::string who = string_of(r, "server");
    std::string what = (who.empty() ? "required for sluice: " : "required for " + who + ": ") +
                       string_of(r, "reason");
    for (auto& l : wrap(labelled("restart"), what, kLabel)) lines.push_back(std::move(l));
    for (auto& l : wrap(std::string(kLabel, ' ') + "next: ", string_of(r, "next_step"), kLabel)) {
      lines.push_back(std::move(l));
    }
  }
}

}  // namespace

bool unreachable(const GatewayStatus& g) {
  if (!g.document) return true;
  return g.http.asked && (!g.http.answered || g.http.token == "not_accepted");
}

std::string uptime_text(std::int64_t ms) {
  const std::int64_t s = ms / 1000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d{:02}h", s / 86400, s % 86400 / 3600);
}

std::vector<std::string> wrap(std::string_view first, std::string_view text, std::size_t indent,
                              std::size_t width) {
  std::vector<std::string> lines;
  std::string line(first);
  bool empty_line = true;  // nothing of `text` on this line yet
  auto next_line = [&] {
    lines.push_back(std::move(line));
    line.assign(indent, ' ');
    empty_line = true;
  };
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    const std::size_t needed = word.size() + (empty_line ? 0 : 1);
    if (!empty_line && line.size() + needed > width) next_line();
    while (line.size() + word.size() > width && width > line.size()) {
      const std::size_t room = width - line.size();
      line += word.substr(0, room);
      word.remove_prefix(room);
      next_line();
    }
    if (!empty_line) line += ' ';
    line += word;
    empty_line = false;
  }
  lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> render_gateway(const GatewayStatus& g) {
  std::vector<std::string> lines{heading(g)};
  if (!g.document) {
    for (auto& l : wrap("  not reached: ", g.problem, kLabel)) lines.push_back(std::move(l));
    return lines;
  }
  const bj::object& doc = *g.document;
  lines.push_back(labelled(g.entry.kind == "http" ? "clients" : "client") + clients_text(doc));
  if (g.http.asked) {
    for (auto& l : wrap(labelled("http"), http_text(g.http), kLabel)) lines.push_back(std::move(l));
  }
  static const bj::object kNone;
  const bj::object* summary = object_of(doc, "summary");
  if (!summary) summary = &kNone;
  for (auto& l : wrap(labelled("servers"), servers_text(*summary), kLabel)) {
    lines.push_back(std::move(l));
  }
  lines.push_back(labelled("calls") + fmt::format("{} in flight, {} abandoned",
                                                  int_of(*summary, "calls_in_flight"),
                                                  int_of(*summary, "abandoned")));
  add_restarts(*summary, lines);
  return lines;
}

bj::object gateway_json(const GatewayStatus& g) {
  bj::object out;
  if (g.document) {
    out = *g.document;
    out["reachable"] = true;
  } else {
    out["pid"] = g.entry.pid;
    out["kind"] = g.entry.kind;
    out["version"] = g.entry.version;
    out["started_at"] = core::utc_text(
        std::chrono::system_clock::time_point(std::chrono::milliseconds(g.entry.started_unix_ms)));
    out["reachable"] = false;
    out["problem"] = g.problem;
  }
  if (g.http.asked) {
    bj::object http{{"answered", g.http.answered}};
    if (g.http.answered) {
      http["status"] = g.http.status;
      http["sessions"] = g.http.sessions >= 0 ? bj::value(g.http.sessions) : bj::value(nullptr);
      http["token"] = g.http.token;
    } else {
      http["problem"] = g.http.problem;
    }
    out["http_health"] = std::move(http);
  }
  return out;
}

}  // namespace sluice::cli
