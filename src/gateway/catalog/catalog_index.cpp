#include "gateway/catalog/catalog_index.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <unordered_map>
#include <utility>

namespace sluice::gateway {
namespace {

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
constexpr double kPrefixWeight = 0.5;
constexpr std::size_t kWindowDocs = 1024;  // docs scored together by one pass of rank()

// Fields in the order of Posting::tf: name, title, description, server.
constexpr std::size_t kNameField = 0;
constexpr std::array<double, 4> kFieldWeights = {3.0, 2.0, 1.0, 0.5};

enum class CharClass { kSeparator, kLower, kUpper, kDigit, kNonAscii };

CharClass classify(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x80) return CharClass::kNonAscii;
  if (byte >= 'a' && byte <= 'z') return CharClass::kLower;
  if (byte >= 'A' && byte <= 'Z') return CharClass::kUpper;
  if (byte >= '0' && byte <= '9') return CharClass::kDigit;
  return CharClass::kSeparator;
}

char to_lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower_ascii(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), to_lower_ascii);
  return lower;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Calls emit(std::string_view) for each token of `text`, in order. A token ends at a
// separator, before an upper-case letter that follows a lower-case letter or a digit
// (`readFile`, `v2Config`), and before the last capital of an acronym that starts a word
// (`HTTPServer` -> http, server).
template <typename Emit>
void for_each_token(std::string_view text, Emit&& emit) {
  std::string token;
  CharClass previous = CharClass::kSeparator;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const CharClass current = classify(text[i]);
    const bool word_starts_here = current == CharClass::kUpper &&
                                  (previous == CharClass::kLower || previous == CharClass::kDigit ||
                                   (previous == CharClass::kUpper && i + 1 < text.size() &&
                                    classify(text[i + 1]) == CharClass::kLower));
    if ((current == CharClass::kSeparator || word_starts_here) && !token.empty()) {
      emit(std::string_view(token));
      token.clear();
    }
    if (current != CharClass::kSeparator) token.push_back(to_lower_ascii(text[i]));
    previous = current;
  }
  if (!token.empty()) emit(std::string_view(token));
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

}  // namespace

std::vector<std::string> search_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  for_each_token(text, [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

// One posting list being walked by CatalogIndex::rank(): its next posting, the weight times
// the IDF of its term, and the query slot (distinct query term) the term scores for.
struct CatalogIndex::Cursor {
  const Posting* next;
  const Posting* end;
  double factor;
  std::size_t slot;
};

struct CatalogIndex::Candidate {
  double score;
  std::uint32_t id_rank;
  std::uint32_t doc;
};

// The terms met while rebuilding, in first-seen order, each with its postings so far.
class CatalogIndex::TermTable {
 public:
  // Adds the postings of `tool` as doc `doc` and returns its field lengths in tokens.
  std::array<std::uint32_t, kFieldCount> add_tool(const IndexedTool& tool, std::uint32_t doc) {
    const std::array<std::string_view, kFieldCount> fields = {tool.tool_name, tool.title,
                                                              tool.description, tool.server};
    std::array<std::uint32_t, kFieldCount> lengths{};
    occurrences_.clear();
    for (std::size_t field = 0; field < kFieldCount; ++field) {
      for_each_token(fields[field], [&](std::string_view token) {
        occurrences_.emplace_back(intern(token, true), field);
        ++lengths[field];
      });
    }
    // The whole name and the whole id are extra name terms; they do not lengthen the field.
    // A one-token name already is its own whole-name term.
    const std::string whole_name = lower_ascii(tool.tool_name);
    if (lengths[kNameField] != 1 || entries_[occurrences_.front().first].text != whole_name) {
      occurrences_.emplace_back(intern(whole_name, false), kNameField);
    }
    occurrences_.emplace_back(intern(lower_ascii(tool.server) + "::" + whole_name, false),
                              kNameField);

    std::sort(occurrences_.begin(), occurrences_.end());
    for (std::size_t i = 0; i < occurrences_.size();) {
      const std::uint32_t term = occurrences_[i].first;
      Posting posting{doc, {}};
      for (; i < occurrences_.size() && occurrences_[i].first == term; ++i) {
        std::uint16_t& tf = posting.tf[occurrences_[i].second];
        if (tf < std::numeric_limits<std::uint16_t>::max()) ++tf;
      }
      entries_[term].postings.push_back(posting);
    }
    return lengths;
  }

  // Moves every term into `index`, sorted by text, with its IDF over `doc_count` docs.
  void move_into(CatalogIndex& index, std::uint32_t doc_count) {
    std::vector<std::uint32_t> order(entries_.size());
    std::iota(order.begin(), order.end(), 0U);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return entries_[a].text < entries_[b].text;
    });
    std::size_t posting_count = 0;
    for (const Entry& entry : entries_) posting_count += entry.postings.size();
    assert(posting_count < std::numeric_limits<std::uint32_t>::max());
    index.terms_.reserve(entries_.size());
    index.postings_.reserve(posting_count);
    for (const std::uint32_t id : order) {
      Entry& entry = entries_[id];
      const auto matching = static_cast<double>(entry.postings.size());
      const auto first = static_cast<std::uint32_t>(index.postings_.size());
      index.postings_.insert(index.postings_.end(), entry.postings.begin(), entry.postings.end());
      index.terms_.push_back(
          {std::move(entry.text), first, static_cast<std::uint32_t>(index.postings_.size()),
           std::log(1.0 + (doc_count - matching + 0.5) / (matching + 0.5)), entry.is_token});
    }
  }

 private:
  struct Entry {
    std::string text;
    bool is_token;
    std::vector<Posting> postings;
  };

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

  // A deque, so that the views ids_ keeps of the texts stay valid while entries are added.
  std::deque<Entry> entries_;
  std::unordered_map<std::string_view, std::uint32_t> ids_;
  std::vector<std::pair<std::uint32_t, std::size_t>> occurrences_;  // (term, field), one tool
};

