#pragma once
// MCP protocol revisions sluice speaks and how a requested one is negotiated.
// The stateful revisions (initialize / notifications/initialized) are listed here; the
// stateless 2026-07-28 lifecycle (per-request _meta, server/discover) would add a second
// entry point beside negotiate() without changing the Session engine, which is
// lifecycle-agnostic: it only matches ids, times out and cancels.
#include <array>
#include <string_view>

namespace sluice::mcp {

inline constexpr std::array<std::string_view, 4> kSupportedVersions = {
    "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
inline constexpr std::string_view kLatestVersion = "2025-11-25";

inline bool is_supported_version(std::string_view v) {
  for (auto s : kSupportedVersions) {
    if (s == v) return true;
  }
  return false;
}

// The server side of negotiation: the client's revision when we support it, else ours.
inline std::string_view negotiate(std::string_view requested) {
  return is_supported_version(requested) ? requested : kLatestVersion;
}

}  // namespace sluice::mcp
