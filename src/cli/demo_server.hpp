#pragma once
// `sluice demo-server`: a small, friendly MCP server on stdin/stdout that `sluice demo` runs
// as its downstream. Tools: echo, word_count, add, reverse, now, uuid. Blocking and
// single-threaded (mcp::StdioServer); writes nothing but MCP frames to stdout.
namespace sluice::cli {

// Serves until stdin closes. Returns the process exit code (0 at EOF).
int run_demo_server();

}  // namespace sluice::cli
