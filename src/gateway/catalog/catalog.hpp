#pragma once
// Catalog: the searchable catalog over every configured server's tools, and the two views
// of it the meta-tools give: compact cards (gateway.catalog_search) and one tool in full
// (gateway.describe). A server's tools count when its lists are known: listed in this run, or
// seeded from the catalog cache (store/) before it has started; each card says which
// (`source`: online, or cached with its age). Servers whose tools are not known at all appear
// as offline cards, with their status (being indexed, failed, disabled, ...).
//
// Ownership: owns the CatalogIndex and the map from its docs to (server, tool); borrows the
// Fleet, which outlives it. Threading: the gateway's loop thread. Guarantees: invalidate() is
// called whenever a server's tool list changes or the fleet changes, and search() rebuilds the
// index first when it was invalidated, so a hit always names a tool that is in its server's
// current list, and many listings in a row (an indexing of 100 servers) cost one rebuild at the
// next search, not one each; search() never fails on its (validated) arguments.
#include "gateway/catalog/catalog_index.hpp"
#include "gateway/fleet.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway {

// gateway.catalog_search's filters, read from its (validated) arguments.
struct CatalogFilters {
  std::optional<std::string> server;  // only this server's tools
  bool read_only = false;             // only tools annotated readOnlyHint
  std::optional<bool> online;         // availability: online (true), cached (false), any
};
CatalogFilters catalog_filters(const boost::json::object& args);

class Catalog {
 public:
  explicit Catalog(const Fleet& fleet) : fleet_(fleet) {}
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // Indexes the tools every server lists now (looking synonyms up in WordNet within the
  // index's budget, on this thread: tests and tools; the gateway uses refresh()).
  void rebuild();
  // Rebuilds when invalidated, reading no WordNet file on this thread; returns the words
  // whose WordNet synonyms are not known yet (look them up elsewhere, then invalidate()).
  std::vector<std::string> refresh();
  // The fleet or a server's lists changed: the next search rebuilds the index first.
  void invalidate() { stale_ = true; }
  // gateway.catalog_search: the ranked cards of `args` (query, limit, filters: server,
  // read_only, availability), the counts (tools in the catalog, matches), then the offline
  // servers' cards; a CallToolResult text.
  std::string search(const boost::json::object& args);
  // Tools the catalog knows now, over every server whose lists are known.
  std::size_t size() const;

  // Servers whose tools are not known yet listed as cards, at most this many (all counted).
  static constexpr std::size_t kOfflineCards = 20;

 private:
  boost::json::object card(const SearchHit& hit) const;
  std::vector<IndexedTool> indexed_tools();

  const Fleet& fleet_;
  bool stale_ = true;
  CatalogIndex index_;
  std::vector<std::pair<std::size_t, std::size_t>> docs_;  // doc -> (server, tool)
};

// gateway.describe's body for `tool` of `server`: its full schema, annotations and an invoke
// template (a CallToolResult text), and where it came from (`source`: online, or cached with
// its age, when the server has not listed in this run or is not running now).
// `allow_unvalidated`: sluice.allowUnvalidatedTools. `whole`: the tool's whole object from
// the catalog cache when `tool` is a summary (ToolEntry::summary), else empty.
std::string describe_tool(const Downstream& server, const ToolEntry& tool, bool allow_unvalidated,
                          std::string_view whole = {});

}  // namespace sluice::gateway