void CatalogIndex::rebuild(std::vector<IndexedTool> tools) {
  assert(tools.size() < std::numeric_limits<std::uint32_t>::max());
  CatalogIndex next;
  next.tools_ = std::move(tools);
  const auto doc_count = static_cast<std::uint32_t>(next.tools_.size());
  TermTable terms;
  std::vector<std::array<std::uint32_t, kFieldCount>> lengths;
  lengths.reserve(doc_count);
  for (std::uint32_t doc = 0; doc < doc_count; ++doc) {
    lengths.push_back(terms.add_tool(next.tools_[doc], doc));
  }
  next.set_field_norms(lengths);
  terms.move_into(next, doc_count);
  next.order_by_id_and_server();
  *this = std::move(next);
}

void CatalogIndex::set_field_norms(
    const std::vector<std::array<std::uint32_t, kFieldCount>>& lengths) {
  field_norms_.resize(lengths.size());
  for (std::size_t field = 0; field < kFieldCount; ++field) {
    double total = 0.0;
    for (const auto& doc_lengths : lengths) total += doc_lengths[field];
    const double average = lengths.empty() ? 0.0 : total / static_cast<double>(lengths.size());
    for (std::size_t doc = 0; doc < lengths.size(); ++doc) {
      const double relative = average > 0.0 ? lengths[doc][field] / average : 0.0;
      field_norms_[doc][field] =
          static_cast<float>(kFieldWeights[field] / (1.0 - kB + kB * relative));
    }
  }
}

