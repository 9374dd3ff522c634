// gateway.catalog_search budget (docs/architecture.md): 10,000 indexed tools, p50 within 1 ms.
// The catalog is 100 servers x 100 tools built from word lists with a fixed seed, with the
// naming styles real servers use (snake_case, camelCase, kebab-case, dotted), parameter
// names and read-only hints, analysed as the index does (stop words, stemming, synonyms).
// Each query benchmark also reports the per-query p50 and p99 in microseconds as counters;
// BM_CatalogRebuild reports the first rebuild (WordNet looked up for every word) and the
// heap memory the built index keeps (its tools included).
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/catalog/catalog_index.hpp"

namespace sluice::gateway {
namespace {

constexpr std::array<std::string_view, 25> kServerStems = {
    "github", "gitlab",  "slack",    "jira",   "linear",  "notion", "postgres",  "sqlite", "mysql",
    "redis",  "files",   "fetch",    "memory", "browser", "sentry", "stripe",    "s3",     "k8s",
    "docker", "grafana", "calendar", "gmail",  "drive",   "figma",  "confluence"};
constexpr std::array<std::string_view, 4> kServerSuffixes = {"", "-prod", "-staging", "-eu"};

constexpr std::array<std::string_view, 24> kVerbs = {
    "get",    "list",  "create", "update", "delete", "search", "read",    "write",
    "fetch",  "query", "send",   "upload", "move",   "copy",   "archive", "merge",
    "assign", "close", "open",   "run",    "export", "import", "sync",    "describe"};
constexpr std::array<std::string_view, 40> kNouns = {
    "file",     "issue",     "repository", "branch",  "commit",   "pull_request", "user",
    "channel",  "message",   "thread",     "page",    "database", "table",        "row",
    "record",   "key",       "bucket",     "object",  "pod",      "deployment",   "container",
    "image",    "dashboard", "alert",      "event",   "invoice",  "customer",     "payment",
    "document", "folder",    "comment",    "label",   "project",  "sprint",       "ticket",
    "report",   "schema",    "snapshot",   "replica", "webhook"};
constexpr std::array<std::string_view, 60> kFiller = {
    "the",         "a",         "of",      "for",       "with",      "in",      "to",
    "by",          "given",     "current", "matching",  "optional",  "returns", "all",
    "each",        "its",       "and",     "or",        "specified", "filter",  "results",
    "id",          "name",      "status",  "metadata",  "content",   "limit",   "page",
    "token",       "cursor",    "recent",  "workspace", "account",   "team",    "owner",
    "pagination",  "json",      "text",    "markdown",  "timestamp", "default", "maximum",
    "permissions", "scope",     "access",  "remote",    "local",     "path",    "query",
    "field",       "value",     "summary", "details",   "history",   "version", "region",
    "cluster",     "namespace", "replies", "reply"};

std::string join(std::string_view verb, std::string_view noun, int style) {
  std::string name(verb);
  switch (style) {
    case 0:  // snake_case
      name += "_";
      name += noun;
      break;
    case 1: {  // camelCase
      bool upper = true;
      for (const char c : noun) {
        if (c == '_') {
          upper = true;
          continue;
        }
        name += upper ? static_cast<char>(c - 'a' + 'A') : c;
        upper = false;
      }
      break;
    }
    case 2:  // kebab-case
      name += "-";
      for (const char c : noun) name += c == '_' ? '-' : c;
      break;
    default:  // dotted
      name = std::string(noun) + "." + name;
      break;
  }
  return name;
}

std::vector<IndexedTool> make_catalog() {
  std::mt19937 random(20240601);
  const auto pick = [&](const auto& words) {
    return words[std::uniform_int_distribution<std::size_t>(0, words.size() - 1)(random)];
  };
  std::vector<IndexedTool> tools;
  tools.reserve(10000);
  for (std::size_t s = 0; s < 100; ++s) {
    const std::string server = std::string(kServerStems[s % kServerStems.size()]) +
                               std::string(kServerSuffixes[s / kServerStems.size()]);
    const int style = static_cast<int>(s % 4);
    for (std::size_t t = 0; t < 100; ++t) {
      const std::string_view verb = kVerbs[t % kVerbs.size()];
      const std::string_view noun = kNouns[(t * 7 + s) % kNouns.size()];
      std::string name = join(verb, noun, style);
      if (t >= kVerbs.size()) name += "_v" + std::to_string(t / kVerbs.size());
      std::string title(verb);
      title[0] = static_cast<char>(title[0] - 'a' + 'A');
      title += " " + std::string(noun);
      std::string description = std::string(verb) + "s a " + std::string(noun) + " in " +
                                std::string(kServerStems[s % kServerStems.size()]);
      const std::size_t extra = std::uniform_int_distribution<std::size_t>(8, 40)(random);
      for (std::size_t w = 0; w < extra; ++w) {
        description += " ";
        description += w % 5 == 4 ? pick(kNouns) : pick(kFiller);
      }
      IndexedTool tool;
      tool.server = server;
      tool.tool_name = std::move(name);
      tool.title = std::move(title);
      tool.description = std::move(description);
      tool.parameters = {std::string(pick(kFiller)) + "Id", std::string(pick(kNouns))};
      tool.read_only = t % kVerbs.size() < 3 || verb == "search" || verb == "read";
      tools.push_back(std::move(tool));
    }
  }
  return tools;
}

// Heap memory in use by this process in KiB (glibc's mallinfo2): what a built index keeps,
// without what building it freed again.
double heap_in_use_kib() {
  const struct mallinfo2 info = ::mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd) / 1024.0;
}

struct BuiltCatalog {
  CatalogIndex index;
  double first_rebuild_ms;
  double index_kib;
};

const BuiltCatalog& built_catalog() {
  static const BuiltCatalog built = [] {
    std::vector<IndexedTool> tools = make_catalog();
    BuiltCatalog result{{}, 0.0, 0.0};
    const double before = heap_in_use_kib();
    const auto start = std::chrono::steady_clock::now();
    result.index.rebuild(std::move(tools));
    const auto stop = std::chrono::steady_clock::now();
    result.first_rebuild_ms = std::chrono::duration<double, std::milli>(stop - start).count();
    result.index_kib = heap_in_use_kib() - before;
    return result;
  }();
  return built;
}

const CatalogIndex& catalog() { return built_catalog().index; }

SearchQuery make_query(std::string text, std::optional<std::string> server = std::nullopt) {
  SearchQuery query;
  query.text = std::move(text);
  query.server = std::move(server);
  return query;
}

void run_query(benchmark::State& state, const SearchQuery& query) {
  const CatalogIndex& index = catalog();
  std::vector<double> micros;
  std::size_t matches = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    SearchResult result = index.search(query);
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(result);
    matches = result.total_matches;
    micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[micros.size() * 99 / 100];
  state.counters["matches"] = static_cast<double>(matches);
}

void BM_CatalogSearchOneWord(benchmark::State& state) { run_query(state, make_query("issue")); }
void BM_CatalogSearchCommonWord(benchmark::State& state) { run_query(state, make_query("the")); }
void BM_CatalogSearchThreeWords(benchmark::State& state) {
  run_query(state, make_query("create pull request"));
}
void BM_CatalogSearchWholeName(benchmark::State& state) {
  run_query(state, make_query("list_channel"));
}
void BM_CatalogSearchPrefix(benchmark::State& state) { run_query(state, make_query("re")); }
void BM_CatalogSearchEmptyQuery(benchmark::State& state) { run_query(state, make_query("")); }
void BM_CatalogSearchOneServer(benchmark::State& state) {
  run_query(state, make_query("delete", "github-prod"));
}
void BM_CatalogSearchParaphrase(benchmark::State& state) {
  run_query(state, make_query("how do I make a new folder for the records"));
}
void BM_CatalogSearchReadOnly(benchmark::State& state) {
  SearchQuery query = make_query("show the open tickets");
  query.read_only = true;
  run_query(state, query);
}

void BM_CatalogRebuild(benchmark::State& state) {
  const BuiltCatalog& first = built_catalog();
  const std::vector<IndexedTool> tools = make_catalog();
  for (auto _ : state) {
    CatalogIndex index;
    index.rebuild(tools);
    benchmark::DoNotOptimize(index);
  }
  state.counters["first_rebuild_ms"] = first.first_rebuild_ms;
  state.counters["index_kib"] = first.index_kib;
}

BENCHMARK(BM_CatalogSearchOneWord);
BENCHMARK(BM_CatalogSearchCommonWord);
BENCHMARK(BM_CatalogSearchThreeWords);
BENCHMARK(BM_CatalogSearchWholeName);
BENCHMARK(BM_CatalogSearchPrefix);
BENCHMARK(BM_CatalogSearchEmptyQuery);
BENCHMARK(BM_CatalogSearchOneServer);
BENCHMARK(BM_CatalogSearchParaphrase);
BENCHMARK(BM_CatalogSearchReadOnly);
BENCHMARK(BM_CatalogRebuild)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::gateway
