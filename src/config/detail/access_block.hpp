#pragma once
// The safety keys of the top-level "sluice" object: "policy" (allow and deny lists) and
// "redact" (secret redaction in tool results). Not part of the config interface. Pure
// functions; every problem is value-free (the path, the kind, the type: never a pattern).
#include "config/access_policy.hpp"
#include "config/detail/fields.hpp"
#include "config/gateway_config.hpp"
#include "core/error.hpp"

#include <boost/json/value.hpp>

namespace sluice::config::detail {

// {"allow": {...}, "deny": {...}}, each with optional "servers", "tools", "prompts",
// "resources" and "metaTools" arrays of patterns (is_valid_pattern).
core::Result<AccessPolicy> parse_access_policy(const boost::json::value& v, const Where& at);

// {"builtIn": bool, "patterns": [RE2 pattern, ...]}; a pattern RE2 cannot compile, or one
// that matches the empty string, is refused.
core::Result<RedactSettings> parse_redact(const boost::json::value& v, const Where& at);

}  // namespace sluice::config::detail
