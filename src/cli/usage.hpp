#pragma once
// Usage errors of the command line, as a person needs them: what was wrong, named by the
// option or command it concerns (an unknown one by its name only when that is a plain
// identifier), with the valid values or range; never the rejected value (errors are
// value-free) and never the parser's own names. Every usage error exits kUsageExit; --help
// and --version exit 0.
//
// The parser (CLI11) runs with extras allowed, so that arguments nobody takes stay available
// to unclaimed_argument() instead of becoming an error text that repeats them.
#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sluice::cli {

inline constexpr int kUsageExit = 2;

// Accepts exactly one of `choices`. Its description is empty (the option's help names the
// choices, once); a usage error lists them.
CLI::Validator one_of(std::vector<std::string> choices);

// What was wrong, and the command whose help to point at. No problem: `problem` is empty.
struct UsageProblem {
  std::string problem;
  const CLI::App* where = nullptr;
};

// The problem of a parse of `app` that threw `error`.
UsageProblem parse_problem(CLI::App& app, const CLI::ParseError& error);

// After a parse of `app`: the first argument no option or command took, or a top-level option
// given together with a command (only the command's own options are read).
UsageProblem unclaimed_argument(CLI::App& app);

// Prints "sluice: <problem>; see `sluice [command] --help`" (escaped) and returns kUsageExit.
int usage_error(const UsageProblem& usage);

}  // namespace sluice::cli
