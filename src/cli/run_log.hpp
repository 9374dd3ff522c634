#pragma once
// Where a serving gateway logs (`sluice`, `sluice serve`, `sluice serve --transport http`):
// with --log-file, that file (appended, never rotated: it is the operator's); else its file in
// the logs folder of the state directory (log_files.hpp): a stdio gateway's own
// `stdio-<UTC start>-<pid>.log`, the HTTP service's `http.log`, created 0600 in a folder made
// 0700, rotated by size (kLogMaxBytes, kLogRotatedKept parts kept). A stdio gateway first
// removes the oldest runs' files beyond kStdioRunsKept. The log goes to stderr as well when
// stderr is a terminal, systemd's journal (JOURNAL_STREAM names it) or --log-stderr is given;
// otherwise stderr gets only what fails before the log is open. It goes only to stderr when
// there is no state directory or its logs folder cannot be used (said once on stderr). With
// --log-level off nothing is opened.
//
// Threading: the main thread, once, after the startup checks (whose failures go to stderr)
// and before the gateway starts; the log itself never blocks (core/log.hpp).
#include "cli/serve.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>

namespace sluice::cli {

enum class Service { stdio, http };

// --log-stderr and the hidden --log-max-bytes, on the commands that serve.
void add_run_log_options(CLI::App& command, CommonOptions& options);

// Points the log (already configured by setup_logging) at the run's file as above. Returns the
// file it logs to, empty when none.
std::filesystem::path open_run_log(const CommonOptions& options, Service service);

}  // namespace sluice::cli
