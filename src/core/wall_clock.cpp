#include "core/wall_clock.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace sluice::core {

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string utc_text(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%FT%TZ}", std::chrono::floor<std::chrono::seconds>(t));
}

}  // namespace sluice::core
