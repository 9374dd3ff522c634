#pragma once
// Where the Streamable HTTP front end listens and whom it serves: the one set of HTTP
// settings and their defaults, filled by `sluice serve --transport http` and read by
// HttpServer. Its bounds (sessions, timeouts, rates, caps) are core::Limits fields.
// A plain value: no HTTP library here, so the command line can include it cheaply.
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::transport {

struct HttpOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 3344;  // 0: any free one
  // Bearer token required on /mcp and /metrics (and for /health details); empty: none.
  std::string auth_token;
  // Host names accepted in Host and Origin besides localhost, 127.0.0.1 and [::1].
  std::vector<std::string> allowed_hosts;
  // Origins accepted exactly as given (scheme://host[:port]).
  std::vector<std::string> allowed_origins;
};

}  // namespace sluice::transport
