#pragma once
// Reading the fields of an `.mcp.json` file with value-free problems: where a problem is (the
// JSON path, and the server entry's position), the wrong-type and out-of-range messages, and
// the character rules of each kind of string. Shared by the file, server entry and "sluice"
// block parsers; not part of the config interface. Pure functions.
#include "config/interpolate.hpp"
#include "core/error.hpp"

#include <fmt/format.h>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::config::detail {

// The inclusive range of an integer setting of the "sluice" objects.
struct Range {
  std::uint64_t min;
  std::uint64_t max;
};
inline constexpr Range kBudgetRange{1, 1024};
inline constexpr Range kClientCapRange{1, 4096};
inline constexpr Range kQueueSizeRange{0, 100000};
inline constexpr Range kQueueTimeoutMsRange{0, 3600000};
inline constexpr Range kAbandonMsRange{1000, 86400000};
inline constexpr Range kDrainMsRange{0, 600000};
inline constexpr Range kStartConcurrencyRange{1, 256};
inline constexpr Range kCallTimeoutMsRange{1000, 86400000};
// A server entry's `idleTimeoutMs` and the default one: 0 (never) is checked apart.
inline constexpr Range kIdleTimeoutMsRange{1000, 86400000};
inline constexpr Range kIndexConcurrencyRange{1, 64};
inline constexpr Range kIndexWaitMsRange{0, 600000};
inline constexpr Range kIndexIdleMsRange{0, 86400000};
// "maxOutputBytes" (gateway-wide, per server, per tool): 256 bytes to 256 MiB.
inline constexpr Range kMaxOutputBytesRange{256, 256ull * 1024 * 1024};

// Where a problem is: the JSON path and, inside mcpServers, the entry's 1-based position
// (the entry's name is a value of the file, so the path says `entry` instead).
struct Where {
  std::string path;
  std::size_t entry = 0;

  Where key(std::string_view k) const { return {fmt::format("{}.{}", path, k), entry}; }
  Where index(std::size_t i) const { return {fmt::format("{}[{}]", path, i), entry}; }
};

// "<path>[ (server entry N)]: <what>[; <hint>]".
core::Error problem(const Where& at, std::string_view what, std::string_view hint = {});
// "<path>: expected <expected>, found <the type of found>".
core::Error wrong_type(const Where& at, std::string_view expected, const boost::json::value& found);

bool is_ascii_alnum(char c);

bool rejects_nul(char c);
bool rejects_in_url(char c);
bool rejects_in_header(char c);

// Which characters a kind of string may not hold, and how to say so.
struct TextRule {
  CharFilter rejects;
  std::string_view found;
};
inline constexpr TextRule kProcessText{rejects_nul, "a NUL character"};
inline constexpr TextRule kUrlText{rejects_in_url, "a control character or a space"};
inline constexpr TextRule kHeaderText{rejects_in_header, "a control character"};

// A string that passes `rule` (and is non-empty when `non_empty`), as a view into `v`.
core::Result<std::string_view> read_text(const boost::json::value& v, const Where& at,
                                         const TextRule& rule, bool non_empty);

// An integer within `range`. A number with a fraction or an exponent (4.0, 1e3) is not an
// integer.
core::Result<std::uint64_t> read_integer(const boost::json::value& v, const Where& at, Range range);
// 0 (a setting switched off), or an integer within `range`.
core::Result<std::uint64_t> read_integer_or_zero(const boost::json::value& v, const Where& at,
                                                 Range range);

}  // namespace sluice::config::detail
