#pragma once
// Thesaurus: the synonyms the catalog's index expands a query with, as stems (analyzer.hpp):
// WordNet's (the first kWordNetSenses senses of each noun, verb and adjective reading of a
// word, single words only) and a small curated thesaurus of software verbs and nouns that
// WordNet does not link (folder~directory, make~create, forget~delete, look~search, ...).
// Curated pairs hold both ways; WordNet synsets are symmetric by construction.
//
// Ownership and threading: one process-wide instance (shared()), because WordNet's C library
// keeps global state and open files; a mutex serialises every use, so any thread may call.
// WordNet is read from disk only by look_up_words() and by synonym_stems() with with_wordnet
// set and a budget, for words not looked up before: never while searching. Results
// are cached per word for the life of the process (at most kMaxCachedWords words), so a
// rebuild pays only for new words, and each rebuild spends at most the budget it is given.
//
// Errors: WordNet missing or unreadable (its data files are not installed) leaves only the
// curated synonyms (wordnet_available() says so); nothing throws but std::bad_alloc.
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::gateway {

// WordNet lookups of words not cached yet that one rebuild may still make; the words left
// out for want of budget are appended to `missed` when it is set.
struct WordNetBudget {
  std::size_t lookups;
  std::vector<std::string>* missed = nullptr;
};

class Thesaurus {
 public:
  static constexpr int kWordNetSenses = 3;
  static constexpr std::size_t kMaxCachedWords = 50000;

  static Thesaurus& shared();

  // Appends to `out` the stems of the synonyms of `word` (a lower-case token whose stem is
  // `word_stem`), none equal to `word_stem`, duplicates possible: the curated ones always;
  // WordNet's when `with_wordnet` and the word is cached or `budget` allows a lookup (which
  // spends one). A word left out for want of budget is looked up by a later call.
  void synonym_stems(std::string_view word, std::string_view word_stem, bool with_wordnet,
                     WordNetBudget& budget, std::vector<std::string>& out);
  bool wordnet_available();
  // Looks up every word of `words` not cached yet (the gateway does this on a worker thread,
  // so that the loop never reads WordNet's files), until `stop` says so.
  void look_up_words(const std::vector<std::string>& words, const std::atomic<bool>& stop);

 private:
  Thesaurus();
  // WordNet's synonym stems of `word`, space-separated. Requires mutex_ held.
  std::string look_up(const std::string& word);

  std::mutex mutex_;
  bool wordnet_open_;
  std::unordered_map<std::string, std::vector<std::string>> curated_;  // stem -> stems
  std::unordered_map<std::string, std::string> wordnet_cache_;         // word -> stems, spaced
};

}  // namespace sluice::gateway
