#pragma once
// A child's stderr, drained (invariants P5, P8): read in chunks, split into lines capped at
// Limits::max_stderr_line_bytes (the rest of an over-long line dropped and the line marked
// "(truncated)"), each line logged at debug, escaped by the log, with the server's name. A
// flood can neither grow memory nor flood the log: StderrBudget lets through at most
// stderr_lines_per_second lines and stderr_bytes_per_second bytes (bursts up to twice that,
// and always room for one whole line); the lines it holds back are counted, and the count is
// reported at most once a second when logging resumes, and once at the end.
#include "core/clock.hpp"
#include "core/limits.hpp"
#include "core/token_bucket.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace sluice::process {

// Which stderr lines are logged. Pure: every decision takes the time it is made at.
// Threading: not synchronised; one owner (the drain).
class StderrBudget {
 public:
  StderrBudget(const core::Limits& limits, core::Clock::time_point now);
  // Whether a line of `bytes` may be logged at `now`; when not, it is counted as held back.
  bool admit(std::size_t bytes, core::Clock::time_point now);
  // Before an admitted line is logged at `now`: the count of lines held back since the last
  // report when a report is due (at most one a second), else 0. The count restarts at 0.
  std::uint64_t take_report(core::Clock::time_point now);
  // At the end of the stream: the count not reported yet (0: nothing to report).
  std::uint64_t take_final_report();

 private:
  core::TokenBucket lines_;
  core::TokenBucket bytes_;
  std::uint64_t held_back_ = 0;
  core::Clock::time_point reported_at_{};
};

// Reads `err` until EOF or an error (a teardown closing it) and logs it as above, under
// `name`. `limits` must outlive the drain.
boost::asio::awaitable<void> drain_stderr(
    std::shared_ptr<boost::asio::posix::stream_descriptor> err, std::string name,
    const core::Limits& limits);

}  // namespace sluice::process
