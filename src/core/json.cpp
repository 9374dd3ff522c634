#include "core/json.hpp"

#include "core/json_strings.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_stack.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <forward_list>
#include <vector>

namespace sluice::core::json {
namespace bj = boost::json;

namespace {

// A small message's arena: the resource with its first block inside it, so the DOM of a
// typical call costs one allocation small enough for malloc's per-thread cache (a block of
// 1 KiB or more is a request malloc sorts its fast bins for, on every call). A DOM that
// outgrows the block goes on in blocks of its own, as monotonic_resource does.
class SmallArena final : public bj::memory_resource {
 public:
  // The longest text whose DOM usually fits in the first block (a DOM takes about four
  // bytes for each byte of a small call's text).
  static constexpr std::size_t kTextBytes = 224;

 private:
  void* do_allocate(std::size_t n, std::size_t align) override { return arena_.allocate(n, align); }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  bool do_is_equal(const bj::memory_resource& other) const noexcept override {
    return this == &other;
  }

  alignas(std::max_align_t) unsigned char first_[880];
  bj::monotonic_resource arena_{first_, sizeof first_};
};
static_assert(sizeof(SmallArena) <= 1000, "within malloc's per-thread cache (1032 bytes)");

}  // namespace
}  // namespace sluice::core::json

// Like monotonic_resource's: a value in it frees nothing, so its destructor need not run.
template <>
struct boost::json::is_deallocate_trivial<sluice::core::json::SmallArena> : std::true_type {};

namespace sluice::core::json {
namespace {

// A basic_parser handler that builds the DOM through value_stack, like boost::json::parser,
// and refuses an object with a duplicate key as it closes (its keys compared as decoded, so
// two spellings of one key are one key).
class StrictHandler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  // `temp`: the caller's scratch for the values under construction (most messages fit in it,
  // so building the DOM allocates only the DOM itself); `storage`: where the DOM goes.
  StrictHandler(unsigned char* temp, std::size_t temp_size, bj::storage_ptr storage)
      : stack(storage, temp, temp_size) {
    stack.reset(std::move(storage));
  }

  bj::value_stack stack;
  bool duplicate = false;

  // Keys of every open object, innermost last: an inner object's keys are always the
  // suffix starting at frames.back(), checked and dropped when it closes.
  // A key is a view of the text parsed when Boost.JSON hands one over whole from it (keys
  // without escapes), else of its decoded copy in `owned_keys`.
  // Inline room for the keys and objects of most messages: no allocation for either.
  boost::container::small_vector<std::string_view, 16> keys;
  std::forward_list<std::string> owned_keys;
  std::string_view text;  // the text parsed
  boost::container::small_vector<std::size_t, 8> frames;
  std::vector<std::string_view> sorted;  // scratch of has_duplicate for a large object
  std::string key_part;

