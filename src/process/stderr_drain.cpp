#include "process/stderr_drain.hpp"

#include "core/line_splitter.hpp"
#include "core/log.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <array>

namespace sluice::process {

namespace {

double line_rate(const core::Limits& limits) {
  return static_cast<double>(limits.stderr_lines_per_second);
}
double byte_rate(const core::Limits& limits) {
  return static_cast<double>(limits.stderr_bytes_per_second);
}

}  // namespace

StderrBudget::StderrBudget(const core::Limits& limits, core::Clock::time_point now)
    : lines_(line_rate(limits), 2 * line_rate(limits), now),
      bytes_(byte_rate(limits),
             std::max(2 * byte_rate(limits), static_cast<double>(limits.max_stderr_line_bytes)),
             now) {}

bool StderrBudget::admit(std::size_t bytes, core::Clock::time_point now) {
  if (!lines_.take(now) || !bytes_.take(static_cast<double>(bytes), now)) {
    ++held_back_;
    return false;
  }
  return true;
}

std::uint64_t StderrBudget::take_report(core::Clock::time_point now) {
  if (held_back_ == 0 || now - reported_at_ < std::chrono::seconds(1)) return 0;
  reported_at_ = now;
  return std::exchange(held_back_, 0);
}

std::uint64_t StderrBudget::take_final_report() { return std::exchange(held_back_, 0); }

boost::asio::awaitable<void> drain_stderr(
    std::shared_ptr<boost::asio::posix::stream_descriptor> err, std::string name,
    const core::Limits& limits) {
  namespace asio = boost::asio;
  core::LineSplitter splitter(limits.max_stderr_line_bytes, limits.max_stderr_line_bytes);
  StderrBudget budget(limits, core::Clock::now());
  auto report = [&](std::uint64_t held_back) {
    core::log::warn("server {} stderr: {} lines not logged (over {} lines/s or {} bytes/s)", name,
                    held_back, limits.stderr_lines_per_second, limits.stderr_bytes_per_second);
  };
  // Below debug the lines are only drained.
  auto log_line = [&](const core::Line& line) {
    if (core::log::level() > core::log::Level::debug) return;
    auto now = core::Clock::now();
    if (!budget.admit(line.text.size(), now)) return;
    if (std::uint64_t held_back = budget.take_report(now)) report(held_back);
    core::log::debug("server {} stderr: {}{}", name, line.text,
                     line.truncated ? " (truncated)" : "");
  };
  std::array<char, 16384> buf;
  for (;;) {
    boost::system::error_code ec;
    std::size_t n = co_await err->async_read_some(asio::buffer(buf),
                                                  asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    splitter.feed(std::string_view(buf.data(), n), log_line);
  }
  splitter.finish(log_line);
  if (std::uint64_t held_back = budget.take_final_report()) report(held_back);
}

}  // namespace sluice::process
