#include "mcp/protocol.hpp"

#include "core/json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

namespace sluice::mcp {

std::optional<std::string> requested_version(std::string_view params_json) {
  std::optional<std::string_view> member = core::json::member_span(params_json, "protocolVersion");
  if (!member) return std::nullopt;
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(*member, ec);
  if (ec || !v.is_string()) return std::nullopt;
  return std::string(v.get_string());
}

std::string_view negotiate(std::string_view requested, std::span<const std::string_view> offered) {
  auto match = std::find(offered.begin(), offered.end(), requested);
  if (match != offered.end()) return *match;
  return *std::max_element(offered.begin(), offered.end());
}

std::string_view negotiate_initialize(std::string_view params_json) {
  return negotiate(requested_version(params_json).value_or(std::string()));
}

}  // namespace sluice::mcp
