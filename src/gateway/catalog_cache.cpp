// The Gateway's use of the catalog cache and of indexing on demand: the cache's lists seed the
// servers not started yet, every live listing is stored, and a search first indexes the
// servers whose tools are not known at all.
#include "core/heap.hpp"
#include "core/log.hpp"
#include "gateway/catalog/catalog_index.hpp"
#include "gateway/gateway.hpp"
#include "store/fingerprint.hpp"

#include <unordered_map>

namespace sluice::gateway {
namespace bj = boost::json;

asio::awaitable<void> Gateway::load_cache() {
  std::vector<store::ServerListing> listings = co_await cache_->load_all();
  // The newest listing of each (server, fingerprint).
  std::unordered_map<std::string, const store::ServerListing*> newest;
  for (const auto& l : listings) {
    auto [it, added] = newest.try_emplace(l.server + '\n' + l.fingerprint, &l);
    if (!added && it->second->listed_at_ms < l.listed_at_ms) it->second = &l;
  }
  // With the meta-tools only, a cached tool is kept as its search summary and
  // gateway.describe reads the whole object from the cache; aggregate mode lists cached
  // tools whole (a tools/list page is built from what is held).
  ToolSummarizer summarize;
  if (!options_.expose_all) {
    summarize = [](const bj::object& listed) { return summary_text(indexed_tool({}, listed)); };
  }
  std::size_t seeded = 0, tools = 0;
  for (const auto& d : fleet_.servers()) {
    if (d->config().disabled) continue;
    auto it = newest.find(d->name() + '\n' + store::fingerprint(d->config()));
    if (it == newest.end() || !d->seed(*it->second, summarize)) continue;
    ++seeded;
    tools += d->tools().size();
  }
  listings.clear();
  listings.shrink_to_fit();
  newest.clear();
  // The listings as read were a transient copy of the whole cache: give their pages back.
  core::release_free_heap();
  if (seeded > 0) {
    core::log::info("catalog cache: the lists of {} server(s) not started yet, {} tools", seeded,
                    tools);
    catalog_.invalidate();
    lists_changed();
  }
  cache_loaded_.set();
}

asio::awaitable<void> Gateway::catalog_ready() {
  co_await cache_loaded_.wait_for(config_->policy.index_wait);
}

asio::awaitable<void> Gateway::index_missing(std::optional<std::string_view> server) {
  co_await catalog_ready();
  if (!governance_.stale_refusal().empty()) co_return;
  std::vector<Downstream*> targets;
  for (const auto& d : fleet_.servers()) {
    if (server && *server != d->name()) continue;
    // Servers another search is indexing are waited for too (within this search's bound).
    const bool unknown_lazy = d->phase() == Phase::lazy && !d->tools_known();
    if (unknown_lazy || indexer_.indexing(*d)) targets.push_back(d.get());
  }
  if (targets.empty()) co_return;
  co_await indexer_.index(std::move(targets), config_->policy.index_concurrency,
                          config_->policy.index_wait);
}

void Gateway::prepare_catalog() {
  std::vector<std::string> words = catalog_.refresh();
  // Their WordNet synonyms are looked up off the loop; the index is rebuilt with them at the
  // next search after the lookup (SynonymLookup's end invalidates the catalog).
  if (!words.empty()) synonyms_.look_up(std::move(words));
}

asio::awaitable<void> Gateway::flush_cache() {
  if (cache_) co_await cache_->flush();
}

asio::awaitable<std::optional<std::string>> Gateway::cached_tool(const Downstream& server,
                                                                 std::string tool) {
  if (!cache_) co_return std::nullopt;
  std::string name = server.name();
  std::string key = store::fingerprint(server.config());
  co_return co_await cache_->load_tool(std::move(name), std::move(key), std::move(tool));
}

void Gateway::store_listing(std::string_view server) {
  const Downstream* d = fleet_.find(server);
  if (!cache_ || !d || !d->tools_known() || d->peer().lists_cached()) return;
  const DownstreamPeer& peer = d->peer();
  store::ServerListing l;
  l.server = d->name();
  l.fingerprint = store::fingerprint(d->config());
  l.listed_at_ms = peer.listed_at_ms();
  l.list_ttl_ms = peer.list_ttl_ms();
  l.server_name = peer.server_name();
  l.server_version = peer.server_version();
  l.protocol_version = peer.protocol_version();
  l.tools.reserve(d->tools().size());
  for (const auto& t : d->tools()) l.tools.push_back(t.raw);
  l.prompts = peer.prompts();
  l.resources = peer.resources();
  l.resource_templates = peer.resource_templates();
  cache_->save(std::move(l));
}

}  // namespace sluice::gateway