  // Set when the text parsed is take_out_long_strings' skeleton.
  const LongStrings* taken = nullptr;
  std::size_t value_strings = 0;  // string values seen so far (keys are not values)
  std::size_t next_taken = 0;
  std::string decoded;

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t n, bj::error_code&) {
    stack.push_array(n);
    return true;
  }
  bool on_object_begin(bj::error_code&) {
    frames.push_back(keys.size());
    return true;
  }
  // Whether two of the keys from `start` on are equal: compared pairwise for the few keys of
  // most objects (no allocation on every message's hot path), sorted for a large one.
  bool has_duplicate(std::size_t start) {
    static constexpr std::size_t kPairwise = 16;
    const std::size_t n = keys.size() - start;
    if (n <= kPairwise) {
      for (std::size_t i = start; i < keys.size(); ++i) {
        for (std::size_t j = i + 1; j < keys.size(); ++j) {
          if (keys[i] == keys[j]) return true;
        }
      }
      return false;
    }
    sorted.assign(keys.begin() + static_cast<std::ptrdiff_t>(start), keys.end());
    std::sort(sorted.begin(), sorted.end());
    return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  }
  bool on_object_end(std::size_t n, bj::error_code& ec) {
    std::size_t start = frames.back();
    frames.pop_back();
    if (n > 1 && has_duplicate(start)) {
      duplicate = true;
      ec = bj::error::syntax;  // stops the parse; reported as duplicate_key
      return false;
    }
    keys.resize(start);
    stack.push_object(n);
    return true;
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
    // A long value taken out of the text parsed: its decoded text instead of the empty one.
    // A body without an escape is its own decoded text: copied once, into the DOM.
    if (taken && next_taken < taken->values.size() &&
        taken->values[next_taken].ordinal == value_strings) {
      const std::string_view body = taken->values[next_taken++].body;
      if (body.find('\\') == std::string_view::npos) {
        stack.push_string(body);
      } else {
        decode_string(body, decoded);
        stack.push_string(decoded);
      }
    } else {
      stack.push_string(s);
    }
    ++value_strings;
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    stack.push_chars(s);
    key_part.append(s.data(), s.size());
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    stack.push_key(s);
    if (key_part.empty() && s.data() >= text.data() &&
        s.data() + s.size() <= text.data() + text.size()) {
      keys.emplace_back(s.data(), s.size());
      return true;
    }
    key_part.append(s.data(), s.size());
    keys.emplace_back(owned_keys.emplace_front(std::move(key_part)));
    key_part.clear();
    return true;
  }
  bool on_number_part(bj::string_view, bj::error_code&) { return true; }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
    stack.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
    stack.push_uint64(u);
    return true;
  }
  bool on_double(double d, bj::string_view, bj::error_code&) {
    stack.push_double(d);
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    stack.push_bool(b);
    return true;
  }
  bool on_null(bj::error_code&) {
    stack.push_null();
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }
};

// Validation only: every callback accepts and nothing is stored.
struct NullHandler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);
  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t, bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return true; }
  bool on_object_end(std::size_t, bj::error_code&) { return true; }
  bool on_string_part(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_string(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_key_part(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_key(bj::string_view, std::size_t, bj::error_code&) { return true; }
  bool on_number_part(bj::string_view, bj::error_code&) { return true; }
  bool on_int64(std::int64_t, bj::string_view, bj::error_code&) { return true; }
  bool on_uint64(std::uint64_t, bj::string_view, bj::error_code&) { return true; }
  bool on_double(double, bj::string_view, bj::error_code&) { return true; }
  bool on_bool(bool, bj::error_code&) { return true; }
  bool on_null(bj::error_code&) { return true; }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }
};

ParseError make_parse_error(const bj::error_code& ec, std::size_t used, const ParseLimits& limits) {
  ParseError err;
  err.problem = ec == bj::error::too_deep ? ParseProblem::too_deep : ParseProblem::syntax;
  err.message = err.problem == ParseProblem::too_deep
                    ? fmt::format("JSON nested deeper than {} levels", limits.max_depth)
                    : fmt::format("invalid JSON near byte {}", used);
  return err;
}

// basic_parser::write_some stops after one complete value; anything but whitespace after
// it makes the text something other than one JSON document.
ParseError trailing_text_error(std::size_t used) {
  return ParseError{ParseProblem::syntax, fmt::format("unexpected text after byte {}", used)};
}

// Index one past the end of the string literal starting at t[i] == '"'.
std::size_t skip_string(std::string_view t, std::size_t i) {
  // memchr to each quote (a bulk search: strings are most of a payload's bytes), which ends
  // the string unless an odd run of backslashes escapes it. A run never reaches back past
  // `from`: the character before it is a quote or the opening one.
  const char* base = t.data();
  std::size_t from = i + 1;
  while (from < t.size()) {
    const void* quote = std::memchr(base + from, '"', t.size() - from);
    if (quote == nullptr) break;
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(quote) - base);
    std::size_t run = 0;
    while (at - run > from && base[at - run - 1] == '\\') ++run;
    if (run % 2 == 0) return at + 1;
    from = at + 1;
  }
  return t.size();
}

