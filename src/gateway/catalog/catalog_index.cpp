#include "gateway/catalog/catalog_index.hpp"

#include "core/ascii.hpp"
#include "gateway/catalog/synonyms.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <span>
#include <unordered_map>
#include <utility>

namespace sluice::gateway {
namespace {
namespace bj = boost::json;

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
constexpr double kPrefixWeight = 0.5;
constexpr std::size_t kWindowDocs = 1024;   // docs scored together by one pass of rank()
constexpr std::size_t kMinSynonymWord = 3;  // shorter words get no synonyms

// Fields in the order of Posting::tf: name, title, description, parameters, server.
constexpr std::size_t kNameField = 0;
constexpr std::size_t kDescriptionField = 2;
constexpr std::size_t kServerField = 4;
constexpr std::array<double, 5> kFieldWeights = {3.0, 2.0, 1.0, 1.5, 0.5};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Calls visit(std::string_view) for each whitespace-separated word of `text`.
template <typename Visit>
void for_each_word(std::string_view text, Visit&& visit) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) visit(text.substr(start, i - start));
  }
}

bool all_letters(std::string_view word) {
  return std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

std::string string_member(const bj::object& object, std::string_view key) {
  const bj::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : "";
}

}  // namespace

IndexedTool indexed_tool(std::string_view server, const bj::object& object) {
  IndexedTool tool;
  tool.server = std::string(server);
  tool.tool_name = string_member(object, "name");
  tool.title = string_member(object, "title");
  tool.description = string_member(object, "description");
  const bj::value* annotations = object.if_contains("annotations");
  if (annotations != nullptr && annotations->is_object()) {
    if (tool.title.empty()) tool.title = string_member(annotations->get_object(), "title");
    const bj::value* hint = annotations->get_object().if_contains("readOnlyHint");
    tool.read_only = hint != nullptr && hint->is_bool() && hint->get_bool();
  }
  const bj::value* schema = object.if_contains("inputSchema");
  if (schema != nullptr && schema->is_object()) {
    const bj::value* properties = schema->get_object().if_contains("properties");
    if (properties != nullptr && properties->is_object()) {
      for (const auto& property : properties->get_object()) {
        tool.parameters.emplace_back(property.key());
      }
    }
  }
  return tool;
}

IndexedTool indexed_tool(std::string_view server, std::string_view raw) {
  boost::system::error_code error;
  const bj::value parsed = bj::parse(raw, error);
  if (!error && parsed.is_object()) return indexed_tool(server, parsed.get_object());
  IndexedTool tool;
  tool.server = std::string(server);
  // A summary: [name, title, description, [parameter names], readOnly].
  const bj::array* a = !error && parsed.is_array() ? &parsed.get_array() : nullptr;
  if (a == nullptr || a->size() != 5 || !(*a)[3].is_array() || !(*a)[4].is_bool()) return tool;
  for (auto [field, at] :
       {std::pair{&tool.tool_name, 0}, {&tool.title, 1}, {&tool.description, 2}}) {
    if ((*a)[at].is_string()) *field = (*a)[at].get_string();
  }
  for (const bj::value& name : (*a)[3].get_array()) {
    if (name.is_string()) tool.parameters.emplace_back(name.get_string());
  }
  tool.read_only = (*a)[4].get_bool();
  return tool;
}

std::string summary_text(const IndexedTool& tool) {
  bj::array parameters(tool.parameters.begin(), tool.parameters.end());
  return bj::serialize(bj::array{tool.tool_name, tool.title, tool.description,
                                 std::move(parameters), tool.read_only});
}

// One posting list being walked by CatalogIndex::rank(): its next posting, the weight times
// the IDF of its term, and the query slot (distinct query term) the term scores for.
struct CatalogIndex::Cursor {
  std::uint32_t next;  // positions in posting_docs_ and posting_weights_
  std::uint32_t end;
  double factor;
  std::size_t slot;
};

struct CatalogIndex::Candidate {
  double score;
  std::uint32_t id_rank;
  std::uint32_t doc;
};

// One distinct term of a query: a token's stem (which synonyms expand) or a word taken whole.
struct CatalogIndex::QueryTerm {
  std::string text;
  bool token;
};

