#include "gateway/catalog/analyzer.hpp"

#include <libstemmer.h>

#include <algorithm>
#include <iterator>
#include <new>

namespace sluice::gateway {
namespace {

// English function words, sorted for binary search: words an agent types around what it
// means ("how do I make a new folder") that would otherwise decide rankings.
constexpr std::string_view kStopWords[] = {
    "a",     "about",  "all",   "also",  "am",    "an",     "and",   "any",        "anything",
    "are",   "as",     "at",    "be",    "been",  "being",  "but",   "by",         "can",
    "could", "did",    "do",    "does",  "doing", "each",   "every", "everything", "for",
    "from",  "had",    "has",   "have",  "he",    "her",    "here",  "him",        "his",
    "how",   "i",      "if",    "in",    "into",  "is",     "it",    "its",        "just",
    "let",   "lets",   "ll",    "may",   "me",    "might",  "mine",  "must",       "my",
    "need",  "no",     "not",   "of",    "off",   "on",     "onto",  "or",         "our",
    "out",   "please", "s",     "shall", "she",   "should", "so",    "some",       "something",
    "t",     "than",   "that",  "the",   "their", "them",   "then",  "there",      "these",
    "they",  "this",   "those", "to",    "too",   "up",     "us",    "ve",         "very",
    "via",   "want",   "was",   "we",    "were",  "what",   "when",  "where",      "which",
    "who",   "whom",   "whose", "why",   "will",  "with",   "would", "you",        "your",
    "yours",
};
static_assert(std::is_sorted(std::begin(kStopWords), std::end(kStopWords)));

bool stemmable(std::string_view token) {
  return token.size() <= Stemmer::kMaxStemmed &&
         std::all_of(token.begin(), token.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

}  // namespace

std::vector<std::string> search_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  for_each_token(text, [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

bool is_stop_word(std::string_view token) {
  return std::binary_search(std::begin(kStopWords), std::end(kStopWords), token);
}

Stemmer::Stemmer() : stemmer_(sb_stemmer_new("english", nullptr)) {
  if (stemmer_ == nullptr) throw std::bad_alloc();
}

Stemmer::~Stemmer() { sb_stemmer_delete(stemmer_); }

std::string_view Stemmer::stem(std::string_view token) {
  if (!stemmable(token)) return token;
  const sb_symbol* stemmed = sb_stemmer_stem(
      stemmer_, reinterpret_cast<const sb_symbol*>(token.data()), static_cast<int>(token.size()));
  if (stemmed == nullptr) throw std::bad_alloc();
  return {reinterpret_cast<const char*>(stemmed),
          static_cast<std::size_t>(sb_stemmer_length(stemmer_))};
}

std::string stem(std::string_view token) {
  thread_local Stemmer stemmer;
  return std::string(stemmer.stem(token));
}

}  // namespace sluice::gateway
