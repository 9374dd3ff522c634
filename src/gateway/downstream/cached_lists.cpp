// A downstream's lists across runs: seeded from the catalog cache before the server has
// listed in this run, and reported to the gateway after each live listing.
#include "gateway/downstream/downstream.hpp"

namespace sluice::gateway {

bool Downstream::seed(const store::ServerListing& listing, const ToolSummarizer& summarize) {
  if (phase() != Phase::lazy || peer_.tools_known()) return false;
  peer_.seed(listing, summarize);
  return true;
}

void Downstream::listed_now() {
  if (events_.tools_changed) events_.tools_changed();
  if (events_.listed) events_.listed();
}

}  // namespace sluice::gateway