// Index one past the end of the value starting at t[i] (valid JSON assumed).
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return i;
  char c = t[i];
  if (c == '"') return skip_string(t, i);
  if (c == '{' || c == '[') {
    int depth = 0;
    while (i < t.size()) {
      char d = t[i];
      if (d == '"') {
        i = skip_string(t, i);
        continue;
      }
      if (d == '{' || d == '[') ++depth;
      if (d == '}' || d == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return i;
  }
  while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' && t[i] != '\t' &&
         t[i] != '\n' && t[i] != '\r')
    ++i;
  return i;
}

// Boost.JSON's parse of `text` into the strict DOM; `taken`: the long values taken out of the
// text this skeleton was made from, to be put back in their places.
boost::system::result<bj::value, ParseError> parse_with_boost(std::string_view text,
                                                              const ParseLimits& limits,
                                                              const LongStrings* taken,
                                                              bj::storage_ptr storage) {
  bj::parse_options opt;
  opt.max_depth = limits.max_depth;
  std::array<unsigned char, 4096> temp;
  bj::basic_parser<StrictHandler> parser(opt, temp.data(), temp.size(), std::move(storage));
  parser.handler().taken = taken;
  parser.handler().text = text;
  bj::error_code ec;
  std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (parser.handler().duplicate) {
    return ParseError{ParseProblem::duplicate_key, "JSON object with a duplicate key"};
  }
  if (ec) return make_parse_error(ec, used, limits);
  if (skip_whitespace(text, used) != text.size()) return trailing_text_error(used);
  return parser.handler().stack.release();
}

std::optional<ParseError> validate_with_boost(std::string_view text, const ParseLimits& limits) {
  bj::parse_options opt;
  opt.max_depth = limits.max_depth;
  bj::basic_parser<NullHandler> parser(opt);
  bj::error_code ec;
  std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (ec) return make_parse_error(ec, used, limits);
  if (skip_whitespace(text, used) != text.size()) return trailing_text_error(used);
  return std::nullopt;
}

}  // namespace

boost::system::result<bj::value, ParseError> parse_strict(std::string_view text,
                                                          const ParseLimits& limits,
                                                          Storage storage) {
  // The arena: one growing block shared by the DOM's values and freed with the last of them,
  // one or two allocations for a message instead of one per key, object and long string.
  const auto storage_for = [&](std::string_view parsed) {
    if (storage != Storage::arena) return bj::storage_ptr();
    if (parsed.size() <= SmallArena::kTextBytes) return bj::make_shared_resource<SmallArena>();
    return bj::make_shared_resource<bj::monotonic_resource>(parsed.size());
  };
  // Long string values are decoded here (take_out_long_strings, decode_string) and handed to
  // the DOM in their place, the rest parsed by Boost.JSON: the same DOM, without Boost's byte
  // by byte path through an escaped string. Any failure is the whole text's, for its error.
  LongStrings taken = take_out_long_strings(text, LongStrings::Take::values);
  if (!taken.doubtful && !taken.skeleton.empty()) {
    if (auto dom = parse_with_boost(taken.skeleton, limits, &taken, storage_for(taken.skeleton)))
      return dom;
  }
  return parse_with_boost(text, limits, nullptr, storage_for(text));
}

std::optional<ParseError> validate(std::string_view text, const ParseLimits& limits) {
  // The text with each long string emptied (its content checked by take_out_long_strings) is
  // what Boost.JSON validates: a valid string token for a valid string token, so the document
  // is well formed exactly when the original is. A doubtful string, and every failure, go to
  // Boost.JSON whole, for its exact error.
  LongStrings taken = take_out_long_strings(text, LongStrings::Take::keys_and_values);
  if (taken.doubtful || taken.skeleton.empty()) return validate_with_boost(text, limits);
  if (!validate_with_boost(taken.skeleton, limits)) return std::nullopt;
  return validate_with_boost(text, limits);
}

std::optional<std::string_view> string_value(std::string_view literal, std::string& scratch) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return std::nullopt;
  std::string_view inner = literal.substr(1, literal.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner;
  bj::error_code ec;
  bj::value v = bj::parse(literal, ec);
  if (ec || !v.is_string()) return std::nullopt;
  scratch.assign(v.get_string().data(), v.get_string().size());
  return std::string_view(scratch);
}