// The terms met while rebuilding, in first-seen order, each with its postings so far, and
// the words (tokens as written) that produced them, for the synonym lookup.
class CatalogIndex::TermTable {
 public:
  // Adds the postings of `tool` as doc `doc` and returns its field lengths in tokens, stop
  // words not counted.
  std::array<std::uint32_t, kFieldCount> add_tool(const IndexedTool& tool, std::uint32_t doc) {
    std::array<std::uint32_t, kFieldCount> lengths{};
    occurrences_.clear();
    std::size_t name_tokens = 0;
    const auto add_field = [&](std::string_view text, std::size_t field) {
      for_each_token(text, [&](std::string_view token) {
        const Word& word = word_of(token, field != kDescriptionField && field != kServerField);
        occurrences_.emplace_back(word.term, field);
        if (!word.stop) ++lengths[field];
        if (field == kNameField) ++name_tokens;
      });
    };
    add_field(tool.tool_name, kNameField);
    add_field(tool.title, 1);
    add_field(tool.description, kDescriptionField);
    for (const std::string& parameter : tool.parameters) add_field(parameter, 3);
    add_field(tool.server, kServerField);
    // The whole name and the whole id are extra name terms; they do not lengthen the field.
    // A one-token name whose stem is the name already is its own whole-name term.
    const std::string whole_name = core::ascii::lowered(tool.tool_name);
    if (name_tokens != 1 || entries_[occurrences_.front().first].text != whole_name) {
      occurrences_.emplace_back(intern(whole_name, false), kNameField);
    }
    occurrences_.emplace_back(intern(core::ascii::lowered(tool.server) + "::" + whole_name, false),
                              kNameField);

    std::sort(occurrences_.begin(), occurrences_.end());
    for (std::size_t i = 0; i < occurrences_.size();) {
      const std::uint32_t term = occurrences_[i].first;
      Posting posting{doc, {}};
      for (; i < occurrences_.size() && occurrences_[i].first == term; ++i) {
        std::uint8_t& tf = posting.tf[occurrences_[i].second];
        if (tf < std::numeric_limits<std::uint8_t>::max()) ++tf;
      }
      entries_[term].postings.push_back(posting);
    }
    return lengths;
  }

  // Looks up the synonyms of every word met (Thesaurus), as (synonym stem, term) pairs.
  // WordNet is read for at most `wordnet_lookups` words not cached yet; the words left out
  // are appended to `unlooked`.
  void find_synonyms(std::size_t wordnet_lookups, std::vector<std::string>& unlooked) {
    WordNetBudget budget{wordnet_lookups, &unlooked};
    Thesaurus& thesaurus = Thesaurus::shared();
    std::vector<std::string> stems;
    for (const Word& word : words_) {
      if (word.stop || word.text.size() < kMinSynonymWord || !all_letters(word.text)) continue;
      stems.clear();
      thesaurus.synonym_stems(word.text, entries_[word.term].text, word.key_field, budget, stems);
      for (std::string& stem : stems) synonym_pairs_.emplace_back(std::move(stem), word.term);
    }
  }

