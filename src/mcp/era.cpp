#include "mcp/era.hpp"

#include "core/ascii.hpp"
#include "core/json.hpp"
#include "mcp/protocol.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace sluice::mcp {
namespace bj = boost::json;

namespace {

// The object that `text` is, if it is one.
std::optional<boost::json::object> object_of(std::string_view text) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.get_object());
}

// `params` with the member value `existing` (a view into it) replaced by `meta`.
std::string spliced(std::string_view params, std::string_view existing,
                    const boost::json::object& meta) {
  const auto at = static_cast<std::size_t>(existing.data() - params.data());
  std::string out(params.substr(0, at));
  out += boost::json::serialize(meta);
  out += params.substr(at + existing.size());
  return out;
}

constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

EraRefusal invalid_meta(std::string_view what) {
  return EraRefusal{
      rpc::code::kInvalidParams, "Invalid params: _meta " + std::string(what), {}, 400};
}

std::string supported_versions_json() {
  std::string out = "[";
  for (auto v : kSupportedVersions) {
    out += core::json::quote(v);
    out += ',';
  }
  out += core::json::quote(kStatelessVersion);
  out += ']';
  return out;
}

}  // namespace

std::optional<std::size_t> log_level_rank(std::string_view level) {
  for (std::size_t i = 0; i < kLogLevels.size(); ++i) {
    if (kLogLevels[i] == level) return i;
  }
  return std::nullopt;
}

std::string_view required_client_capability(std::string_view method) {
  if (method == "sampling/createMessage") return "sampling";
  if (method == "elicitation/create") return "elicitation";
  if (method == "roots/list") return "roots";
  return {};
}

bool served_statelessly(std::string_view method) {
  static constexpr std::array<std::string_view, 13> kServed = {
      "server/discover",     "tools/list",           "tools/call",     "prompts/list",
      "prompts/get",         "resources/list",       "resources/read", "resources/templates/list",
      "completion/complete", "subscriptions/listen", "tasks/get",      "tasks/update",
      "tasks/cancel"};
  for (auto m : kServed) {
    if (m == method) return true;
  }
  return false;
}

RequestEra classify(const rpc::Message& request, bool stateless,
                    std::optional<std::string_view> header_version) {
  RequestEra era;
  const bj::object* params = request.params_object();
  const bj::value* meta = params ? params->if_contains("_meta") : nullptr;
  const bj::object* fields = meta ? meta->if_object() : nullptr;
  const bj::value* version = fields ? fields->if_contains(meta_key::kProtocolVersion) : nullptr;
  if (version && version->is_string() && is_supported_version(version->get_string())) {
    return era;  // a stateful revision named in _meta: the stateful era's rules apply
  }
  // Without a protocolVersion, the revision's other keys still say which era a request is
  // of (over stdio no header does).
  const bool modern_keys =
      fields && (fields->contains(meta_key::kClientCapabilities) ||
                 fields->contains(meta_key::kClientInfo) || fields->contains(meta_key::kLogLevel));
  if (!version && !stateless && !modern_keys) return era;
  era.stateless = true;
  if (!fields) {
    era.refusal = invalid_meta("is required");
    return era;
  }
  if (!version || !version->is_string()) {
    era.refusal = invalid_meta("io.modelcontextprotocol/protocolVersion must be a string");
    return era;
  }
  era.version = std::string(version->get_string());
  if (header_version && *header_version != era.version) {
    era.refusal = EraRefusal{era_code::kHeaderMismatch,
                             "Header mismatch: MCP-Protocol-Version differs from the _meta version",
                             {},
                             400};
    return era;
  }
  if (era.version != kStatelessVersion) {
    era.refusal = EraRefusal{era_code::kUnsupportedProtocolVersion, "Unsupported protocol version",
                             R"({"supported":)" + supported_versions_json() + R"(,"requested":)" +
                                 core::json::quote(era.version) + "}",
                             400};
    return era;
  }
  const bj::value* caps = fields->if_contains(meta_key::kClientCapabilities);
  if (!caps || !caps->is_object()) {
    era.refusal = invalid_meta("io.modelcontextprotocol/clientCapabilities must be an object");
    return era;
  }
  era.tasks = declares_tasks(request);
  if (const bj::value* info = fields->if_contains(meta_key::kClientInfo);
      info && !info->is_object()) {
    era.refusal = invalid_meta("io.modelcontextprotocol/clientInfo must be an object");
    return era;
  }
  if (const bj::value* level = fields->if_contains(meta_key::kLogLevel)) {
    if (!level->is_string() || !log_level_rank(level->get_string())) {
      era.refusal = invalid_meta("io.modelcontextprotocol/logLevel is not a log level");
      return era;
    }
    era.log_level = std::string(level->get_string());
  }
  if (!served_statelessly(request.method())) {
    era.refusal = EraRefusal{rpc::code::kMethodNotFound, "Method not found", {}, 404};
  }
  return era;
}

bool declares_tasks(const rpc::Message& request) {
  const bj::object* params = request.params_object();
  const bj::value* meta = params ? params->if_contains("_meta") : nullptr;
  const bj::object* fields = meta ? meta->if_object() : nullptr;
  const bj::value* caps = fields ? fields->if_contains(meta_key::kClientCapabilities) : nullptr;
  const bj::object* declared = caps ? caps->if_object() : nullptr;
  const bj::value* extensions = declared ? declared->if_contains("extensions") : nullptr;
  return extensions && extensions->is_object() &&
         extensions->get_object().contains(kTasksExtension);
}

