#include "core/literal_screen.hpp"

#include "core/ascii.hpp"
#include "core/cpu.hpp"

#include <algorithm>
#include <bitset>
#include <stdexcept>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SLUICE_SCREEN_SHUFFLE 1
#endif

namespace sluice::core {
namespace {

// The bytes a bucket's literals hold at positions 0, 1 and 2.
using Bucket = std::array<std::bitset<256>, 3>;

bool ascii_letter(unsigned char c) {
  const unsigned char lower = ascii::to_lower(c);
  return lower >= 'a' && lower <= 'z';
}

// How many triples of bytes the nibble tables let through for `b` (every combination of a low
// and a high nibble seen at each position), those of lower-case prose counted eight times: a
// bucket's cost in candidates where no literal starts.
double reach(const Bucket& b) {
  double total = 1;
  for (const auto& bytes : b) {
    std::bitset<16> low, high;
    for (unsigned c = 0; c < 256; ++c) {
      if (!bytes[c]) continue;
      low.set(c & 15);
      high.set(c >> 4);
    }
    double weight = 0;
    for (unsigned c = 0; c < 256; ++c) {
      if (!low[c & 15] || !high[c >> 4]) continue;
      weight += (c >= 'a' && c <= 'z') || c == ' ' ? 8 : 1;
    }
    total *= weight;
  }
  return total;
}

Bucket merged(const Bucket& a, const Bucket& b) { return {a[0] | b[0], a[1] | b[1], a[2] | b[2]}; }

// Buckets by first byte (case folded for literals that ignore case), then merged down to 8: each
// time the two whose union lets through the fewest byte values that neither did.
std::vector<Bucket> bucket_literals(std::span<const LiteralScreen::Literal> literals) {
  std::vector<Bucket> buckets;
  std::vector<unsigned> firsts;
  for (const LiteralScreen::Literal& l : literals) {
    if (l.text.size() < 3) throw std::logic_error("a screened literal is 3 bytes or more");
    const auto c = static_cast<unsigned char>(l.text[0]);
    const unsigned first = l.ignore_case ? 0x100u | ascii::to_lower(c) : c;
    auto at = std::find(firsts.begin(), firsts.end(), first);
    if (at == firsts.end()) {
      firsts.push_back(first);
      buckets.emplace_back();
      at = firsts.end() - 1;
    }
    Bucket& bucket = buckets[static_cast<std::size_t>(at - firsts.begin())];
    for (std::size_t k = 0; k < 3; ++k) {
      const auto c = static_cast<unsigned char>(l.text[k]);
      bucket[k].set(c);
      if (l.ignore_case && ascii_letter(c)) bucket[k].set(c ^ 0x20u);
    }
  }
  while (buckets.size() > 8) {
    std::size_t best_a = 0, best_b = 1;
    double best = 0;
    for (std::size_t a = 0; a < buckets.size(); ++a) {
      for (std::size_t b = a + 1; b < buckets.size(); ++b) {
        const double added =
            reach(merged(buckets[a], buckets[b])) - reach(buckets[a]) - reach(buckets[b]);
        if ((a == 0 && b == 1) || added < best) {
          best = added;
          best_a = a;
          best_b = b;
        }
      }
    }
    buckets[best_a] = merged(buckets[best_a], buckets[best_b]);
    buckets.erase(buckets.begin() + static_cast<std::ptrdiff_t>(best_b));
  }
  return buckets;
}

#if defined(SLUICE_SCREEN_SHUFFLE)
// The bytes a step of 16 (32) positions reads: its three loads, one byte apart.
constexpr std::size_t kShuffleReach = 18;
constexpr std::size_t kWideReach = 34;

// The buckets that allow each of the 16 bytes at `at`, given one position's tables.
__attribute__((target("ssse3"), always_inline)) inline __m128i allowed(const unsigned char* at,
                                                                       __m128i low, __m128i high,
                                                                       __m128i nibble) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  return _mm_and_si128(_mm_shuffle_epi8(low, _mm_and_si128(v, nibble)),
                       _mm_shuffle_epi8(high, _mm_and_si128(_mm_srli_epi16(v, 4), nibble)));
}

// 16 positions at a time while the three loads stay inside the text and `out` has room for
// 16 more: for each of the literal's first three bytes, the buckets its low nibble allows,
// and those its high nibble allows (one byte shuffle each), all ANDed; a lane with a bucket
// left is a candidate.
__attribute__((target("ssse3"))) std::size_t shuffle_scan(
    const std::array<std::array<std::uint8_t, 16>, 3>& low_table,
    const std::array<std::array<std::uint8_t, 16>, 3>& high_table, std::string_view text,
    std::size_t& from, std::size_t* out, std::size_t room) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const __m128i nibble = _mm_set1_epi8(0x0f);
  const auto table = [](const std::array<std::uint8_t, 16>& t) {
    return _mm_load_si128(reinterpret_cast<const __m128i*>(t.data()));
  };
  const __m128i low0 = table(low_table[0]), high0 = table(high_table[0]);
  const __m128i low1 = table(low_table[1]), high1 = table(high_table[1]);
  const __m128i low2 = table(low_table[2]), high2 = table(high_table[2]);
  std::size_t n = 0;
  std::size_t i = from;
  for (; i + kShuffleReach <= text.size() && n + 16 <= room; i += 16) {
    const __m128i hits = _mm_and_si128(allowed(p + i, low0, high0, nibble),
                                       _mm_and_si128(allowed(p + i + 1, low1, high1, nibble),
                                                     allowed(p + i + 2, low2, high2, nibble)));
    auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(hits, _mm_setzero_si128())));
    mask = ~mask & 0xFFFFu;
    for (; mask != 0; mask &= mask - 1)
      out[n++] = i + static_cast<std::size_t>(__builtin_ctz(mask));
  }
  from = i;
  return n;
}

