#include "core/json_strings.hpp"

#include "core/cpu.hpp"
#include "core/hex.hpp"
#include "core/utf8.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#define SLUICE_STRINGS_WIDE 1
#endif

namespace sluice::core::json {
namespace {

// The class of each byte inside a JSON string: 0 passes as it is, 1 is the closing quote,
// 2 an escape, 3 a control character (never allowed raw), 4 the start of a UTF-8 sequence.
constexpr std::array<std::uint8_t, 256> kStringByte = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 3;
  t['"'] = 1;
  t['\\'] = 2;
  for (int c = 0x80; c < 0x100; ++c) t[c] = 4;
  return t;
}();

#if defined(SLUICE_STRINGS_WIDE)
// skip_plain's test 32 bytes at a time with AVX2, while 32 are left: the index of the first
// byte that needs a look, or where fewer than 32 are left.
__attribute__((target("avx2"))) std::size_t skip_plain_wide(const unsigned char* bytes,
                                                            std::size_t i, std::size_t n) {
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i below_space = _mm256_set1_epi8(0x1F);
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + i));
    const __m256i special = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)),
        _mm256_cmpeq_epi8(_mm256_max_epu8(v, below_space), below_space));
    const auto mask = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_or_si256(special, v)));
    if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(mask));
  }
  return i;
}
#endif

// The index of the first byte at or after `i` (below `n`) that needs a look: a quote, a
// backslash, a control character or a byte of a UTF-8 sequence; `n` when there is none. The
// common bytes are passed over 32 at a time (AVX2, where the machine has it), then 16 at a
// time (SSE2, which every x86-64 has), or 8 at a time with the usual bit tricks elsewhere
// (each test below is exact for "some byte of the word").
std::size_t skip_plain(const unsigned char* bytes, std::size_t i, std::size_t n) {
#if defined(SLUICE_STRINGS_WIDE)
  if (cpu::avx2()) {
    i = skip_plain_wide(bytes, i, n);
    if (i + 32 <= n) return i;  // a byte that needs a look
  }
#endif
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i below_space = _mm_set1_epi8(0x1F);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space));
    // A byte's high bit: marked special, or 0x80 and above (UTF-8).
    const int mask = _mm_movemask_epi8(_mm_or_si128(special, v));
    if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#else
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x = 0;
    std::memcpy(&x, bytes + i, sizeof x);
    const std::uint64_t below_space = (x - kOnes * 0x20) & ~x;
    const std::uint64_t q = x ^ (kOnes * '"');
    const std::uint64_t b = x ^ (kOnes * '\\');
    const std::uint64_t quote = (q - kOnes) & ~q;
    const std::uint64_t backslash = (b - kOnes) & ~b;
    if (((x | below_space | quote | backslash) & kHigh) != 0) break;
  }
#endif
  while (i < n && kStringByte[bytes[i]] == 0) ++i;
  return i;
}

// The code unit of `\uXXXX` at t[i] (the backslash), or -1.
long escaped_unit(std::string_view t, std::size_t i) {
  if (i + 6 > t.size() || t[i] != '\\' || t[i + 1] != 'u') return -1;
  long u = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    int d = hex_digit_value(t[k]);
    if (d < 0) return -1;
    u = u * 16 + d;
  }
  return u;
}

// The index of the quote that ends the string whose body starts at t[i], when the body is
// valid JSON string content (escapes, no raw control character, well-formed UTF-8); npos
// otherwise. The common bytes are passed over in bulk (skip_plain): Boost.JSON takes a slower
// path, byte by byte, for the rest of a string once it has met an escape, and escapes are
// common in the large texts tools return (a newline is one).
std::size_t valid_string_end(std::string_view t, std::size_t i) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(t.data());
  const std::size_t n = t.size();
  while (i < n) {
    i = skip_plain(bytes, i, n);
    if (i >= n) break;
    switch (kStringByte[bytes[i]]) {
      case 1:
        return i;
      case 2: {
        const char e = i + 1 < n ? t[i + 1] : '\0';
        if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
            e == 't') {
          i += 2;
          break;
        }
        const long u1 = escaped_unit(t, i);
        if (u1 < 0 || (u1 >= 0xDC00 && u1 <= 0xDFFF)) return std::string_view::npos;
        if (u1 >= 0xD800 && u1 <= 0xDBFF) {
          const long u2 = escaped_unit(t, i + 6);
          if (u2 < 0xDC00 || u2 > 0xDFFF) return std::string_view::npos;
          i += 6;
        }
        i += 6;
        break;
      }
      case 4: {
        char32_t cp = 0;
        const std::size_t len = decode_utf8(t, i, cp);
        if (len == 0) return std::string_view::npos;
        i += len;
        break;
      }
      default:
        return std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::size_t skip_whitespace(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  return i;
}

LongStrings take_out_long_strings(std::string_view text, LongStrings::Take take) {
  LongStrings out;
  if (text.size() < kLongStringBytes) return out;
  std::size_t copied = 0;  // text before this is in the skeleton
  std::size_t values = 0;
  for (std::size_t at = text.find('"'); at != std::string_view::npos;) {
    const std::size_t end = valid_string_end(text, at + 1);
    if (end == std::string_view::npos) {
      out.doubtful = true;
      return out;
    }
    const std::size_t after = skip_whitespace(text, end + 1);
    const bool key = after < text.size() && text[after] == ':';
    if (!key) ++values;
    if (end - at - 1 >= kLongStringBytes && (!key || take == LongStrings::Take::keys_and_values)) {
      if (out.skeleton.empty()) out.skeleton.reserve(4096);
      out.skeleton.append(text.substr(copied, at + 1 - copied));
      copied = end;  // the closing quote is copied with what follows
      if (!key) out.values.push_back({values - 1, text.substr(at + 1, end - at - 1)});
    }
    at = text.find('"', end + 1);
  }
  if (copied > 0) out.skeleton.append(text.substr(copied));
  return out;
}

void decode_string(std::string_view body, std::string& out) {
  out.clear();
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size();) {
    const std::size_t escape = body.find('\\', i);
    if (escape == std::string_view::npos) {
      out.append(body.substr(i));
      break;
    }
    out.append(body.substr(i, escape - i));
    const char e = body[escape + 1];
    i = escape + 2;
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto cp = static_cast<char32_t>(escaped_unit(body, escape));
        i = escape + 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          const auto low = static_cast<char32_t>(escaped_unit(body, escape + 6));
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i = escape + 12;
        }
        append_utf8(out, cp);
        break;
      }
      default:
        out += e;  // '"', '\\' or '/'
    }
  }
}

}  // namespace sluice::core::json
