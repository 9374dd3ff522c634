#pragma once
// The one way sluice starts a detached coroutine on its loop. Every coroutine started with
// core::spawn has a catch-all boundary: an exception that escapes it is reported with one
// value-free log line (what the coroutine was and the exception's type, never its text,
// which may quote a peer's input), counted (coroutine_failures(), shown by gateway.health
// and /metrics), and the loop goes on serving. `on_failure` then runs, so that the owner
// can do what the dead coroutine would have done at its end (close its stream, wake the
// callers waiting on it).
//
// Threading: the report and on_failure run on the thread that runs the coroutine's
// executor (the loop's). Ownership: `work` (an awaitable, or a function returning one,
// kept alive for the coroutine's life) and `on_failure` are moved into the spawn; `what`
// must be a string with static storage (a literal).
#include <boost/asio/co_spawn.hpp>

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::core {

// Coroutines (and request handlers) ended by an exception since the process started.
std::uint64_t coroutine_failures();

// Logs "<what> ended by an exception (<type>)" and counts it.
void report_coroutine_failure(std::string_view what, std::exception_ptr error);

// The type of the exception `error` holds, demangled ("std::bad_alloc"), or "an exception
// of unknown type"; never its message.
std::string exception_type(std::exception_ptr error);

// main()'s boundary, for an exception nothing else caught (the stack has unwound, so every
// owned child is already torn down): one clear, escaped line on stderr, and the exit code
// main returns (70, EX_SOFTWARE).
inline constexpr int kInternalErrorExit = 70;
int report_fatal(std::exception_ptr error);

struct NoCleanup {
  void operator()() const noexcept {}
};

template <class Context, class Work, class OnFailure = NoCleanup>
void spawn(Context&& context, Work&& work, const char* what, OnFailure on_failure = {}) {
  boost::asio::co_spawn(
      std::forward<Context>(context), std::forward<Work>(work),
      [what, on_failure = std::move(on_failure)](std::exception_ptr error) mutable {
        if (!error) return;
        report_coroutine_failure(what, error);
        on_failure();
      });
}

}  // namespace sluice::core