EraRefusal tasks_not_declared() {
  return EraRefusal{era_code::kMissingRequiredClientCapability,
                    "Missing required client capability: the tasks extension",
                    fmt::format(R"({{"requiredCapabilities":{{"extensions":{{{}:{{}}}}}}}})",
                                core::json::quote(kTasksExtension)),
                    400};
}

std::string refusal_error(const EraRefusal& refusal) {
  std::string error = R"({"code":)";
  error += std::to_string(refusal.code);
  error += R"(,"message":)";
  error += core::json::quote(refusal.message);
  if (!refusal.data_json.empty()) {
    error += R"(,"data":)";
    error += refusal.data_json;
  }
  error += '}';
  return error;
}

std::string refusal_frame(std::string_view id_json, const EraRefusal& refusal) {
  std::string frame = R"({"jsonrpc":"2.0","id":)";
  frame += id_json.empty() ? std::string_view("null") : id_json;
  frame += R"(,"error":)";
  frame += refusal_error(refusal);
  frame += '}';
  return frame;
}

std::string with_members(std::string_view result_json, const std::vector<ResultMember>& members) {
  std::string_view body = core::json::trim(result_json);
  if (body.size() < 2 || body.front() != '{') return std::string(result_json);
  std::string out = "{";
  for (const auto& m : members) {
    if (core::json::member_span(body, m.key)) continue;
    if (out.size() > 1) out += ',';
    out += core::json::quote(m.key);
    out += ':';
    out += m.value_json;
  }
  std::string_view rest = core::json::trim(body.substr(1));
  if (out.size() > 1 && rest.front() != '}') out += ',';
  out += rest;
  return out;
}

std::string with_request_meta(std::string_view params_json, const boost::json::object& meta) {
  std::string_view body = core::json::trim(params_json);
  if (body.empty()) body = "{}";
  if (body.front() != '{') return std::string(params_json);
  auto existing = core::json::member_span(body, "_meta");
  boost::json::object merged;
  if (existing) merged = object_of(*existing).value_or(boost::json::object());
  for (const auto& member : meta) merged[member.key()] = member.value();
  if (existing) return spliced(body, *existing, merged);
  return with_members(body, {{"_meta", boost::json::serialize(merged)}});
}

bool param_headers_of(const boost::json::object& tool,
                      std::vector<std::pair<std::string, std::string>>& out) {
  out.clear();
  const auto* schema = tool.if_contains("inputSchema");
  const auto* properties =
      schema && schema->is_object() ? schema->get_object().if_contains("properties") : nullptr;
  if (!properties || !properties->is_object()) return true;
  auto token = [](std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
  };
  std::vector<std::string> seen;
  for (const auto& [property, definition] : properties->get_object()) {
    const auto* spec = definition.if_object();
    const auto* header = spec ? spec->if_contains("x-mcp-header") : nullptr;
    if (!header) continue;
    const auto* type = spec->if_contains("type");
    const bool primitive = type && type->is_string() &&
                           (type->get_string() == "string" || type->get_string() == "integer" ||
                            type->get_string() == "boolean");
    if (!header->is_string() || !token(header->get_string()) || !primitive) return false;
    std::string key = core::ascii::lowered(header->get_string());
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return false;
    seen.push_back(std::move(key));
    out.emplace_back(std::string(property), std::string(header->get_string()));
  }
  return true;
}

std::string without_meta_member(std::string_view params_json, std::string_view key) {
  auto existing = core::json::member_span(params_json, "_meta");
  if (!existing || !core::json::member_span(*existing, key)) return std::string(params_json);
  std::optional<boost::json::object> meta = object_of(*existing);
  if (!meta) return std::string(params_json);
  meta->erase(key);
  return spliced(params_json, *existing, *meta);
}

std::vector<ResultMember> stateless_result_members(std::string_view method,
                                                   std::int64_t tools_ttl_ms) {
  std::vector<ResultMember> members{{"resultType", R"("complete")"}};
  if (method == "tools/list" || method == "prompts/list" || method == "resources/list" ||
      method == "resources/templates/list" || method == "server/discover") {
    members.push_back({"ttlMs", method == "tools/list" ? std::to_string(tools_ttl_ms) : "0"});
    members.push_back({"cacheScope", R"("public")"});
  } else if (method == "resources/read") {
    members.push_back({"ttlMs", "0"});
    members.push_back({"cacheScope", R"("private")"});
  }
  return members;
}

std::string stateless_error(const rpc::Message& request, std::string_view error_json) {
  constexpr std::int64_t kRetiredResourceNotFound = -32002;
  if (request.method() != "resources/read") return std::string(error_json);
  boost::system::error_code ec;
  bj::value error = bj::parse(error_json, ec);
  bj::object* fields = ec ? nullptr : error.if_object();
  const bj::value* code = fields ? fields->if_contains("code") : nullptr;
  if (!code || !code->is_int64() || code->get_int64() != kRetiredResourceNotFound) {
    return std::string(error_json);
  }
  (*fields)["code"] = rpc::code::kInvalidParams;
  bj::value& data = (*fields)["data"];
  if (!data.is_object()) data = bj::object();
  if (!data.as_object().contains("uri")) {
    const bj::object* params = request.params_object();
    const bj::value* uri = params ? params->if_contains("uri") : nullptr;
    if (uri) data.as_object()["uri"] = *uri;
  }
  return bj::serialize(error);
}

}  // namespace sluice::mcp
