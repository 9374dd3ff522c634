#include "cli/logs.hpp"

#include "cli/log_files.hpp"
#include "cli/log_reader.hpp"
#include "cli/usage.hpp"
#include "config/mcp_json.hpp"

#include <fmt/format.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <system_error>
#include <vector>

namespace sluice::cli {
namespace bj = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFooter = R"(Examples:
  sluice logs                     the newest stdio gateway's log
  sluice logs -f --server github  follow it, only the lines about server github
  sluice logs --http -n 50        the last 50 lines of the HTTP service's log
  sluice logs --list              every log kept, with its pid, size and status
  sluice logs --pid 4242          the log of the stdio gateway with pid 4242

A stdio gateway (sluice, sluice serve) logs to its own file in the logs
folder of the state directory, the HTTP service to http.log there, unless
--log-file says otherwise; what servers write to their stderr is logged
with --log-level debug.

Exit codes:
  0  printed (or listed)
  1  no log found (it says where it looked)
  2  usage error)";

std::uint64_t size_of(const RunLog& run) {
  std::uint64_t total = 0;
  for (const fs::path& part : run.parts) {
    std::error_code ec;
    std::uintmax_t n = fs::file_size(part, ec);
    if (!ec) total += n;
  }
  return total;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024 * 1024));
}

// "20261201T235546.123Z" as ISO 8601: "2026-12-01T23:55:46.123Z".
std::string started_iso(const RunLog& run) {
  const std::string& s = run.started;
  return fmt::format("{}-{}-{}T{}:{}:{}{}", s.substr(0, 4), s.substr(4, 2), s.substr(6, 2),
                     s.substr(9, 2), s.substr(11, 2), s.substr(13, 2), s.substr(15));
}

int print_list_json(const fs::path& dir, const std::vector<RunLog>& runs) {
  bj::array logs;
  for (const RunLog& run : runs) {
    bj::object o;
    const bool stdio = run.kind == RunLog::Kind::stdio;
    o["kind"] = stdio ? "stdio" : "http";
    if (stdio) {
      o["pid"] = run.pid;
      o["started"] = started_iso(run);
      o["running"] = sluice_running(run.pid);
    }
    o["bytes"] = size_of(run);
    bj::array files;
    for (const fs::path& part : run.parts) files.emplace_back(part.string());
    o["files"] = std::move(files);
    logs.push_back(std::move(o));
  }
  std::string out = bj::serialize(bj::object{{"logs_dir", dir.string()}, {"logs", logs}});
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return runs.empty() ? 1 : 0;
}

int print_list(const fs::path& dir, const std::vector<RunLog>& runs) {
  if (runs.empty()) {
    print_err("sluice logs: no logs in " + dir.string());
    return 1;
  }
  print_out("Logs in " + dir.string() + ":");
  print_out(fmt::format("{:<6} {:<8} {:<20} {:<10} {}", "KIND", "PID", "STARTED (UTC)", "SIZE",
                        "STATUS"));
  for (const RunLog& run : runs) {
    const bool stdio = run.kind == RunLog::Kind::stdio;
    print_out(fmt::format("{:<6} {:<8} {:<20} {:<10} {}", stdio ? "stdio" : "http",
                          stdio ? std::to_string(run.pid) : "-", stdio ? started_text(run) : "-",
                          size_text(size_of(run)),
                          !stdio                    ? "-"
                          : sluice_running(run.pid) ? "running"
                                                    : "ended"));
  }
  return 0;
}

// Where nothing was found, in words.
std::string not_found(const LogsLine& line, const fs::path& dir) {
  if (line.http) {
    return fmt::format(
        "no log of the HTTP service in {} (`sluice serve --transport http` writes {} there "
        "unless --log-file is given)",
        dir.string(), kHttpLogName);
  }
  if (line.pid > 0) {
    return fmt::format("no log of a stdio gateway with pid {} in {} (see `sluice logs --list`)",
                       line.pid, dir.string());
  }
  return fmt::format(
      "no log of a stdio gateway in {} (each run of `sluice` or `sluice serve` writes one "
      "there unless --log-file is given)",
      dir.string());
}

