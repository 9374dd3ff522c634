#pragma once
// `sluice logs [--http | --pid N | --file FILE] [-f] [--server NAME] [-n N] | --list [--json]`:
// the log of a stdio gateway (the newest run by default) or of the HTTP service, read from the
// logs folder of the state directory (log_files.hpp, written as run_log.hpp says), every line
// escaped for the terminal (log_reader.hpp).
//
// Exit codes: 0 printed, 1 no log found (the message says where it looked), 2 usage error.
// Threading: the calling (main) thread.
#include "cli/serve.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sluice::cli {

// What the command line says about `logs`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct LogsLine {
  CLI::App* command = nullptr;
  CommonOptions options;  // --state-dir
  bool http = false;      // --http
  int pid = 0;            // --pid
  std::string file;       // --file
  bool list = false;      // --list
  bool json = false;      // --list --json
  bool follow = false;    // -f
  std::string server;     // --server
  std::size_t last = 0;   // -n, when given
  CLI::Option* last_option = nullptr;
};

// Adds `logs` to `app`.
void add_logs_command(CLI::App& app, LogsLine& line);

// The exit code of `logs` when the line names it; nullopt when it does not.
std::optional<int> run_logs_command(const LogsLine& line);

}  // namespace sluice::cli
