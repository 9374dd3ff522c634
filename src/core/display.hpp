#pragma once
// The one escaping function for human-facing output (CLI stdout/stderr, log lines).
// Every non-printable code point becomes a visible escape: C0 (except \n and \t where the
// caller allows them), DEL, C1, bidi and zero-width controls, line/paragraph separators,
// soft hyphen, non-ASCII spaces, private-use, noncharacters, unassigned code points and
// invalid UTF-8 bytes. Protocol streams (MCP frames, --json output) never pass through it.
#include <filesystem>
#include <string>
#include <string_view>

namespace sluice::core {

struct DisplayOptions {
  bool keep_newlines = false;  // keep \n and \t (multi-line log text); otherwise escaped
};

std::string display_safe(std::string_view text, DisplayOptions opts = {});

// A path as the CLI shows it in a message.
inline std::string display_path(const std::filesystem::path& path) {
  return display_safe(path.string());
}

}  // namespace sluice::core
