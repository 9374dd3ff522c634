#include "gateway/catalog/catalog.hpp"

#include "config/trust_store.hpp"
#include "core/heap.hpp"
#include "core/wall_clock.hpp"
#include "mcp/tool_result.hpp"

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace sluice::gateway {
namespace bj = boost::json;

namespace {

constexpr std::size_t kShortDescription = 160;

// The first sentence or line of a description, cut at a character boundary.
std::string short_description(std::string_view text) {
  std::size_t end = text.find('\n');
  if (end == std::string_view::npos) end = text.size();
  std::string_view first = text.substr(0, end);
  if (first.size() <= kShortDescription) return std::string(first);
  std::size_t cut = kShortDescription - 3;
  while (cut > 0 && (static_cast<unsigned char>(first[cut]) & 0xC0) == 0x80) --cut;
  return std::string(first.substr(0, cut)) + "...";
}

SearchQuery query_of(const bj::object& args, const CatalogFilters& filters) {
  SearchQuery q;
  if (const auto* v = args.if_contains("query"); v && v->is_string()) q.text = v->get_string();
  if (const auto* v = args.if_contains("limit"); v && v->is_int64()) {
    q.limit = static_cast<std::size_t>(v->get_int64());
  }
  q.server = filters.server;
  q.read_only = filters.read_only;
  return q;
}

bj::object offline_card(const Downstream& d) {
  bj::object card;
  card["server"] = d.name();
  card["availability"] = "offline";
  card["status"] = to_string(d.phase());
  if (d.phase() == Phase::untrusted) {
    // Its tools are not shown, not even from the catalog cache: it may not run.
    card["short_description"] =
        "untrusted: its project file is not approved, so sluice does not start it; review the "
        "file, then run the next_step command";
    card["next_step"] = config::approve_command(d.config().source_file);
    return card;
  }
  card["short_description"] =
      d.phase() == Phase::disabled
          ? "disabled in its config file (\"disabled\": true): sluice does not start it"
      : d.phase() == Phase::starting
          ? "being indexed: its tools appear here once it has listed them (search again)"
      : d.phase() == Phase::failed
          ? "could not be started to list its tools: see gateway.health for its last error"
          : "tools not listed yet: call gateway.connect_server to start it and list them";
  return card;
}

// Where a server's tool list came from: `online` while it runs, else `cached` with the age
// of the listing (this run's, or the catalog cache's when the server has not started yet),
// and, when the server said how long its list stays valid (a 2026-07-28 server's ttlMs),
// that time and whether the listing is still within it.
void add_source(bj::object& out, const Downstream& d) {
  if (d.phase() == Phase::online) {
    out["source"] = "online";
    return;
  }
  out["source"] = "cached";
  const std::int64_t now_ms = core::unix_ms_now();
  const std::int64_t listed = d.peer().listed_at_ms();
  if (listed <= 0) return;
  const std::int64_t age_ms = std::max<std::int64_t>(0, now_ms - listed);
  out["cached_age_s"] = age_ms / 1000;
  if (const std::int64_t ttl = d.peer().list_ttl_ms(); ttl >= 0) {
    out["server_ttl_s"] = ttl / 1000;
    out["fresh"] = age_ms < ttl;
  }
}

// `{"name": "<required: string>", ...}` for the properties of an input schema.
bj::object template_arguments(const bj::object& schema) {
  std::vector<std::string> required;
  if (const auto* r = schema.if_contains("required"); r && r->is_array()) {
    for (const auto& n : r->get_array()) {
      if (n.is_string()) required.emplace_back(n.get_string());
    }
  }
  bj::object args;
  const auto* props = schema.if_contains("properties");
  if (!props || !props->is_object()) return args;
  for (const auto& [key, prop] : props->get_object()) {
    std::string type = "any";
    if (prop.is_object()) {
      if (const auto* t = prop.get_object().if_contains("type"); t && t->is_string()) {
        type = std::string(t->get_string());
      }
    }
    bool req = std::find(required.begin(), required.end(), key) != required.end();
    args[key] = fmt::format("<{}: {}>", req ? "required" : "optional", type);
  }
  return args;
}

}  // namespace

CatalogFilters catalog_filters(const bj::object& args) {
  CatalogFilters out;
  const auto* f = args.if_contains("filters");
  if (!f || !f->is_object()) return out;
  const bj::object& filters = f->get_object();
  if (const auto* s = filters.if_contains("server"); s && s->is_string()) {
    out.server = std::string(s->get_string());
  }
  if (const auto* r = filters.if_contains("read_only"); r && r->is_bool()) {
    out.read_only = r->get_bool();
  }
  // "online" keeps the tools of running servers, "cached" the others; "any" both.
  if (const auto* a = filters.if_contains("availability"); a && a->is_string()) {
    if (a->get_string() != "any") out.online = a->get_string() == "online";
  }
  return out;
}

std::size_t Catalog::size() const {
  std::size_t n = 0;
  for (const auto& d : fleet_.servers()) {
    if (d->tools_known()) n += d->tools().size();
  }
  return n;
}

std::vector<IndexedTool> Catalog::indexed_tools() {
  const auto& servers = fleet_.servers();
  std::vector<IndexedTool> tools;
  tools.reserve(size());
  docs_.clear();
  docs_.shrink_to_fit();
  docs_.reserve(tools.capacity());
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const auto& d = *servers[s];
    if (!d.tools_known()) continue;
    for (std::size_t t = 0; t < d.tools().size(); ++t) {
      const auto& tool = d.tools()[t];
      tools.push_back(indexed_tool(d.name(), tool.raw));
      docs_.emplace_back(s, t);
    }
  }
  return tools;
}

