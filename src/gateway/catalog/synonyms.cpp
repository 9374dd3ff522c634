#include "gateway/catalog/synonyms.hpp"

#include "core/ascii.hpp"
#include "gateway/catalog/analyzer.hpp"

#include <wn.h>

#include <algorithm>

namespace sluice::gateway {
namespace {

struct CuratedRow {
  std::string_view word;
  std::string_view alternatives;  // space-separated; each pairs with `word` both ways
};

// Words agents use for what tools of MCP servers call otherwise, where WordNet has no link
// (or only through a rare sense). Rows pair the first word with each alternative, not the
// alternatives with one another.
constexpr CuratedRow kCurated[] = {
    {"folder", "directory dir"},
    {"dir", "directory"},
    {"mkdir", "create directory"},
    {"ls", "list directory"},
    {"cat", "read"},
    {"mv", "move rename"},
    {"rm", "delete remove"},
    {"grep", "search"},
    {"make", "create"},
    {"new", "create"},
    {"add", "create insert sum"},
    {"remember", "create add save store observation"},
    {"store", "save write create add"},
    {"save", "write create"},
    {"forget", "delete remove"},
    {"remove", "delete"},
    {"erase", "delete remove"},
    {"drop", "delete remove"},
    {"look", "search find get"},
    {"lookup", "search find"},
    {"find", "search query"},
    {"query", "search"},
    {"fetch", "get read retrieve"},
    {"retrieve", "get read"},
    {"show", "get read list view display"},
    {"view", "read get open"},
    {"open", "read"},
    {"display", "list"},
    {"rename", "move"},
    {"change", "edit update modify"},
    {"modify", "edit update"},
    {"update", "edit"},
    {"patch", "edit diff"},
    {"overwrite", "write"},
    {"print", "get show echo"},
    {"repeat", "echo"},
    {"dump", "read export"},
    {"link", "relation connect reference"},
    {"relationship", "relation"},
    {"connect", "relation"},
    {"fact", "observation"},
    {"note", "observation"},
    {"person", "entity"},
    {"people", "entity"},
    {"someone", "entity"},
    {"node", "entity"},
    {"memory", "knowledge graph"},
    {"picture", "image"},
    {"photo", "image"},
    {"small", "tiny"},
    {"little", "tiny"},
    {"big", "size large"},
    {"compress", "gzip zip archive"},
    {"zip", "gzip archive"},
    {"shrink", "compress"},
    {"env", "environment"},
    {"variable", "env"},
    {"config", "configuration"},
    {"log", "logging"},
    {"calculate", "sum compute"},
    {"total", "sum"},
    {"think", "thought thinking reason"},
    {"reasoning", "thinking thought"},
    {"step", "sequential sequence"},
    {"info", "information metadata details"},
    {"metadata", "information"},
    {"allowed", "permitted access"},
    {"tree", "recursive hierarchy"},
    {"pattern", "glob match"},
    {"multiple", "several many batch"},
    {"list", "enumerate"},
    {"toggle", "enable disable switch turn"},
    {"slow", "long"},
    {"content", "contents text"},
    {"document", "file"},
    {"doc", "document file"},
    {"media", "image audio video"},
    {"subscription", "subscriber subscribe"},
    {"notification", "update notify"},
    {"relation", "link"},
};

template <typename Visit>
void for_each_synonym_word(std::string_view spaced, Visit&& visit) {
  std::size_t begin = 0;
  while (begin < spaced.size()) {
    std::size_t end = spaced.find(' ', begin);
    if (end == std::string_view::npos) end = spaced.size();
    if (end > begin) visit(spaced.substr(begin, end - begin));
    begin = end + 1;
  }
}

// A WordNet lemma as a plain word: lower case, without an adjective marker such as
// "(a)"; empty for collocations ("call_back") and anything not made of ASCII letters.
std::string plain_word(const char* lemma) {
  std::string word;
  for (const char* c = lemma; *c != '\0' && *c != '('; ++c) {
    const char lower = core::ascii::to_lower(*c);
    if (lower < 'a' || lower > 'z') return {};
    word.push_back(lower);
  }
  return word;
}

// Adds the words of the first kWordNetSenses synsets of `form` as part of speech `pos`.
void add_senses(const std::string& form, int pos, std::vector<std::string>& words) {
  std::string buffer = form;  // WordNet takes mutable C strings
  IndexPtr index = index_lookup(buffer.data(), pos);
  if (index == nullptr) return;
  const int senses = std::min(index->off_cnt, Thesaurus::kWordNetSenses);
  for (int sense = 0; sense < senses; ++sense) {
    SynsetPtr synset = read_synset(pos, static_cast<long>(index->offset[sense]), buffer.data());
    if (synset == nullptr) continue;
    for (int w = 0; w < synset->wcount; ++w) {
      std::string word = plain_word(synset->words[w]);
      if (!word.empty()) words.push_back(std::move(word));
    }
    free_synset(synset);
  }
  free_index(index);
}

}  // namespace

Thesaurus& Thesaurus::shared() {
  static Thesaurus thesaurus;
  return thesaurus;
}

Thesaurus::Thesaurus() : wordnet_open_(wninit() == 0) {
  for (const CuratedRow& row : kCurated) {
    const std::string word = stem(row.word);
    for_each_synonym_word(row.alternatives, [&](std::string_view alternative) {
      const std::string other = stem(alternative);
      curated_[word].push_back(other);
      curated_[other].push_back(word);
    });
  }
}

bool Thesaurus::wordnet_available() {
  const std::lock_guard lock(mutex_);
  return wordnet_open_;
}

void Thesaurus::synonym_stems(std::string_view word, std::string_view word_stem, bool with_wordnet,
                              WordNetBudget& budget, std::vector<std::string>& out) {
  const std::lock_guard lock(mutex_);
  if (const auto it = curated_.find(std::string(word_stem)); it != curated_.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  if (!with_wordnet || !wordnet_open_) return;
  std::string key(word);
  auto cached = wordnet_cache_.find(key);
  if (cached == wordnet_cache_.end()) {
    if (wordnet_cache_.size() >= kMaxCachedWords) return;
    if (budget.lookups == 0) {
      if (budget.missed) budget.missed->push_back(std::move(key));
      return;
    }
    --budget.lookups;
    std::string stems = look_up(key);
    cached = wordnet_cache_.emplace(std::move(key), std::move(stems)).first;
  }
  for_each_synonym_word(cached->second, [&](std::string_view synonym) {
    if (synonym != word_stem) out.emplace_back(synonym);
  });
}

void Thesaurus::look_up_words(const std::vector<std::string>& words,
                              const std::atomic<bool>& stop) {
  for (const std::string& word : words) {
    if (stop.load(std::memory_order_relaxed)) return;
    const std::lock_guard lock(mutex_);
    if (!wordnet_open_ || wordnet_cache_.size() >= kMaxCachedWords) return;
    if (wordnet_cache_.count(word) == 0) wordnet_cache_.emplace(word, look_up(word));
  }
}

std::string Thesaurus::look_up(const std::string& word) {
  std::vector<std::string> words;
  for (const int pos : {NOUN, VERB, ADJ}) {
    add_senses(word, pos, words);
    std::string buffer = word;
    if (const char* base = morphstr(buffer.data(), pos); base != nullptr && word != base) {
      add_senses(base, pos, words);
    }
  }
  std::vector<std::string> stems;
  stems.reserve(words.size());
  for (const std::string& synonym : words) stems.push_back(stem(synonym));
  std::sort(stems.begin(), stems.end());
  stems.erase(std::unique(stems.begin(), stems.end()), stems.end());
  std::string spaced;
  for (const std::string& s : stems) {
    if (!spaced.empty()) spaced.push_back(' ');
    spaced += s;
  }
  return spaced;
}

}  // namespace sluice::gateway
