#pragma once
// The operator's allow and deny lists (config::AccessPolicy) applied to what the gateway
// offers of its own: the meta-tools. A withheld meta-tool is absent from tools/list and
// refused by name (the refusal names the rule). Downstream servers, tools, prompts and
// resources are withheld where they enter: servers by discover(), list entries when a
// listing is taken (DownstreamPeer), requests that name one by the Fleet and the
// AggregateRouter.
// Pure functions.
#include "config/access_policy.hpp"

#include <string>
#include <string_view>

namespace sluice::gateway {

// The tools/list result text of the meta-tools `access` does not withhold.
std::string meta_tools_list_for(const config::AccessPolicy& access);

// The refusal of something the policy withholds: "<what> is withheld by the operator's
// policy: <reason>".
std::string withheld_refusal(std::string_view what, std::string_view reason);

}  // namespace sluice::gateway