// The same with AVX2, 32 positions at a time: each 16-byte table in both lanes (AVX2's byte
// shuffle looks up within a lane), three loads inside the text and room for 32 more in `out`.
// (Written out in the one function: a helper taking or giving AVX2 vectors would need the
// target on its own, and a lambda cannot have it.)
__attribute__((target("avx2"))) std::size_t wide_scan(
    const std::array<std::array<std::uint8_t, 16>, 3>& low_table,
    const std::array<std::array<std::uint8_t, 16>, 3>& high_table, std::string_view text,
    std::size_t& from, std::size_t* out, std::size_t room) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  __m256i low[3], high[3];  // not std::array: its element type would lose the vector attribute
  for (std::size_t k = 0; k < 3; ++k) {
    low[k] = _mm256_broadcastsi128_si256(
        _mm_load_si128(reinterpret_cast<const __m128i*>(low_table[k].data())));
    high[k] = _mm256_broadcastsi128_si256(
        _mm_load_si128(reinterpret_cast<const __m128i*>(high_table[k].data())));
  }
  std::size_t n = 0;
  std::size_t i = from;
  for (; i + kWideReach <= text.size() && n + 32 <= room; i += 32) {
    __m256i hits = _mm256_set1_epi8(-1);
    for (std::size_t k = 0; k < 3; ++k) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + k));
      hits = _mm256_and_si256(
          hits, _mm256_and_si256(_mm256_shuffle_epi8(low[k], _mm256_and_si256(v, nibble)),
                                 _mm256_shuffle_epi8(
                                     high[k], _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble))));
    }
    auto mask = ~static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(hits, _mm256_setzero_si256())));
    for (; mask != 0; mask &= mask - 1)
      out[n++] = i + static_cast<std::size_t>(__builtin_ctz(mask));
  }
  from = i;
  return n;
}
#endif

}  // namespace

LiteralScreen::LiteralScreen(std::span<const Literal> literals) {
  const std::vector<Bucket> buckets = bucket_literals(literals);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const auto bit = static_cast<std::uint8_t>(1u << b);
    for (std::size_t k = 0; k < 3; ++k) {
      for (unsigned c = 0; c < 256; ++c) {
        if (!buckets[b][k][c]) continue;
        low_[k][c & 15] |= bit;
        high_[k][c >> 4] |= bit;
      }
    }
  }
  shuffle_ = cpu::ssse3();
  wide_ = cpu::avx2();
}

std::size_t LiteralScreen::candidates_bytewise(std::string_view text, std::size_t& from,
                                               Batch& out) const {
  return scan_bytes(text, from, out, 0);
}

std::size_t LiteralScreen::scan_bytes(std::string_view text, std::size_t& from, Batch& out,
                                      std::size_t n) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (; from + 3 <= text.size() && n < out.size(); ++from) {
    const unsigned char* at = p + from;
    const unsigned buckets = low_[0][at[0] & 15] & high_[0][at[0] >> 4] & low_[1][at[1] & 15] &
                             high_[1][at[1] >> 4] & low_[2][at[2] & 15] & high_[2][at[2] >> 4];
    if (buckets != 0) out[n++] = from;
  }
  if (from + 3 > text.size()) from = text.size();  // no literal starts this close to the end
  return n;
}

std::size_t LiteralScreen::candidates(std::string_view text, std::size_t& from, Batch& out) const {
  std::size_t n = 0;
#if defined(SLUICE_SCREEN_SHUFFLE)
  // The widest step the machine has while the text lasts, then narrower ones for its end; a
  // step that stops with text left stopped because `out` is full: the rest in the next batch.
  if (wide_) {
    n = wide_scan(low_, high_, text, from, out.data(), out.size());
    if (from + kWideReach <= text.size()) return n;
  }
  if (shuffle_) {
    n += shuffle_scan(low_, high_, text, from, out.data() + n, out.size() - n);
    if (from + kShuffleReach <= text.size()) return n;
  }
#endif
  return scan_bytes(text, from, out, n);  // the text's last positions (all without SSSE3)
}

}  // namespace sluice::core
