#pragma once
// What the fuzz targets of tests/fuzz share: a property that must hold for every input is
// checked with FUZZ_CHECK, which aborts (libFuzzer records the input as a crash) with the
// condition's text, never the input's bytes.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                               \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

namespace sluice::fuzz {

// The sentinel the targets plant in values (an environment variable's value, an instance's
// strings): text built from rejected input must never contain it (the value-free rule).
inline constexpr std::string_view kSentinel = "s3cr3t-SENTINEL";

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace sluice::fuzz
