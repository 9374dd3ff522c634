#pragma once
// Gives the heap's free pages back to the system (glibc's malloc_trim), after a large
// transient allocation (a catalog read, an index rebuild) that would otherwise stay resident.
//
// In a sanitizer build the sanitizer's allocator owns the heap, so glibc's arenas hold
// nothing to give back, and trimming them from two threads at once has crashed inside glibc
// (a SEGV in mtrim seen under ASan); there it does nothing.
// Threading: any thread.
#include <malloc.h>

// GCC says so with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SLUICE_SANITIZED_HEAP 1
#endif
#endif

namespace sluice::core {

inline void release_free_heap() {
#ifndef SLUICE_SANITIZED_HEAP
  ::malloc_trim(0);
#endif
}

}  // namespace sluice::core