  // Moves every term into `index`, sorted by text, with its IDF over the docs (one per entry
  // of `norms`) and its postings weighed with the docs' `norms`, and
  // the synonym pairs as index.synonyms_. Every text lands in index.texts_, reserved once, so
  // the index keeps a few large blocks rather than one small one per term.
  void move_into(CatalogIndex& index, const std::vector<FieldNorms>& norms) {
    const auto doc_count = static_cast<std::uint32_t>(norms.size());
    std::vector<std::uint32_t> order(entries_.size());
    std::iota(order.begin(), order.end(), 0U);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return entries_[a].text < entries_[b].text;
    });
    std::vector<std::uint32_t> position(entries_.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    std::size_t text_bytes = sort_synonyms(position);
    std::size_t posting_count = 0;
    for (const Entry& entry : entries_) {
      posting_count += entry.postings.size();
      text_bytes += entry.text.size();
    }
    assert(posting_count < std::numeric_limits<std::uint32_t>::max());
    assert(text_bytes < std::numeric_limits<std::uint32_t>::max());
    index.texts_.reserve(text_bytes);
    index.terms_.reserve(entries_.size());
    index.posting_docs_.reserve(posting_count);
    index.posting_weights_.reserve(posting_count);
    for (const std::uint32_t id : order) {
      const Entry& entry = entries_[id];
      const auto matching = static_cast<double>(entry.postings.size());
      const auto first = static_cast<std::uint32_t>(index.posting_docs_.size());
      for (const Posting& posting : entry.postings) {
        index.posting_docs_.push_back(posting.doc);
        index.posting_weights_.push_back(
            static_cast<float>(saturated_frequency(posting.tf, norms[posting.doc])));
      }
      index.terms_.push_back({index.add_text(entry.text), first,
                              static_cast<std::uint32_t>(index.posting_docs_.size()),
                              std::log(1.0 + (doc_count - matching + 0.5) / (matching + 0.5)),
                              entry.is_token});
    }
    move_synonyms_into(index);
  }

 private:
  struct Entry {
    std::string text;
    bool is_token;
    std::vector<Posting> postings;
  };
  struct Word {
    std::string text;  // as tokenised, before stemming
    std::uint32_t term;
    bool stop;
    bool key_field;  // met in a name, title or parameter name: looked up in WordNet
  };

  const Word& word_of(std::string_view token, bool key_field) {
    auto it = word_ids_.find(token);
    if (it == word_ids_.end()) {
      const std::uint32_t term = intern(stemmer_.stem(token), true);
      words_.push_back({std::string(token), term, is_stop_word(token), key_field});
      it = word_ids_.emplace(words_.back().text, static_cast<std::uint32_t>(words_.size() - 1))
               .first;
    }
    Word& word = words_[it->second];
    word.key_field = word.key_field || key_field;
    return word;
  }

  std::uint32_t intern(std::string_view text, bool is_token) {
    auto it = ids_.find(text);
    if (it == ids_.end()) {
      entries_.push_back({std::string(text), is_token, {}});
      it =
          ids_.emplace(entries_.back().text, static_cast<std::uint32_t>(entries_.size() - 1)).first;
    } else if (is_token) {
      entries_[it->second].is_token = true;
    }
    return it->second;
  }

  // Maps the synonym pairs' terms to their `position` in the index, sorts them and drops
  // repeats; returns the bytes of their distinct stems.
  std::size_t sort_synonyms(const std::vector<std::uint32_t>& position) {
    for (auto& [stem, term] : synonym_pairs_) term = position[term];
    std::sort(synonym_pairs_.begin(), synonym_pairs_.end());
    synonym_pairs_.erase(std::unique(synonym_pairs_.begin(), synonym_pairs_.end()),
                         synonym_pairs_.end());
    std::size_t bytes = 0;
    distinct_stems_ = 0;
    for (std::size_t i = 0; i < synonym_pairs_.size(); ++i) {
      if (i > 0 && synonym_pairs_[i].first == synonym_pairs_[i - 1].first) continue;
      bytes += synonym_pairs_[i].first.size();
      ++distinct_stems_;
    }
    return bytes;
  }

  void move_synonyms_into(CatalogIndex& index) {
    index.synonym_targets_.reserve(synonym_pairs_.size());
    index.synonyms_.reserve(distinct_stems_);
    for (std::size_t i = 0; i < synonym_pairs_.size();) {
      const std::size_t first = i;
      const auto first_target = static_cast<std::uint32_t>(index.synonym_targets_.size());
      for (; i < synonym_pairs_.size() && synonym_pairs_[i].first == synonym_pairs_[first].first;
           ++i) {
        index.synonym_targets_.push_back(synonym_pairs_[i].second);
      }
      index.synonyms_.push_back({index.add_text(synonym_pairs_[first].first), first_target,
                                 static_cast<std::uint32_t>(index.synonym_targets_.size())});
    }
  }

  // Deques, so that the views the maps keep of the texts stay valid while entries are added.
  std::deque<Entry> entries_;
  std::unordered_map<std::string_view, std::uint32_t> ids_;
  std::deque<Word> words_;
  std::unordered_map<std::string_view, std::uint32_t> word_ids_;
  std::vector<std::pair<std::uint32_t, std::size_t>> occurrences_;    // (term, field), one tool
  std::vector<std::pair<std::string, std::uint32_t>> synonym_pairs_;  // (stem, term)
  std::size_t distinct_stems_ = 0;  // among synonym_pairs_, once sorted
  Stemmer stemmer_;
};

