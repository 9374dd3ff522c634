#pragma once
// The "sluice" blocks of an `.mcp.json` file: the top-level one (gateway-wide admission
// settings) and the one of a server entry (its budgets). Not part of the config interface.
// Pure functions.
#include "config/detail/fields.hpp"
#include "config/gateway_config.hpp"
#include "config/mcp_json.hpp"
#include "core/error.hpp"

#include <boost/json/value.hpp>

namespace sluice::config::detail {

// The top-level "sluice" object: gateway-wide admission settings, each optional.
core::Result<FilePolicy> parse_gateway_policy(const boost::json::value& v);

// The "sluice" object of one server entry, at `at`: its default budget and per-tool budgets.
// Tool names are the downstream's, not fixed keys of the format, so paths say `entry`.
core::Result<ServerPolicy> parse_server_policy(const boost::json::value& v, const Where& at);

}  // namespace sluice::config::detail