void Catalog::rebuild() {
  stale_ = false;
  index_.rebuild(indexed_tools());
  // A rebuild's scratch (the previous index, term tables, the texts it analysed) is freed
  // above; give its pages back rather than keep them resident.
  core::release_free_heap();
}

std::vector<std::string> Catalog::refresh() {
  if (!stale_) return {};
  stale_ = false;
  index_.rebuild(indexed_tools(), 0);
  core::release_free_heap();
  return index_.unlooked_words();
}

bj::object Catalog::card(const SearchHit& hit) const {
  auto [s, t] = docs_[hit.doc];
  const auto& d = *fleet_.servers()[s];
  const auto& tool = d.tools()[t];
  bj::object card;
  card["tool_id"] = d.name() + "::" + tool.name;
  card["server"] = d.name();
  card["tool_name"] = tool.name;
  // The texts are read from the listed object (ToolEntry keeps no copies of them).
  const IndexedTool texts = indexed_tool(d.name(), tool.raw);
  if (!texts.title.empty()) card["title"] = texts.title;
  card["short_description"] = short_description(texts.description);
  card["availability"] = d.phase() == Phase::online ? "online" : "offline";
  add_source(card, d);
  if (tool.read_only) card["read_only"] = true;
  if (!tool.validator() && !tool.schema_problem().empty()) card["validatable"] = false;
  return card;
}

std::string Catalog::search(const bj::object& args) {
  if (stale_) rebuild();
  const CatalogFilters filters = catalog_filters(args);
  SearchQuery q = query_of(args, filters);
  if (filters.online) {
    q.keep = [this, want = *filters.online](std::size_t doc) {
      return (fleet_.servers()[docs_[doc].first]->phase() == Phase::online) == want;
    };
  }
  SearchResult found = index_.search(q);
  bj::array results;
  for (const auto& hit : found.hits) results.push_back(card(hit));
  bj::array offline;
  std::size_t offline_total = 0;
  for (const auto& d : fleet_.servers()) {
    if (d->tools_known()) continue;
    if (q.server && *q.server != d->name()) continue;
    if (++offline_total <= kOfflineCards) offline.push_back(offline_card(*d));
  }
  bj::object out;
  out["results"] = std::move(results);
  out["total_tools"] = index_.size();
  out["total_matches"] = found.total_matches;
  out["total_available"] = found.total_matches;  // the name before total_matches, kept
  out["truncated"] = found.total_matches > found.hits.size();
  // The total only when some offline servers have no card (counted before the move).
  const bool offline_truncated = offline_total > offline.size();
  if (!offline.empty()) out["offline_servers"] = std::move(offline);
  if (offline_truncated) out["offline_servers_total"] = offline_total;
  return mcp::structured_result(out);
}

std::string describe_tool(const Downstream& d, const ToolEntry& tool, bool allow_unvalidated,
                          std::string_view whole) {
  const std::string_view listed = whole.empty() ? std::string_view(tool.raw) : whole;
  bj::value parsed = bj::parse(listed);
  const IndexedTool texts = indexed_tool(d.name(), listed);
  const bj::object& obj = parsed.get_object();
  bj::object out;
  std::string id = d.name() + "::" + tool.name;
  out["tool_id"] = id;
  out["server"] = d.name();
  out["tool_name"] = tool.name;
  if (!texts.title.empty()) out["title"] = texts.title;
  out["description"] = texts.description;
  bj::object template_args;
  if (const auto* schema = obj.if_contains("inputSchema"); schema && schema->is_object()) {
    out["inputSchema"] = *schema;
    template_args = template_arguments(schema->get_object());
  } else {
    out["inputSchema"] = bj::object{{"type", "object"}};
  }
  if (const auto* o = obj.if_contains("outputSchema")) out["outputSchema"] = *o;
  if (const auto* a = obj.if_contains("annotations")) out["annotations"] = *a;
  out["availability"] = d.phase() == Phase::online ? "online" : "offline";
  add_source(out, d);
  if (d.phase() != Phase::online) {
    out["note"] =
        "described from the catalog cache without starting the server; gateway.invoke starts "
        "it and validates the arguments against its live schema";
  }
  if (!tool.validator() && !tool.schema_problem().empty()) {
    out["validatable"] = false;
    out["schema_problem"] = tool.schema_problem();
    out["invocable"] = allow_unvalidated;
  }
  out["invoke_template"] = bj::object{
      {"tool", "gateway.invoke"},
      {"arguments", bj::object{{"tool_id", id}, {"arguments", std::move(template_args)}}}};
  return mcp::structured_result(out);
}

}  // namespace sluice::gateway
