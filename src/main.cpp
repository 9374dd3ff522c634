// sluice: one MCP server in front of many. main() only dispatches to the CLI, behind the
// last boundary: an exception nothing else caught ends the process with a clear message
// (after the stack unwound, so every owned child was torn down by its owner).
#include "cli/cli.hpp"
#include "core/spawn.hpp"

#include <exception>

int main(int argc, char** argv) {
  try {
    return sluice::cli::run(argc, argv);
  } catch (...) {
    return sluice::core::report_fatal(std::current_exception());
  }
}
