#pragma once
// A CatalogIndex for tests that also remembers each doc's tool id, since the index keeps no
// texts of its tools: hit_ids() names a result's hits as `server::tool_name`.
#include "gateway/catalog/catalog_index.hpp"

#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway {

class TestIndex : public CatalogIndex {
 public:
  void rebuild(std::vector<IndexedTool> tools,
               std::size_t wordnet_lookups = kWordNetLookupsPerRebuild) {
    std::vector<std::string> ids;
    ids.reserve(tools.size());
    for (const IndexedTool& tool : tools) ids.push_back(tool.server + "::" + tool.tool_name);
    CatalogIndex::rebuild(std::move(tools), wordnet_lookups);
    ids_ = std::move(ids);
  }
  const std::string& id(std::size_t doc) const { return ids_.at(doc); }

 private:
  std::vector<std::string> ids_;
};

inline TestIndex make_index(std::vector<IndexedTool> tools) {
  TestIndex index;
  index.rebuild(std::move(tools));
  return index;
}

inline std::vector<std::string> hit_ids(const TestIndex& index, const SearchResult& result) {
  std::vector<std::string> ids;
  for (const SearchHit& hit : result.hits) ids.push_back(index.id(hit.doc));
  return ids;
}

}  // namespace sluice::gateway
