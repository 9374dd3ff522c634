#pragma once
// What vector instructions this machine runs (asked of the CPU once, the OS's saving of their
// state included), for the bulk scans that have a wider step where it is there
// (core/json_strings.cpp, core/literal_screen.cpp). False on other architectures.

namespace sluice::core::cpu {

#if defined(__x86_64__) || defined(__i386__)
inline bool ssse3() {
  static const bool there = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("ssse3") != 0;
  }();
  return there;
}

inline bool avx2() {
  static const bool there = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return there;
}
#else
inline bool ssse3() { return false; }
inline bool avx2() { return false; }
#endif

}  // namespace sluice::core::cpu
