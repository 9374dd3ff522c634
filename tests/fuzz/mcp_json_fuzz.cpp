// `.mcp.json` parsing and `${VAR}` interpolation (src/config/mcp_json.hpp, interpolate.hpp).
// The first byte of the input picks the file's origin (project, user, --config); the rest is
// the file's text, parsed by config::parse_text as discovery parses a file it read, and also
// interpolated on its own as one config string (with and without a filter of line breaks).
// The environment is fixed: a few names set (one empty, one with a line break, one holding
// the sentinel), every other name unset.
//
// Properties: no crash, leak or UB; a rejected file has one non-empty error; no error,
// warning or missing-variable report carries the sentinel value unless the text itself
// does; interpolation reports only names the text references; text without `$` is kept as
// it is.
#include "config/interpolate.hpp"
#include "config/mcp_json.hpp"
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

using namespace sluice;

std::optional<std::string> fixed_env(std::string_view name) {
  if (name == "HOME") return std::string("/home/fuzz");
  if (name == "EMPTY") return std::string();
  if (name == "MULTI_LINE") return std::string("one\ntwo");
  if (name == "TOKEN") return std::string(fuzz::kSentinel);
  if (name == "PATH") return std::string("/usr/bin:/bin");
  return std::nullopt;
}

bool rejects_line_break(char c) { return c == '\n' || c == '\r'; }

config::Origin origin_of(std::uint8_t selector) {
  switch (selector % 3) {
    case 0:
      return config::Origin::project;
    case 1:
      return config::Origin::user;
    default:
      return config::Origin::explicit_file;
  }
}

// The sentinel may appear in what is built from the text only where the text holds it
// (or a name that reads as it): never because a variable's value was substituted in.
void check_value_free(std::string_view text, std::string_view report) {
  if (!fuzz::contains(text, fuzz::kSentinel)) FUZZ_CHECK(!fuzz::contains(report, fuzz::kSentinel));
}

void check_interpolation(std::string_view text, const config::EnvLookup& env,
                         config::CharFilter filter) {
  config::Expansion e = config::interpolate(text, env, filter);
  if (text.find('$') == std::string_view::npos) FUZZ_CHECK(e.text == text);
  for (const std::string& name : e.unset) FUZZ_CHECK(fuzz::contains(text, name));
  for (const std::string& name : e.unusable) {
    FUZZ_CHECK(fuzz::contains(text, name));
    FUZZ_CHECK(filter && name == "MULTI_LINE");
  }
}

void run(std::string_view data) {
  if (data.empty()) return;
  const config::Origin origin = origin_of(static_cast<std::uint8_t>(data.front()));
  data.remove_prefix(1);
  const config::EnvLookup env = fixed_env;
  auto file = config::parse_text(data, "/fuzz/project/.mcp.json", origin, env);
  if (!file) {
    FUZZ_CHECK(!file.error().message.empty());
    check_value_free(data, file.error().message);
  } else {
    for (const std::string& w : file->warnings) check_value_free(data, w);
    for (const config::ServerConfig& s : file->servers) {
      FUZZ_CHECK(config::is_valid_server_name(s.name));
      for (const std::string& w : s.warnings) check_value_free(data, w);
      for (const std::string& name : s.missing_variables) check_value_free(data, name);
    }
  }
  check_interpolation(data, env, nullptr);
  check_interpolation(data, env, rejects_line_break);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