void CatalogIndex::rebuild(std::vector<IndexedTool> tools, std::size_t wordnet_lookups) {
  assert(tools.size() < std::numeric_limits<std::uint32_t>::max());
  CatalogIndex next;
  const auto doc_count = static_cast<std::uint32_t>(tools.size());
  TermTable terms;
  std::vector<std::array<std::uint32_t, kFieldCount>> lengths;
  lengths.reserve(doc_count);
  for (std::uint32_t doc = 0; doc < doc_count; ++doc) {
    lengths.push_back(terms.add_tool(tools[doc], doc));
  }
  terms.find_synonyms(wordnet_lookups, next.unlooked_words_);
  terms.move_into(next, field_norms(lengths));
  next.order_by_id_and_server(tools);
  *this = std::move(next);
}

std::vector<CatalogIndex::FieldNorms> CatalogIndex::field_norms(
    const std::vector<std::array<std::uint32_t, kFieldCount>>& lengths) {
  std::vector<FieldNorms> norms(lengths.size());
  for (std::size_t field = 0; field < kFieldCount; ++field) {
    double total = 0.0;
    for (const auto& doc_lengths : lengths) total += doc_lengths[field];
    const double average = lengths.empty() ? 0.0 : total / static_cast<double>(lengths.size());
    for (std::size_t doc = 0; doc < lengths.size(); ++doc) {
      const double relative = average > 0.0 ? lengths[doc][field] / average : 0.0;
      norms[doc][field] = static_cast<float>(kFieldWeights[field] / (1.0 - kB + kB * relative));
    }
  }
  return norms;
}

