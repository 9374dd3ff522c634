#include "mcp/tool_result.hpp"

#include "core/json.hpp"

#include <boost/json/serialize.hpp>

namespace sluice::mcp {

namespace {
constexpr std::string_view kHead = R"({"content":[{"type":"text","text":)";
}  // namespace

std::string text_result(std::string_view text, bool is_error) {
  std::string quoted = core::json::quote(text);
  std::string out;
  out.reserve(kHead.size() + quoted.size() + 20);
  out += kHead;
  out += quoted;
  out += "}]";
  if (is_error) out += R"(,"isError":true)";
  out += '}';
  return out;
}

std::string structured_result(std::string_view text, std::string_view structured_json) {
  std::string quoted = core::json::quote(text);
  std::string out;
  out.reserve(kHead.size() + quoted.size() + structured_json.size() + 30);
  out += kHead;
  out += quoted;
  out += R"(}],"structuredContent":)";
  out += structured_json;
  out += '}';
  return out;
}

std::string structured_result(const boost::json::value& structured) {
  std::string body = boost::json::serialize(structured);
  return structured_result(body, body);
}

}  // namespace sluice::mcp
