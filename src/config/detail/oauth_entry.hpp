#pragma once
// The optional "oauth" object of a remote server's entry (see OAuthSettings in
// gateway_config.hpp and docs/configuration.md). Not part of the config interface.
// Pure function; problems are value-free (the JSON path and the kind of problem).
#include "config/detail/fields.hpp"
#include "config/gateway_config.hpp"
#include "core/error.hpp"

#include <boost/json/value.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace sluice::config::detail {

// Expands `${VAR}` references in a header-like text (the client secret), noting the missing
// variables as the server entry's other fields do.
using SecretExpander = std::function<std::string(std::string_view)>;

core::Result<OAuthSettings> parse_oauth(const boost::json::value& v, const Where& at,
                                        const SecretExpander& expand);

}  // namespace sluice::config::detail
