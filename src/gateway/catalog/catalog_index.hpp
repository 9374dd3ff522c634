#pragma once
// CatalogIndex: the ranked full-text index behind `gateway.catalog_search`. It knows tools
// as plain text (server, name, title, description) and nothing about sessions or MCP.
//
// Contract:
// - Ownership: rebuild() consumes the IndexedTools it is given and keeps only what searching
//   needs (terms, postings, field norms, id order, server and read-only per doc), not the
//   tools' texts: the caller maps a hit's `doc`, the tool's position in the vector given to
//   rebuild(), back to its tool. Docs stay valid until the next rebuild().
// - Threads: one owner thread (the gateway loop) calls rebuild() whenever a downstream's
//   tool list changes and search() in between. The const members keep no hidden scratch
//   state, so they never write to the index.
// - Errors: search() treats the query as untrusted text that is only tokenised, never
//   interpreted; it cannot fail short of std::bad_alloc, and a query that matches nothing
//   gives zero hits. rebuild() gives the strong guarantee: if it throws (std::bad_alloc),
//   the previous catalog stays in place and searchable.
// - Cost: search() walks only the postings of the query's terms and of their expansions,
//   accumulating scores in a fixed-size window of docs and keeping a top-`limit` heap; its
//   allocations grow with the query and the limit, not with the catalog; it reads no file.
//   Only the first kMaxQueryTerms distinct terms of a query count. rebuild() looks up at
//   most the budget it is given (kWordNetLookupsPerRebuild unless told) of words not seen
//   before in WordNet (synonyms.hpp) and lists the rest in unlooked_words().
//
// Ranking is BM25F (k1 1.2, b 0.75): per-field term frequencies are length-normalised and
// weighted (name 3, title 2, parameter names 1.5, description 1, server 0.5) before one
// saturation, then scaled by the term's IDF. Text is analysed as analyzer.hpp says: split
// into lower-cased tokens (snake_case, camelCase, kebab-case and dotted names alike), stop
// words left out of a query unless it has nothing else (and never counted in a field's
// length), every other token stemmed with Snowball's English stemmer, in tools and queries
// alike, so "entity" finds create_entities. The whole lower-cased tool name and the whole id
// `server::tool_name` are also name terms, and each whitespace-separated query word is
// looked up whole as well, so `read_file` ranks the tool named read_file first.
//
// Expansion, always weighted below what the query says: the last query token also matches
// as a prefix of longer tokens (`ech` finds echo) at half weight, when it is at least
// kMinPrefixLength bytes long; and each query token matches the catalog's words it is a
// synonym of (synonyms.hpp: WordNet and a curated software thesaurus; "folder" finds
// create_directory) at kSynonymWeight, with the IDF of the exact term when that is lower,
// so a synonym never outranks the exact word in the same field. The synonyms are found
// while rebuilding, for the catalog's own words, into an in-memory map from synonym stem to
// catalog terms: searching never reads WordNet. Only names, titles and parameter names are
// looked up in WordNet (at most kWordNetLookupsPerRebuild new words per rebuild; the rest
// on later rebuilds); every word gets the curated synonyms. Equal scores are ordered by
// tool id (`server::tool_name`) ascending, then by doc, so results are deterministic.
//
// A query without any non-whitespace character lists every tool in id order (score 0).
// SearchQuery::server keeps only the tools of that exact server name, read_only only the
// tools whose annotations say readOnlyHint, and keep (when set) only the docs it accepts;
// `limit` cuts the ranked hits while `total_matches` counts every matching tool after all
// of these filters.
#include "gateway/catalog/analyzer.hpp"

#include <boost/json/object.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
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
  std::vector<std::string> parameters;  // property names of the input schema
  bool read_only = false;               // annotations.readOnlyHint
};

// The IndexedTool of a tool object as `server` listed it: name, title (or
// annotations.title), description, the property names of inputSchema and
// annotations.readOnlyHint. Never throws on malformed input (short of std::bad_alloc):
// whatever is missing or of the wrong type is left empty.
IndexedTool indexed_tool(std::string_view server, const boost::json::object& listed);
// The same of a tool object's JSON text, or of a summary_text().
IndexedTool indexed_tool(std::string_view server, std::string_view raw);
// What indexed_tool reads of a tool, as a JSON array: [name, title, description, [parameter
// names], readOnly]. A cached tool kept as a summary costs about half its object.
std::string summary_text(const IndexedTool& tool);

struct SearchHit {
  std::size_t doc;  // position in the vector given to CatalogIndex::rebuild()
  double score;
};

struct SearchQuery {
  std::string text;
  std::size_t limit = 20;
  std::optional<std::string> server;          // exact server name, or every server
  bool read_only = false;                     // only tools whose annotations say readOnlyHint
  std::function<bool(std::size_t doc)> keep;  // empty: keep every doc
};

struct SearchResult {
  std::vector<SearchHit> hits;  // best first, at most `limit`
  std::size_t total_matches;    // matching tools before the limit
};

