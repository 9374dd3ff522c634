#pragma once
// A screen for a few short literals in a long text: the positions at which one of them may
// start, for the caller to confirm. Each literal's first three bytes are matched by their
// nibbles, through tables of up to 8 buckets of literals (literals with the same first byte
// share one, case folded for those that ignore case; past 8, the two buckets whose union lets
// through the fewest byte triples of lower-case prose are merged), 32 positions at a time with
// AVX2's byte shuffle (16 with SSSE3's where AVX2 is missing, and for a text's end), as the
// Teddy algorithm does.
// Without SSSE3 (another architecture, or an x86-64 from before 2006) the same tables are read
// byte by byte: the same positions, more slowly.
//
// Guarantees: every position at which a literal starts is reported (its case variants too
// when it ignores case); some at which none does are too, which the caller's confirmation
// sorts out. Threading: immutable after construction; const members from any thread.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sluice::core {

class LiteralScreen {
 public:
  struct Literal {
    std::string_view text;  // 3 bytes or more
    bool ignore_case = false;
  };
  // Candidate positions are handed over in batches of this many at most.
  static constexpr std::size_t kBatch = 64;
  using Batch = std::array<std::size_t, kBatch>;

  // Throws std::logic_error for a literal shorter than 3 bytes.
  explicit LiteralScreen(std::span<const Literal> literals);

  // Calls confirm(i) at each candidate position i of `text`, in increasing order, until one
  // returns true: whether one did.
  template <class Confirm>
  bool any(std::string_view text, Confirm&& confirm) const {
    Batch found;
    for (std::size_t from = 0; from < text.size();) {
      const std::size_t n = candidates(text, from, found);
      for (std::size_t i = 0; i < n; ++i) {
        if (confirm(found[i])) return true;
      }
    }
    return false;
  }

  // The candidate positions at or after `from`, into `out` (their number); `from` moves past
  // the positions looked at (to text.size() once all were).
  std::size_t candidates(std::string_view text, std::size_t& from, Batch& out) const;
  // The same positions, read byte by byte whatever the machine (what the tests compare with).
  std::size_t candidates_bytewise(std::string_view text, std::size_t& from, Batch& out) const;

 private:
  // Byte by byte from `from`, into `out` after its first `n`.
  std::size_t scan_bytes(std::string_view text, std::size_t& from, Batch& out, std::size_t n) const;

  // By position in the literal (0..2), then by nibble: the buckets that allow it.
  alignas(16) std::array<std::array<std::uint8_t, 16>, 3> low_{};
  alignas(16) std::array<std::array<std::uint8_t, 16>, 3> high_{};
  bool shuffle_ = false;  // SSSE3 is there
  bool wide_ = false;     // AVX2 is there
};

}  // namespace sluice::core
