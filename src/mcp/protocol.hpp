#pragma once
// MCP protocol revisions sluice speaks and how a requested one is negotiated.
// The stateful revisions (initialize / notifications/initialized) are listed here; the
// stateless 2026-07-28 lifecycle (per-request _meta, server/discover) would add a second
// entry point beside negotiate_initialize() without changing the Session engine, which is
// lifecycle-agnostic: it only matches ids, times out and cancels.
// Pure functions; any thread.
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sluice::mcp {

inline constexpr std::array<std::string_view, 4> kSupportedVersions = {"2024-11-05", "2025-03-26",
                                                                       "2025-06-18", "2025-11-25"};
inline constexpr std::string_view kLatestVersion = "2025-11-25";

inline bool is_supported_version(std::string_view v) {
  for (auto s : kSupportedVersions) {
    if (s == v) return true;
  }
  return false;
}

// The protocolVersion that the params of an initialize request ask for, its escapes decoded;
// nullopt when the params are not an object with a string protocolVersion. The params are
// the raw text of a message that was already parsed strictly.
std::optional<std::string> requested_version(std::string_view params_json);

// The server side of negotiation: the requested revision when `offered` lists it, else the
// latest offered (revisions are dates, so the greatest). The result is an element of
// `offered`, never `requested` itself. Precondition: `offered` is not empty.
std::string_view negotiate(std::string_view requested,
                           std::span<const std::string_view> offered = kSupportedVersions);

// The revision answered to an initialize request with these params, by every server role
// of sluice: the requested one when supported, else the latest (also when none is asked).
std::string_view negotiate_initialize(std::string_view params_json);

}  // namespace sluice::mcp
