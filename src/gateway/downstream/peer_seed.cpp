// The lists a peer takes from the catalog cache, and what it keeps of serverInfo for it.
#include "core/json.hpp"
#include "core/log.hpp"
#include "gateway/downstream/peer.hpp"
#include "mcp/era.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

namespace {

constexpr std::size_t kMaxServerInfoBytes = 256;

// A short string of printable ASCII, else empty: it is only ever shown and stored.
std::string plain_string(const bj::value* v) {
  if (!v || !v->is_string() || v->get_string().size() > kMaxServerInfoBytes) return {};
  std::string_view s = v->get_string();
  bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  return plain ? std::string(s) : std::string();
}

// A stored entry, parsed, when it is usable as a live listing's entry would be (a new
// identity is then added to `seen`).
std::optional<bj::value> stored_entry(const std::string& text, std::string_view identity,
                                      const cj::ParseLimits& limits,
                                      std::unordered_set<std::string>& seen) {
  auto parsed = cj::parse_strict(text, limits);
  if (!parsed || !entry_problem(*parsed, identity, seen).empty()) return std::nullopt;
  seen.emplace(parsed->get_object().at(identity).get_string());
  return std::move(*parsed);
}

}  // namespace

void DownstreamPeer::read_server_info(std::string_view initialize_result) {
  server_name_.clear();
  server_version_.clear();
  auto info = cj::member_span(initialize_result, "serverInfo");
  if (!info) return;
  bj::error_code ec;
  bj::value v = bj::parse(*info, ec);
  if (ec || !v.is_object()) return;
  server_name_ = plain_string(v.get_object().if_contains("name"));
  server_version_ = plain_string(v.get_object().if_contains("version"));
}

void DownstreamPeer::seed(const store::ServerListing& listing, const ToolSummarizer& summarize) {
  cj::ParseLimits limits{limits_.max_json_depth};
  const std::size_t cap = limits_.max_tools_per_server;
  std::size_t skipped = 0;
  std::vector<ToolEntry> tools;
  tools.reserve(std::min(listing.tools.size(), cap));
  std::unordered_set<std::string> names;
  // The x-mcp-header parameters too, so that sluice's front end checks a call's headers
  // before the server is started and lists live.
  auto headers = std::make_shared<mcp::ParamHeaders>();
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& text : listing.tools) {
    auto entry = tools.size() < cap ? stored_entry(text, "name", limits, names) : std::nullopt;
    if (!entry) {
      ++skipped;
      continue;
    }
    if (withheld("tools", entry->get_object().at("name").get_string())) continue;
    tools.push_back(tool_entry(*entry, nullptr, name_));
    if (mcp::param_headers_of(entry->get_object(), params) && !params.empty()) {
      (*headers)[tools.back().name] = params;
    }
    if (summarize) {
      tools.back().raw = summarize(entry->get_object());
      tools.back().summary = true;
    }
  }
  auto texts = [&](const std::vector<std::string>& stored, std::string_view key,
                   std::string_view identity) {
    std::vector<std::string> out;
    out.reserve(std::min(stored.size(), cap));
    std::unordered_set<std::string> seen;
    for (const auto& text : stored) {
      auto entry = out.size() < cap ? stored_entry(text, identity, limits, seen) : std::nullopt;
      if (!entry) {
        ++skipped;
      } else if (!withheld(key, entry->get_object().at(identity).get_string())) {
        out.push_back(text);
      }
    }
    return out;
  };
  prompts_ = texts(listing.prompts, "prompts", "name");
  resources_ = texts(listing.resources, "resources", "uri");
  resource_templates_ = texts(listing.resource_templates, "resourceTemplates", "uriTemplate");
  if (skipped > 0) {
    core::log::warn("server {}: the catalog cache held {} unusable entr{}, skipped", name_, skipped,
                    skipped == 1 ? "y" : "ies");
  }
  set_tools(std::move(tools));
  param_headers_ = std::move(headers);
  tools_known_ = true;
  lists_cached_ = true;
  listed_at_ms_ = listing.listed_at_ms;
  list_ttl_ms_ = listing.list_ttl_ms;
  server_name_ = listing.server_name;
  server_version_ = listing.server_version;
}

}  // namespace sluice::gateway
