#pragma once
// Wall-clock time, for what is shown or stored (audit records, when a list was listed, when a
// server was idle-stopped, a file's moved-aside name): never for deadlines or timers, which
// read core::Clock (clock.hpp). Threading: pure functions, any thread.
#include <chrono>
#include <cstdint>
#include <string>

namespace sluice::core {

// Milliseconds since the Unix epoch, now.
std::int64_t unix_ms_now();
// `t` as ISO-8601 UTC to the second ("2026-12-01T15:20:00Z").
std::string utc_text(std::chrono::system_clock::time_point t);

}  // namespace sluice::core
