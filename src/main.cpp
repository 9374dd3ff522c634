// sluice: one MCP server in front of many. main() only dispatches to the CLI.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return sluice::cli::run(argc, argv); }
