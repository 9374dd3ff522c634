#pragma once
// `sluice doctor [--json] [--host H] [--port N] [discovery options]`: checks the setup and
// explains each problem with the command that fixes it (docs/doctor.md lists every check).
//
// It reads the configuration as `sluice serve` would (the same discovery, variables from the
// environment then the secrets store), the state and secrets directories, the HTTP port and
// /proc; it never starts a server, writes a file or signals a process. Output is value-free:
// names, paths, modes and counts, never a variable's, header's or secret's value. Human output
// is escaped (core::display_safe) and fits 80 columns; --json is byte-exact.
// Exit codes: 0 when no check failed (warnings allowed), 1 when one did, 2 for a usage error.
// Threading: the calling (main) thread, synchronously.
#include "cli/serve.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::cli {

// What the command line says about `doctor`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct DoctorLine {
  CLI::App* command = nullptr;
  CommonOptions options;  // discovery, state directory and limit flags (add_common in cli.cpp)
  std::string host = transport::HttpOptions{}.host;    // the HTTP service's address to check
  std::uint16_t port = transport::HttpOptions{}.port;  // and its port
  bool json = false;
};

// Adds `doctor` and its own options (--json, --host, --port) to `app`; the caller adds the
// common options to line.command.
void add_doctor_command(CLI::App& app, DoctorLine& line);

// The exit code of `doctor` when the line names it; nullopt otherwise.
std::optional<int> run_doctor_command(const DoctorLine& line);

}  // namespace sluice::cli
