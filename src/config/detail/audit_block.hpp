#pragma once
// The "audit" object of the top-level "sluice" block: the persistent audit log's file and
// rotation (docs/configuration.md). Not part of the config interface. Pure function.
#include "config/detail/fields.hpp"
#include "config/gateway_config.hpp"
#include "core/error.hpp"

#include <boost/json/value.hpp>

namespace sluice::config::detail {

// "maxBytes": 4 KiB to 1 TiB; "keep": 0 (no rotated file kept) to 100.
inline constexpr Range kAuditMaxBytesRange{4096, 1ull << 40};
inline constexpr Range kAuditKeepRange{0, 100};

// {"file": "/absolute/path" | false, "maxBytes": N, "keep": N}, each key optional.
core::Result<AuditSettings> parse_audit(const boost::json::value& v, const Where& at);

}  // namespace sluice::config::detail
