#pragma once
// The CPU time the calling thread has used, in seconds. The linear-time guards bound this
// rather than the time on the wall: the suite runs several tests a core, and a sanitizer build
// is slower still, so the wall clock measures the machine's load more than the code.
#include <time.h>

namespace sluice::test {

inline double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace sluice::test