class CatalogIndex {
 public:
  static constexpr std::size_t kMaxQueryTerms = 32;
  static constexpr std::size_t kMinPrefixLength = 2;
  static constexpr double kSynonymWeight = 0.4;
  static constexpr std::size_t kWordNetLookupsPerRebuild = 500;

  // Indexes `tools`, looking at most `wordnet_lookups` words not cached yet up in WordNet
  // (0: none, so that the calling thread reads no WordNet file).
  void rebuild(std::vector<IndexedTool> tools,
               std::size_t wordnet_lookups = kWordNetLookupsPerRebuild);
  // The words of the last rebuild whose WordNet synonyms it did not look up for want of
  // budget: look them up elsewhere (Thesaurus::look_up_words), then rebuild.
  const std::vector<std::string>& unlooked_words() const { return unlooked_words_; }
  SearchResult search(const SearchQuery& query) const;
  std::size_t size() const { return read_only_.size(); }

 private:
  static constexpr std::size_t kFieldCount = 5;  // name, title, description, parameters, server

  // Occurrences of a term in one doc per field, saturating at 255 (BM25 saturates long
  // before that).
  using FieldFrequencies = std::array<std::uint8_t, kFieldCount>;
  struct Posting {
    std::uint32_t doc;
    FieldFrequencies tf;
  };
  // A text in texts_.
  struct TextSpan {
    std::uint32_t begin;
    std::uint32_t size;
  };
  struct Term {
    TextSpan text;
    std::uint32_t first_posting;
    std::uint32_t end_posting;
    double idf;
    bool is_token;  // produced by tokenising some field, not only a whole name or id
  };
  // A synonym stem and the run of synonym_targets_ (term indices) it expands to.
  struct Synonym {
    TextSpan stem;
    std::uint32_t first_target;
    std::uint32_t end_target;
  };
  struct QueryTerm;
  class TermTable;
  struct Cursor;
  struct Candidate;

  // Per doc and field, from each doc's field lengths in tokens: field weight / (1 - b + b *
  // field length / average field length).
  using FieldNorms = std::array<float, kFieldCount>;
  static std::vector<FieldNorms> field_norms(
      const std::vector<std::array<std::uint32_t, kFieldCount>>& lengths);
  // Fills docs_by_id_, id_rank_, servers_, doc_server_ and read_only_ from `tools`.
  void order_by_id_and_server(const std::vector<IndexedTool>& tools);
  // Whether `doc` passes the query's filters; `server` is the server filter's index.
  bool passes(std::uint32_t doc, const SearchQuery& query,
              std::optional<std::uint32_t> server) const;
  SearchResult list_by_id(const SearchQuery& query, std::optional<std::uint32_t> server) const;
  std::vector<Cursor> plan(std::string_view text) const;
  // Adds the cursors of one query term in slot `slot`: the exact term, its synonyms and,
  // for the last token, the longer tokens it prefixes.
  void add_cursors(const QueryTerm& term, std::size_t slot, std::vector<Cursor>& cursors) const;
  SearchResult rank(std::vector<Cursor> cursors, const SearchQuery& query,
                    std::optional<std::uint32_t> server) const;
  // Adds the scores of docs [window_begin, window_begin + window_scores.size()) and moves
  // every cursor past them; slot_scores is zeroed scratch of the same size.
  void score_window(std::vector<Cursor>& cursors, std::uint32_t window_begin,
                    std::span<double> window_scores, std::span<double> slot_scores) const;
  // The first term not ordered before `text`.
  std::vector<Term>::const_iterator first_term_from(std::string_view text) const;
  // A posting's BM25F term frequency: field-weighted, length-normalised, saturated.
  static double saturated_frequency(const FieldFrequencies& tf, const FieldNorms& norms);
  // Appends `added` to texts_, which the caller reserved for it.
  TextSpan add_text(std::string_view added);
  std::string_view text_of(TextSpan span) const { return {texts_.data() + span.begin, span.size}; }

  std::string texts_;        // every term's text and synonym stem, end to end
  std::vector<Term> terms_;  // sorted by text
  // The postings, each term's run ascending by doc: the doc and its saturated_frequency(),
  // computed while rebuilding (a search multiplies it by the term's IDF and weight), kept
  // apart so that neither pads the other.
  std::vector<std::uint32_t> posting_docs_;
  std::vector<float> posting_weights_;
  std::vector<Synonym> synonyms_;  // sorted by stem
  std::vector<std::uint32_t> synonym_targets_;
  std::vector<std::uint32_t> docs_by_id_;  // docs in tool id order
  std::vector<std::uint32_t> id_rank_;     // doc -> position in docs_by_id_
  std::vector<std::string> servers_;       // distinct server names, sorted
  std::vector<std::uint32_t> doc_server_;  // doc -> index into servers_
  std::vector<bool> read_only_;            // doc -> annotations.readOnlyHint
  std::vector<std::string> unlooked_words_;
};

}  // namespace sluice::gateway
