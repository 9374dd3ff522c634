#include "gateway/policy/access.hpp"

#include "core/describe.hpp"
#include "gateway/gateway.hpp"
#include "gateway/meta/meta_tools.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

namespace sluice::gateway {
namespace bj = boost::json;

std::string meta_tools_list_for(const config::AccessPolicy& access) {
  if (access.allow.meta_tools.empty() && access.deny.meta_tools.empty()) {
    return meta::meta_tools_list();
  }
  bj::value list = bj::parse(meta::meta_tools_list());
  bj::array& tools = list.at("tools").as_array();
  for (auto it = tools.begin(); it != tools.end();) {
    const bj::string& name = it->at("name").as_string();
    if (access.allows(config::Subject::meta_tools, {}, name)) {
      ++it;
    } else {
      it = tools.erase(it);
    }
  }
  return bj::serialize(list);
}

std::string withheld_refusal(std::string_view what, std::string_view reason) {
  return fmt::format("{} is withheld by the operator's policy: {}", what, reason);
}

std::string Gateway::meta_tool_denial(std::string_view name) const {
  const config::AccessPolicy& access = config_->policy.access;
  if (access.allow.meta_tools.empty() && access.deny.meta_tools.empty()) return {};
  std::string why = access.denial(config::Subject::meta_tools, {}, name);
  return why.empty() ? why : withheld_refusal(core::show_name(name), why);
}

}  // namespace sluice::gateway