void CatalogIndex::order_by_id_and_server() {
  const auto doc_count = static_cast<std::uint32_t>(tools_.size());
  std::vector<std::string> ids;
  ids.reserve(doc_count);
  for (const IndexedTool& tool : tools_) ids.push_back(tool.server + "::" + tool.tool_name);
  docs_by_id_.resize(doc_count);
  std::iota(docs_by_id_.begin(), docs_by_id_.end(), 0U);
  std::stable_sort(docs_by_id_.begin(), docs_by_id_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
  id_rank_.resize(doc_count);
  for (std::uint32_t position = 0; position < doc_count; ++position) {
    id_rank_[docs_by_id_[position]] = position;
  }

  for (const IndexedTool& tool : tools_) servers_.push_back(tool.server);
  std::sort(servers_.begin(), servers_.end());
  servers_.erase(std::unique(servers_.begin(), servers_.end()), servers_.end());
  doc_server_.reserve(doc_count);
  for (const IndexedTool& tool : tools_) {
    const auto it = std::lower_bound(servers_.begin(), servers_.end(), tool.server);
    doc_server_.push_back(static_cast<std::uint32_t>(it - servers_.begin()));
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
    return list_by_id(query.limit, server);
  }
  return rank(plan(query.text), query.limit, server);
}

const IndexedTool& CatalogIndex::tool(std::size_t doc) const {
  assert(doc < tools_.size());
  return tools_[doc];
}

SearchResult CatalogIndex::list_by_id(std::size_t limit,
                                      std::optional<std::uint32_t> server) const {
  SearchResult result{{}, 0};
  for (const std::uint32_t doc : docs_by_id_) {
    if (server && doc_server_[doc] != *server) continue;
    ++result.total_matches;
    if (result.hits.size() < limit) result.hits.push_back({doc, 0.0});
  }
  return result;
}

std::vector<CatalogIndex::Cursor> CatalogIndex::plan(std::string_view text) const {
  // One slot per distinct query term (each token, and each word taken whole). A tool's score
  // sums over slots the best weighted score among the slot's terms: its exact term, and for
  // the last token's slot also the longer tokens it prefixes. Cursors come grouped by slot.
  std::vector<std::string> slot_terms;
  const auto slot_of = [&](std::string_view term) -> std::optional<std::size_t> {
    const auto it = std::find(slot_terms.begin(), slot_terms.end(), term);
    if (it != slot_terms.end()) return static_cast<std::size_t>(it - slot_terms.begin());
    if (slot_terms.size() == kMaxQueryTerms) return std::nullopt;
    slot_terms.emplace_back(term);
    return slot_terms.size() - 1;
  };
  std::optional<std::size_t> last_slot;
  for_each_word(text, [&](std::string_view word) {
    std::size_t word_tokens = 0;
    for_each_token(word, [&](std::string_view token) {
      ++word_tokens;
      if (const auto slot = slot_of(token)) last_slot = slot;
    });
    std::string whole = lower_ascii(word);
    if (word_tokens != 1 || !last_slot || slot_terms[*last_slot] != whole) slot_of(whole);
  });

  std::vector<Cursor> cursors;
  const auto add_cursor = [&](const Term& term, std::size_t slot, double weight) {
    cursors.push_back({postings_.data() + term.first_posting, postings_.data() + term.end_posting,
                       weight * term.idf, slot});
  };
  for (std::size_t slot = 0; slot < slot_terms.size(); ++slot) {
    const auto term = first_term_from(slot_terms[slot]);
    if (term != terms_.end() && term->text == slot_terms[slot]) add_cursor(*term, slot, 1.0);
  }
  if (last_slot && slot_terms[*last_slot].size() >= kMinPrefixLength) {
    const std::string_view prefix = slot_terms[*last_slot];
    for (auto term = first_term_from(prefix);
         term != terms_.end() && term->text.starts_with(prefix); ++term) {
      if (term->is_token && term->text.size() > prefix.size()) {
        add_cursor(*term, *last_slot, kPrefixWeight);
      }
    }
  }
  std::stable_sort(cursors.begin(), cursors.end(),
                   [](const Cursor& a, const Cursor& b) { return a.slot < b.slot; });
  return cursors;
}

SearchResult CatalogIndex::rank(std::vector<Cursor> cursors, std::size_t limit,
                                std::optional<std::uint32_t> server) const {
  // Score window by window: each window covers kWindowDocs consecutive docs starting at the
  // smallest doc any list still has, so memory stays fixed and gaps are skipped. Every
  // scored doc is then offered to a heap of the best `limit`, whose front is the worst one
  // kept. Every term score is positive (IDF, weights and norms are), so the docs matched in
  // a window are exactly those whose score is above zero.
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.score > b.score || (a.score == b.score && a.id_rank < b.id_rank);
  };
  std::array<double, kWindowDocs> window_scores{};
  std::array<double, kWindowDocs> slot_scores{};
  std::vector<Candidate> kept;
  std::size_t total = 0;
  while (true) {
    std::uint32_t window_begin = std::numeric_limits<std::uint32_t>::max();
    for (const Cursor& cursor : cursors) {
      if (cursor.next != cursor.end) window_begin = std::min(window_begin, cursor.next->doc);
    }
    if (window_begin == std::numeric_limits<std::uint32_t>::max()) break;
    const std::size_t window_size = std::min(kWindowDocs, tools_.size() - window_begin);
    score_window(cursors, window_begin, std::span(window_scores).first(window_size),
                 std::span(slot_scores).first(window_size));

    for (std::size_t offset = 0; offset < window_size; ++offset) {
      if (window_scores[offset] == 0.0) continue;
      const auto doc = static_cast<std::uint32_t>(window_begin + offset);
      const Candidate candidate{window_scores[offset], id_rank_[doc], doc};
      window_scores[offset] = 0.0;
      if (server && doc_server_[doc] != *server) continue;
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
      for (; cursor.next != cursor.end && cursor.next->doc < window_end; ++cursor.next) {
        double& slot_score = target[cursor.next->doc - window_begin];
        const double score = cursor.factor * saturated_frequency(*cursor.next);
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

std::vector<CatalogIndex::Term>::const_iterator CatalogIndex::first_term_from(
    std::string_view text) const {
  return std::lower_bound(terms_.begin(), terms_.end(), text,
                          [](const Term& term, std::string_view s) { return term.text < s; });
}

double CatalogIndex::saturated_frequency(const Posting& posting) const {
  const std::array<float, kFieldCount>& norms = field_norms_[posting.doc];
  double frequency = 0.0;
  for (std::size_t field = 0; field < kFieldCount; ++field) {
    frequency += posting.tf[field] * static_cast<double>(norms[field]);
  }
  return frequency * (kK1 + 1.0) / (kK1 + frequency);
}

}  // namespace sluice::gateway
