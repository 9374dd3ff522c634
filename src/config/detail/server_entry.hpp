#pragma once
// One server entry of an `.mcp.json` file (a member of "mcpServers"): its transport (a stdio
// command with arguments, environment and folder, or a remote URL with headers), `${VAR}`
// expansion, its "sluice" block, timeout and disabled flag, and the keys it holds that sluice
// does not use. Not part of the config interface.
#include "config/detail/fields.hpp"
#include "config/gateway_config.hpp"
#include "core/error.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sluice::config::detail {

// The unknown keys of one file's server entries, for its one warning. Not thread-safe: one
// per file being parsed.
class UnknownKeys {
 public:
  void add(std::string_view key);

  // "config file F: server entries hold keys sluice does not use, ignored: a, b and 2 other
  // keys"; nullopt when there were none.
  std::optional<std::string> warning(std::string_view display_file) const;

 private:
  std::unordered_set<std::string> seen_;
  std::vector<std::string> names_;  // plain names, in the order first found
  std::size_t unnamed_ = 0;         // keys that are not plain names (not shown)
};

class Expander;

// Reads the server entries of one file. Borrows `lookup`, which must outlive it; parse() is
// const and touches nothing but its arguments, so one parser may serve any number of entries.
// Relative `command` paths (with a '/') and `cwd` resolve against the file's folder.
class ServerEntryParser {
 public:
  ServerEntryParser(const std::filesystem::path& file, Origin origin, const EnvLookup& lookup);

  // The entry `v` of the server `name` (a valid server name), at `at`. Keys sluice does not
  // use are added to `unknown`; the first problem rejects the entry, value-free.
  core::Result<ServerConfig> parse(std::string_view name, const boost::json::value& v,
                                   const Where& at, UnknownKeys& unknown) const;

  // The file's path, made safe to display.
  const std::string& display_file() const { return display_file_; }

 private:
  core::Result<StdioServer> parse_stdio(const boost::json::object& entry, const Where& at,
                                        Expander& expander) const;
  core::Result<RemoteServer> parse_remote(const boost::json::object& entry, std::string type,
                                          const Where& at, Expander& expander) const;
  std::string resolve_command(std::string command) const;
  std::string resolve(std::string path) const;

  std::filesystem::path file_;
  std::filesystem::path dir_;
  std::string display_file_;
  Origin origin_;
  const EnvLookup& lookup_;
};

}  // namespace sluice::config::detail