void scan_members(std::string_view t, std::span<const std::string_view> keys,
                  std::span<std::optional<std::string_view>> found) {
  for (auto& f : found) f.reset();
  std::size_t missing = keys.size();
  std::size_t i = skip_whitespace(t, 0);
  if (i >= t.size() || t[i] != '{') return;
  i = skip_whitespace(t, i + 1);
  std::string scratch;
  while (missing > 0 && i < t.size() && t[i] == '"') {
    std::size_t key_end = skip_string(t, i);
    std::optional<std::string_view> key = string_value(t.substr(i, key_end - i), scratch);
    i = skip_whitespace(t, key_end);
    if (i >= t.size() || t[i] != ':') return;
    i = skip_whitespace(t, i + 1);
    std::size_t value_end = skip_value(t, i);
    for (std::size_t k = 0; key && k < keys.size(); ++k) {
      if (!found[k] && keys[k] == *key) {
        found[k] = t.substr(i, value_end - i);
        --missing;
      }
    }
    i = skip_whitespace(t, value_end);
    if (i < t.size() && t[i] == ',') i = skip_whitespace(t, i + 1);
  }
}

std::optional<std::string_view> member_span(std::string_view object_text, std::string_view key) {
  std::optional<std::string_view> found;
  scan_members(object_text, std::span<const std::string_view>(&key, 1),
               std::span<std::optional<std::string_view>>(&found, 1));
  return found;
}

std::optional<std::string> string_member(std::string_view object_text, std::string_view key) {
  auto literal = member_span(object_text, key);
  std::string scratch;
  auto text = literal ? string_value(trim(*literal), scratch) : std::nullopt;
  return text ? std::optional<std::string>(std::string(*text)) : std::nullopt;
}

bool replace_member(std::string& object_text, std::string_view key, std::string_view value_json) {
  auto span = member_span(object_text, key);
  if (!span) return false;
  std::string_view value = trim(*span);
  auto at = static_cast<std::size_t>(value.data() - object_text.data());
  object_text.replace(at, value.size(), value_json);
  return true;
}

std::string_view trim(std::string_view text) {
  std::size_t b = skip_whitespace(text, 0);
  std::size_t e = text.size();
  while (e > b &&
         (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' || text[e - 1] == '\r'))
    --e;
  return text.substr(b, e - b);
}

std::string quote(std::string_view s) {
  // Boost.JSON's serializer escapes exactly the quote, the backslash and the bytes below
  // 0x20, and writes every other byte as it is. A string with none of them (a method, a tool
  // name, most ids) is therefore its bytes between quotes, made here without the serializer's
  // setup, which costs several times the copy.
  const bool plain = std::none_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\';
  });
  if (!plain) return bj::serialize(bj::string_view(s.data(), s.size()));
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out += s;
  out += '"';
  return out;
}

void single_line(std::string& text) {
  // Most texts have no line break at all: two bulk searches say so.
  if (std::memchr(text.data(), '\n', text.size()) == nullptr &&
      std::memchr(text.data(), '\r', text.size()) == nullptr) {
    return;
  }
  // Else the text between strings is searched for line breaks and each string is skipped
  // whole, both with memchr (skip_string), instead of a walk byte by byte through a body
  // that may be megabytes long.
  char* base = text.data();
  const auto blank_breaks = [base](std::size_t from, std::size_t to) {
    for (const char line_break : {'\n', '\r'}) {
      for (std::size_t i = from; i < to;) {
        auto* at = static_cast<char*>(std::memchr(base + i, line_break, to - i));
        if (at == nullptr) break;
        *at = ' ';
        i = static_cast<std::size_t>(at - base) + 1;
      }
    }
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const void* quote = std::memchr(base + i, '"', text.size() - i);
    const std::size_t open =
        quote ? static_cast<std::size_t>(static_cast<const char*>(quote) - base) : text.size();
    blank_breaks(i, open);
    if (open == text.size()) break;
    i = skip_string(text, open);
  }
}

}  // namespace sluice::core::json
