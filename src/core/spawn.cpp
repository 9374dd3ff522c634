#include "core/spawn.hpp"

#include "core/display.hpp"
#include "core/log.hpp"

#include <boost/core/demangle.hpp>

#include <unistd.h>

#include <atomic>
#include <typeinfo>

namespace sluice::core {
namespace {

std::atomic<std::uint64_t> failures{0};

}  // namespace

std::uint64_t coroutine_failures() { return failures.load(std::memory_order_relaxed); }

std::string exception_type(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return boost::core::demangle(typeid(e).name());
  } catch (...) {
  }
  return "an exception of unknown type";
}

void report_coroutine_failure(std::string_view what, std::exception_ptr error) {
  failures.fetch_add(1, std::memory_order_relaxed);
  log::error("{} ended by an exception ({}); it was stopped and sluice goes on serving", what,
             exception_type(error));
}

int report_fatal(std::exception_ptr error) {
  std::string line = "sluice: stopped by an internal error (" + exception_type(error) +
                     "); this is a bug, please report it";
  line = display_safe(line) + "\n";
  // Straight to stderr, not through the log sink (it may be a file, or buffered): the
  // process ends next. Best effort: stderr may be closed.
  [[maybe_unused]] ssize_t n = ::write(2, line.data(), line.size());
  return kInternalErrorExit;
}

}  // namespace sluice::core