void CatalogIndex::order_by_id_and_server(const std::vector<IndexedTool>& tools) {
  const auto doc_count = static_cast<std::uint32_t>(tools.size());
  docs_by_id_.resize(doc_count);
  std::iota(docs_by_id_.begin(), docs_by_id_.end(), 0U);
  std::vector<std::string> ids;
  ids.reserve(doc_count);
  for (const IndexedTool& tool : tools) ids.push_back(tool.server + "::" + tool.tool_name);
  std::stable_sort(docs_by_id_.begin(), docs_by_id_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
  id_rank_.resize(doc_count);
  for (std::uint32_t position = 0; position < doc_count; ++position) {
    id_rank_[docs_by_id_[position]] = position;
  }

  std::vector<std::string_view> names;
  names.reserve(doc_count);
  for (const IndexedTool& tool : tools) names.push_back(tool.server);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  servers_.assign(names.begin(), names.end());
  doc_server_.reserve(doc_count);
  read_only_.reserve(doc_count);
  for (const IndexedTool& tool : tools) {
    const auto it = std::lower_bound(servers_.begin(), servers_.end(), tool.server);
    doc_server_.push_back(static_cast<std::uint32_t>(it - servers_.begin()));
    read_only_.push_back(tool.read_only);
  }
}

SearchResult CatalogIndex::search(const SearchQuery& query) const {
  std::optional<std::uint32_t> server;
  if (query.server) {
    const auto it = std::lower_bound(servers_.begin(), servers_.end(), *query.server);
    if (it == servers_.end() || *it != *query.server) return {{}, 0};
    server = static_cast<std::uint32_t>(it - servers_.begin());
  }
  if (std::all_of(query.text.begin(), query.text.end(), is_space)) {
    return list_by_id(query, server);
  }
  return rank(plan(query.text), query, server);
}

bool CatalogIndex::passes(std::uint32_t doc, const SearchQuery& query,
                          std::optional<std::uint32_t> server) const {
  return (!server || doc_server_[doc] == *server) && (!query.read_only || read_only_[doc]) &&
         (!query.keep || query.keep(doc));
}

SearchResult CatalogIndex::list_by_id(const SearchQuery& query,
                                      std::optional<std::uint32_t> server) const {
  SearchResult result{{}, 0};
  for (const std::uint32_t doc : docs_by_id_) {
    if (!passes(doc, query, server)) continue;
    ++result.total_matches;
    if (result.hits.size() < query.limit) result.hits.push_back({doc, 0.0});
  }
  return result;
}

std::vector<CatalogIndex::Cursor> CatalogIndex::plan(std::string_view text) const {
  // One slot per distinct query term (each token's stem, and each word taken whole). A
  // tool's score sums over slots the best weighted score among the slot's terms: its exact
  // term, its synonyms, and for the last token's slot also the longer tokens it prefixes.
  // Stop words count only in a query made of nothing else. Cursors come grouped by slot.
  bool only_stop_words = true;
  for_each_token(text, [&](std::string_view token) {
    only_stop_words = only_stop_words && is_stop_word(token);
  });
  const auto skipped = [&](std::string_view token) {
    return !only_stop_words && is_stop_word(token);
  };
  std::vector<QueryTerm> slot_terms;
  const auto slot_of = [&](std::string_view term, bool token) -> std::optional<std::size_t> {
    for (std::size_t slot = 0; slot < slot_terms.size(); ++slot) {
      if (slot_terms[slot].text != term) continue;
      slot_terms[slot].token = slot_terms[slot].token || token;
      return slot;
    }
    if (slot_terms.size() == kMaxQueryTerms) return std::nullopt;
    slot_terms.push_back({std::string(term), token});
    return slot_terms.size() - 1;
  };
  std::optional<std::size_t> last_slot;
  std::string last_token;
  for_each_word(text, [&](std::string_view word) {
    std::size_t word_tokens = 0;
    std::string word_stem;
    for_each_token(word, [&](std::string_view token) {
      ++word_tokens;
      if (skipped(token)) return;
      word_stem = stem(token);
      if (const auto slot = slot_of(word_stem, true)) {
        last_slot = slot;
        last_token = token;
      }
    });
    const std::string whole = core::ascii::lowered(word);
    if ((word_tokens != 1 || word_stem != whole) && !skipped(whole)) slot_of(whole, false);
  });

  std::vector<Cursor> cursors;
  for (std::size_t slot = 0; slot < slot_terms.size(); ++slot) {
    add_cursors(slot_terms[slot], slot, cursors);
  }
  if (last_slot && last_token.size() >= kMinPrefixLength) {
    for (auto term = first_term_from(last_token);
         term != terms_.end() && text_of(term->text).starts_with(last_token); ++term) {
      if (term->is_token && term->text.size > last_token.size()) {
        cursors.push_back(
            {term->first_posting, term->end_posting, kPrefixWeight * term->idf, *last_slot});
      }
    }
  }
  std::stable_sort(cursors.begin(), cursors.end(),
                   [](const Cursor& a, const Cursor& b) { return a.slot < b.slot; });
  return cursors;
}

void CatalogIndex::add_cursors(const QueryTerm& query_term, std::size_t slot,
                               std::vector<Cursor>& cursors) const {
  const auto add_cursor = [&](const Term& term, double factor) {
    cursors.push_back({term.first_posting, term.end_posting, factor, slot});
  };
  const auto exact = first_term_from(query_term.text);
  const bool found = exact != terms_.end() && text_of(exact->text) == query_term.text;
  if (found) add_cursor(*exact, exact->idf);
  if (!query_term.token) return;
  const auto synonym = std::lower_bound(
      synonyms_.begin(), synonyms_.end(), query_term.text,
      [&](const Synonym& entry, std::string_view stem) { return text_of(entry.stem) < stem; });
  if (synonym == synonyms_.end() || text_of(synonym->stem) != query_term.text) return;
  for (std::uint32_t i = synonym->first_target; i < synonym->end_target; ++i) {
    const Term& target = terms_[synonym_targets_[i]];
    if (found && &target == &*exact) continue;
    add_cursor(target, kSynonymWeight * (found ? std::min(target.idf, exact->idf) : target.idf));
  }
}

SearchResult CatalogIndex::rank(std::vector<Cursor> cursors, const SearchQuery& query,
                                std::optional<std::uint32_t> server) const {
  // Score window by window: each window covers kWindowDocs consecutive docs starting at the
  // smallest doc any list still has, so memory stays fixed and gaps are skipped. Every
  // scored doc is then offered to a heap of the best `limit`, whose front is the worst one
  // kept. Every term score is positive (IDF, weights and norms are), so the docs matched in
  // a window are exactly those whose score is above zero.
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.score > b.score || (a.score == b.score && a.id_rank < b.id_rank);
  };
  const std::size_t limit = query.limit;
  std::array<double, kWindowDocs> window_scores{};
  std::array<double, kWindowDocs> slot_scores{};
  std::vector<Candidate> kept;
  std::size_t total = 0;
  while (true) {
    std::uint32_t window_begin = std::numeric_limits<std::uint32_t>::max();
    for (const Cursor& cursor : cursors) {
      if (cursor.next != cursor.end) {
        window_begin = std::min(window_begin, posting_docs_[cursor.next]);
      }
    }
    if (window_begin == std::numeric_limits<std::uint32_t>::max()) break;
    const std::size_t window_size = std::min(kWindowDocs, size() - window_begin);
    score_window(cursors, window_begin, std::span(window_scores).first(window_size),
                 std::span(slot_scores).first(window_size));

    for (std::size_t offset = 0; offset < window_size; ++offset) {
      if (window_scores[offset] == 0.0) continue;
      const auto doc = static_cast<std::uint32_t>(window_begin + offset);
      const Candidate candidate{window_scores[offset], id_rank_[doc], doc};
      window_scores[offset] = 0.0;
      if (!passes(doc, query, server)) continue;
      ++total;
      if (kept.size() < limit) {
        kept.push_back(candidate);
        std::push_heap(kept.begin(), kept.end(), better);
      } else if (limit > 0 && better(candidate, kept.front())) {
        std::pop_heap(kept.begin(), kept.end(), better);
        kept.back() = candidate;
        std::push_heap(kept.begin(), kept.end(), better);
      }
    }
  }

  std::sort_heap(kept.begin(), kept.end(), better);
  SearchResult result{{}, total};
  result.hits.reserve(kept.size());
  for (const Candidate& candidate : kept) result.hits.push_back({candidate.doc, candidate.score});
  return result;
}

