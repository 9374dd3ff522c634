#pragma once
// Text analysis for the catalog's full-text index: the same steps for a tool's text and for
// a query, so that both meet on the same terms.
//
// - Splitting: a token ends at every ASCII character that is not a letter or digit, before
//   an upper-case letter that follows a lower-case letter or a digit (`readFile`,
//   `v2Config`), and before the last capital of an acronym that starts a word
//   (`HTTPServer` -> http, server). Tokens are lower-cased ASCII; bytes >= 0x80 stay inside
//   tokens unchanged. So snake_case, camelCase, kebab-case and dotted names split alike.
// - Stop words: a fixed list of English function words ("a", "an", "the", "to", "of", ...)
//   that carry no meaning in a search (is_stop_word).
// - Stemming: Snowball's English stemmer (libstemmer), so "entity" and "entities" meet on
//   one term. A token with a byte >= 0x80 or a digit is kept as it is.
//
// Threading: every function may be called from any thread. Stemmer keeps libstemmer's
// scratch buffer, so one Stemmer belongs to one thread at a time; stem() uses one per
// thread. Errors: none but std::bad_alloc.
#include <string>
#include <string_view>
#include <vector>
#include "core/ascii.hpp"

struct sb_stemmer;

namespace sluice::gateway {

// Calls emit(std::string_view token) for each lower-cased token of `text`, in order; the
// view is valid only during the call.
template <typename Emit>
void for_each_token(std::string_view text, Emit&& emit);

// The tokens of `text`, in order, duplicates and stop words kept, not stemmed.
std::vector<std::string> search_tokens(std::string_view text);

// Whether the lower-case `token` is one of the fixed English stop words.
bool is_stop_word(std::string_view token);

// Snowball's English stemmer. Owns its libstemmer state; not copyable; one thread at a time.
class Stemmer {
 public:
  Stemmer();
  ~Stemmer();
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  // The stem of the lower-case `token`; valid until the next call on this Stemmer. A token
  // with a digit or a byte >= 0x80, or one longer than kMaxStemmed bytes, is its own stem.
  std::string_view stem(std::string_view token);

  static constexpr std::size_t kMaxStemmed = 64;

 private:
  sb_stemmer* stemmer_;
};

// The stem of the lower-case `token` by this thread's Stemmer, copied.
std::string stem(std::string_view token);

namespace analyzer_detail {

enum class CharClass { kSeparator, kLower, kUpper, kDigit, kNonAscii };

inline CharClass classify(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x80) return CharClass::kNonAscii;
  if (byte >= 'a' && byte <= 'z') return CharClass::kLower;
  if (byte >= 'A' && byte <= 'Z') return CharClass::kUpper;
  if (byte >= '0' && byte <= '9') return CharClass::kDigit;
  return CharClass::kSeparator;
}

}  // namespace analyzer_detail

template <typename Emit>
void for_each_token(std::string_view text, Emit&& emit) {
  using analyzer_detail::CharClass;
  using analyzer_detail::classify;
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
    if (current != CharClass::kSeparator) {
      token.push_back(core::ascii::to_lower(text[i]));
    }
    previous = current;
  }
  if (!token.empty()) emit(std::string_view(token));
}

}  // namespace sluice::gateway
