#pragma once
// CatalogIndex: the ranked full-text index behind `gateway.catalog_search`. It knows tools
// as plain text (server, name, title, description) and nothing about sessions or MCP.
//
// Contract:
// - Ownership: the index owns a copy of every IndexedTool handed to rebuild(). A hit's
//   `doc` is the tool's position in that vector; it and every reference returned by tool()
//   stay valid until the next rebuild().
// - Threads: one owner thread (the gateway loop) calls rebuild() whenever a downstream's
//   tool list changes and search() in between. The const members keep no hidden scratch
//   state, so they never write to the index.
// - Errors: search() treats the query as untrusted text that is only tokenised, never
//   interpreted; it cannot fail short of std::bad_alloc, and a query that matches nothing
//   gives zero hits. rebuild() gives the strong guarantee: if it throws (std::bad_alloc),
//   the previous catalog stays in place and searchable. tool() requires doc < size().
// - Cost: search() walks only the postings of the query's terms, accumulating scores in a
//   fixed-size window of docs and keeping a top-`limit` heap; its allocations grow with the
//   query and the limit, not with the catalog. Only the first kMaxQueryTerms distinct terms
//   of a query count.
//
// Ranking is BM25F (k1 1.2, b 0.75): per-field term frequencies are length-normalised and
// weighted (name 3, title 2, description 1, server 0.5) before one saturation, then scaled
// by the term's IDF. Tokens split on every ASCII character that is not a letter or digit
// and on camelCase boundaries (`getHTTPResponse` -> get, http, response), lower-cased
// ASCII; bytes >= 0x80 stay inside tokens. The whole lower-cased tool name and the whole
// id `server::tool_name` are also name terms, and each whitespace-separated query word is
// looked up whole as well, so `read_file` ranks the tool named read_file first. The last
// query token also matches as a prefix of longer tokens (`ech` finds echo) at half weight,
// when it is at least kMinPrefixLength bytes long. Equal scores are ordered by tool id
// (`server::tool_name`) ascending, then by doc, so results are deterministic.
//
// A query without any non-whitespace character lists every tool in id order (score 0).
// SearchQuery::server keeps only the tools of that exact server name; `limit` cuts the
// ranked hits while `total_matches` counts every matching tool after the server filter.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::gateway {

struct IndexedTool {
  std::string server;
  std::string tool_name;
  std::string title;
  std::string description;
};

struct SearchHit {
  std::size_t doc;  // position in the vector given to CatalogIndex::rebuild()
  double score;
};

struct SearchQuery {
  std::string text;
  std::size_t limit = 20;
  std::optional<std::string> server;  // exact server name, or every server
};

struct SearchResult {
  std::vector<SearchHit> hits;  // best first, at most `limit`
  std::size_t total_matches;    // matching tools before the limit
};

// The tokens the index uses for `text`, in order, duplicates kept.
std::vector<std::string> search_tokens(std::string_view text);

class CatalogIndex {
 public:
  static constexpr std::size_t kMaxQueryTerms = 32;
  static constexpr std::size_t kMinPrefixLength = 2;

  void rebuild(std::vector<IndexedTool> tools);
  SearchResult search(const SearchQuery& query) const;
  const IndexedTool& tool(std::size_t doc) const;
  std::size_t size() const { return tools_.size(); }

 private:
  static constexpr std::size_t kFieldCount = 4;  // name, title, description, server

  struct Posting {
    std::uint32_t doc;
    std::array<std::uint16_t, kFieldCount> tf;  // occurrences per field, saturating
  };
  struct Term {
    std::string text;
    std::uint32_t first_posting;
    std::uint32_t end_posting;
    double idf;
    bool is_token;  // produced by tokenising some field, not only a whole name or id
  };
  class TermTable;
  struct Cursor;
  struct Candidate;

  // Fills field_norms_ from each doc's field lengths in tokens.
  void set_field_norms(const std::vector<std::array<std::uint32_t, kFieldCount>>& lengths);
  // Fills docs_by_id_, id_rank_, servers_ and doc_server_ from tools_.
  void order_by_id_and_server();
  SearchResult list_by_id(std::size_t limit, std::optional<std::uint32_t> server) const;
  std::vector<Cursor> plan(std::string_view text) const;
  SearchResult rank(std::vector<Cursor> cursors, std::size_t limit,
                    std::optional<std::uint32_t> server) const;
  // Adds the scores of docs [window_begin, window_begin + window_scores.size()) and moves
  // every cursor past them; slot_scores is zeroed scratch of the same size.
  void score_window(std::vector<Cursor>& cursors, std::uint32_t window_begin,
                    std::span<double> window_scores, std::span<double> slot_scores) const;
  // The first term not ordered before `text`.
  std::vector<Term>::const_iterator first_term_from(std::string_view text) const;
  double saturated_frequency(const Posting& posting) const;

  std::vector<IndexedTool> tools_;
  std::vector<Term> terms_;        // sorted by text
  std::vector<Posting> postings_;  // each term's run ascending by doc
  // Per doc and field: field weight / (1 - b + b * field length / average field length).
  std::vector<std::array<float, kFieldCount>> field_norms_;
  std::vector<std::uint32_t> docs_by_id_;  // docs in tool id order
  std::vector<std::uint32_t> id_rank_;     // doc -> position in docs_by_id_
  std::vector<std::string> servers_;       // distinct server names, sorted
  std::vector<std::uint32_t> doc_server_;  // doc -> index into servers_
};

}  // namespace sluice::gateway