void CatalogIndex::score_window(std::vector<Cursor>& cursors, std::uint32_t window_begin,
                                std::span<double> window_scores,
                                std::span<double> slot_scores) const {
  const std::size_t window_end = window_begin + window_scores.size();
  for (std::size_t first = 0; first < cursors.size();) {
    std::size_t last = first + 1;
    while (last < cursors.size() && cursors[last].slot == cursors[first].slot) ++last;
    // A slot of one term adds straight into the window; a slot of several keeps each doc's
    // best term in slot_scores and adds that.
    const bool single = last - first == 1;
    const std::span<double> target = single ? window_scores : slot_scores;
    for (std::size_t i = first; i < last; ++i) {
      Cursor& cursor = cursors[i];
      for (; cursor.next != cursor.end && posting_docs_[cursor.next] < window_end; ++cursor.next) {
        const std::uint32_t doc = posting_docs_[cursor.next];
        double& slot_score = target[doc - window_begin];
        const double score = cursor.factor * posting_weights_[cursor.next];
        slot_score = single ? slot_score + score : std::max(slot_score, score);
      }
    }
    if (!single) {
      for (std::size_t offset = 0; offset < slot_scores.size(); ++offset) {
        window_scores[offset] += slot_scores[offset];
        slot_scores[offset] = 0.0;
      }
    }
    first = last;
  }
}

CatalogIndex::TextSpan CatalogIndex::add_text(std::string_view added) {
  const TextSpan span{static_cast<std::uint32_t>(texts_.size()),
                      static_cast<std::uint32_t>(added.size())};
  texts_ += added;
  return span;
}

std::vector<CatalogIndex::Term>::const_iterator CatalogIndex::first_term_from(
    std::string_view text) const {
  return std::lower_bound(
      terms_.begin(), terms_.end(), text,
      [&](const Term& term, std::string_view s) { return text_of(term.text) < s; });
}

double CatalogIndex::saturated_frequency(const FieldFrequencies& tf, const FieldNorms& norms) {
  double frequency = 0.0;
  for (std::size_t field = 0; field < kFieldCount; ++field) {
    frequency += tf[field] * static_cast<double>(norms[field]);
  }
  return frequency * (kK1 + 1.0) / (kK1 + frequency);
}

}  // namespace sluice::gateway
