#pragma once
// Catalog: the searchable catalog over every configured server's tools, and the two views
// of it the meta-tools give: compact cards (gateway.catalog_search) and one tool in full
// (gateway.describe). Servers whose tools are not known yet appear as offline cards, so the
// search covers every configured server, running or not.
//
// Ownership: owns the CatalogIndex and the map from its docs to (server, tool); borrows the
// Fleet, which outlives it. Threading: the gateway's loop thread. Guarantees: rebuild() is
// called whenever a server's tool list changes, so a hit always names a tool that is in its
// server's current list; search() never fails on its (validated) arguments.
#include "gateway/catalog/catalog_index.hpp"
#include "gateway/fleet.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway {

class Catalog {
 public:
  explicit Catalog(const Fleet& fleet) : fleet_(fleet) {}
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // Indexes the tools every server lists now.
  void rebuild();
  // gateway.catalog_search: the ranked cards of `args` (query, limit, filters.server), then
  // the offline servers' cards; a CallToolResult text.
  std::string search(const boost::json::object& args) const;
  // Tools indexed.
  std::size_t size() const { return index_.size(); }

  // Servers whose tools are not known yet listed as cards, at most this many (all counted).
  static constexpr std::size_t kOfflineCards = 20;

 private:
  boost::json::object card(const SearchHit& hit) const;

  const Fleet& fleet_;
  CatalogIndex index_;
  std::vector<std::pair<std::size_t, std::size_t>> docs_;  // doc -> (server, tool)
};

// gateway.describe's body for `tool` of `server`: its full schema, annotations and an invoke
// template (a CallToolResult text). `allow_unvalidated`: sluice.allowUnvalidatedTools.
std::string describe_tool(const Downstream& server, const ToolEntry& tool, bool allow_unvalidated);

}  // namespace sluice::gateway
