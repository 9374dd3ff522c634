#include "transport/era_headers.hpp"

#include "core/ascii.hpp"
#include "core/json.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace sluice::transport {
namespace cj = core::json;

namespace {

constexpr std::string_view kBase64Open = "=?base64?";
constexpr std::string_view kBase64Close = "?=";

using cj::string_member;

// The Mcp-Param-<name> headers of a tools/call (see add_era_headers): a string as its text
// (encoded), an integer or a boolean as its JSON text; null and structures are left out.
void add_param_headers(HttpFields& headers, std::string_view params,
                       const mcp::ParamHeaders& known) {
  auto tool = string_member(params, "name");
  auto found = tool ? known.find(*tool) : known.end();
  if (found == known.end()) return;
  auto arguments = cj::member_span(params, "arguments");
  for (const auto& [property, header] : found->second) {
    auto value = arguments ? cj::member_span(*arguments, property) : std::nullopt;
    if (!value) continue;
    const std::string_view raw = cj::trim(*value);
    std::string scratch;
    if (auto text = cj::string_value(raw, scratch)) {
      headers.emplace_back("Mcp-Param-" + header, encode_header_value(*text));
    } else if (raw != "null" && !raw.empty() && raw.front() != '{' && raw.front() != '[') {
      headers.emplace_back("Mcp-Param-" + header, std::string(raw));
    }
  }
}

}  // namespace

std::optional<std::string> decode_header_value(std::string_view value) {
  if (value.size() < kBase64Open.size() + kBase64Close.size() ||
      value.substr(0, kBase64Open.size()) != kBase64Open ||
      value.substr(value.size() - kBase64Close.size()) != kBase64Close) {
    return std::string(value);
  }
  std::string_view b64 =
      value.substr(kBase64Open.size(), value.size() - kBase64Open.size() - kBase64Close.size());
  if (b64.size() % 4 != 0) return std::nullopt;
  std::string out(b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding's bytes as zeros: drop one per '='.
  std::size_t padding = 0;
  for (auto it = b64.rbegin(); it != b64.rend() && *it == '=' && padding < 2; ++it) ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

std::string encode_header_value(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  const bool plain =
      std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; }) &&
      (text.empty() || (!space(text.front()) && !space(text.back())));
  if (plain) return std::string(text);
  std::string out(4 * ((text.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return std::string(kBase64Open) + out + std::string(kBase64Close);
}

std::string_view name_member(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel")
    return "taskId";
  return {};
}

bool add_era_headers(HttpFields& headers, std::optional<std::string_view> params_text,
                     std::string_view method, bool is_request, bool modern,
                     const mcp::ParamHeaders* params) {
  if (method.empty()) return false;  // a response to the server's own request
  if (is_request) {
    auto meta = params_text ? cj::member_span(*params_text, "_meta") : std::nullopt;
    auto version = meta ? string_member(*meta, mcp::meta_key::kProtocolVersion) : std::nullopt;
    if (version != mcp::kStatelessVersion) return false;
  } else if (!modern) {
    return false;
  }
  std::erase_if(
      headers, [](const auto& h) { return core::ascii::iequals(h.first, "MCP-Protocol-Version"); });
  headers.emplace_back("MCP-Protocol-Version", std::string(mcp::kStatelessVersion));
  headers.emplace_back("Mcp-Method", std::string(method));
  if (!is_request) return true;
  if (std::string_view key = name_member(method); !key.empty()) {
    if (auto name = string_member(*params_text, key)) {
      headers.emplace_back("Mcp-Name", encode_header_value(*name));
    }
  }
  if (method == "tools/call" && params) add_param_headers(headers, *params_text, *params);
  return true;
}

}  // namespace sluice::transport
