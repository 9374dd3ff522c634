#pragma once
// What `sluice status` learned of one running gateway, and the two ways it shows it: a block
// of lines that fit 80 columns (each printed through core::display_safe by the caller) and the
// gateway's JSON document (byte-exact: never escaped for a terminal).
// Threading: pure functions of the calling thread.
#include "cli/gateway_registry.hpp"

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace sluice::cli {

// The HTTP service's own /health, asked on its port.
struct HttpCheck {
  bool asked = false;     // an HTTP service
  bool answered = false;  // an HTTP response came back
  int status = 0;
  std::int64_t sessions = -1;  // -1: not said
  // "not_required" (the service has no token), "accepted", "not_given", "not_accepted".
  std::string token;
  std::string problem;  // why it did not answer (value-free)
};

struct GatewayStatus {
  RegistryEntry entry;
  std::optional<boost::json::object> document;  // the status socket's answer
  std::string problem;                          // why there is no document (value-free)
  HttpCheck http;
};

// Whether this gateway counts as not reached (exit code 1).
bool unreachable(const GatewayStatus& g);

// The lines of one gateway's block (no escaping yet).
std::vector<std::string> render_gateway(const GatewayStatus& g);

// The gateway's document as `--json` prints it: the socket's document with "reachable" (and,
// for an HTTP service, "http_health"), or what the entry says and why it was not reached.
boost::json::object gateway_json(const GatewayStatus& g);

// "3s", "4m05s", "2h10m", "3d04h".
std::string uptime_text(std::int64_t ms);

// `text` in lines of at most `width` columns, the first after `first`, the next after
// `indent` spaces (a word longer than a line is cut).
std::vector<std::string> wrap(std::string_view first, std::string_view text, std::size_t indent,
                              std::size_t width = 80);

}  // namespace sluice::cli