// The log the line asks for among `runs`.
std::optional<RunLog> chosen_log(const LogsLine& line, const std::vector<RunLog>& runs) {
  for (const RunLog& run : runs) {
    if (line.http ? run.kind == RunLog::Kind::http
                  : run.kind == RunLog::Kind::stdio && (line.pid <= 0 || run.pid == line.pid)) {
      return run;
    }
  }
  return std::nullopt;
}

// A usage problem of the options together, or "".
std::string usage_problem(const LogsLine& line) {
  if ((line.http ? 1 : 0) + (line.pid > 0 ? 1 : 0) + (line.file.empty() ? 0 : 1) > 1) {
    return "--http, --pid and --file choose the log: give one of them";
  }
  if (line.json && !line.list) return "--json applies only with --list";
  if (line.list && (line.follow || !line.server.empty() || line.last_option->count() > 0 ||
                    line.pid > 0 || !line.file.empty() || line.http)) {
    return "--list takes no other option but --json and --state-dir";
  }
  if (!line.server.empty() && !config::is_valid_server_name(line.server)) {
    return "--server takes a server name (1 to 64 of A-Z a-z 0-9 _ . -)";
  }
  return "";
}

int print_chosen(const LogsLine& line, ReadRequest request, bool follow) {
  request.server = line.server;
  if (line.last_option->count() > 0) request.last = line.last;
  request.follow = follow;
  print_log(request);
  return 0;
}

}  // namespace

void add_logs_command(CLI::App& app, LogsLine& line) {
  line.command = app.add_subcommand(
      "logs", "Print the log of a stdio gateway (the newest by default) or of the HTTP service");
  CLI::App& c = *line.command;
  c.add_flag("--http", line.http, "The HTTP service's log");
  c.add_option("--pid", line.pid, "The log of the stdio gateway with this pid")
      ->check(CLI::Range(1, 1 << 30))
      ->type_name("PID");
  c.add_option("--file", line.file, "Read this log file (one written with --log-file)")
      ->type_name("FILE");
  c.add_flag("-f,--follow", line.follow,
             "Keep printing lines as they are written, until Ctrl-C (or the run's end)");
  c.add_option("--server", line.server, "Only the lines about this downstream server")
      ->type_name("NAME");
  line.last_option = c.add_option("-n,--lines", line.last, "Only the last N lines")
                         ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}))
                         ->type_name("N");
  c.add_flag("--list", line.list, "List the logs kept: kind, pid, start, size, status");
  c.add_flag("--json", line.json, "With --list: print JSON");
  c.add_option("--state-dir", line.options.state_dir,
               "State directory (default $XDG_STATE_HOME/sluice or ~/.local/state/sluice)")
      ->type_name("DIR");
  c.footer(std::string(kFooter));
}

std::optional<int> run_logs_command(const LogsLine& line) {
  if (line.command == nullptr || !*line.command) return std::nullopt;
  if (std::string problem = usage_problem(line); !problem.empty()) {
    return usage_error({problem, line.command});
  }
  if (!line.file.empty()) {
    std::error_code ec;
    const fs::path file = fs::canonical(line.file, ec);  // the file a link given names
    if (ec || !fs::is_regular_file(file, ec)) {
      print_err("sluice logs: no log file at " + line.file);
      return 1;
    }
    return print_chosen(line, ReadRequest{.file = file}, line.follow);
  }
  const fs::path state = state_dir_of(line.options);
  if (state.empty()) {
    print_err(
        "sluice logs: no state directory to look in: set HOME or XDG_STATE_HOME, or give "
        "--state-dir");
    return 1;
  }
  const fs::path dir = logs_dir_of(state);
  const std::vector<RunLog> runs = list_logs(dir);
  if (line.list) return line.json ? print_list_json(dir, runs) : print_list(dir, runs);
  std::optional<RunLog> run = chosen_log(line, runs);
  if (!run) {
    print_err("sluice logs: " + not_found(line, dir));
    return 1;
  }
  ReadRequest request{.parts = run->parts, .file = run->file};
  if (!request.parts.empty() && request.parts.back() == run->file) request.parts.pop_back();
  bool follow = line.follow;
  if (follow && run->kind == RunLog::Kind::stdio) {
    request.writer = run->pid;
    if (!sluice_running(run->pid)) {
      print_err(fmt::format("sluice logs: the gateway with pid {} has ended: nothing to follow",
                            run->pid));
      follow = false;
    }
  }
  return print_chosen(line, std::move(request), follow);
}

}  // namespace sluice::cli
