#include "store/fingerprint.hpp"

#include "config/trust_store.hpp"
#include "core/ascii.hpp"

#include <algorithm>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::store {
namespace {

// Each field as `<length>:<bytes>,` (a netstring), so that no choice of strings can make two
// different definitions encode alike.
void add_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ',';
}

template <typename Pairs>
void add_sorted_names(std::string& out, const Pairs& pairs, bool lowercase) {
  std::vector<std::string> names;
  names.reserve(pairs.size());
  for (const auto& [name, value] : pairs) {
    std::string key = name;
    if (lowercase) core::ascii::lower_in_place(key);
    names.push_back(std::move(key));
  }
  std::sort(names.begin(), names.end());
  add_field(out, std::to_string(names.size()));
  for (const std::string& name : names) add_field(out, name);
}

std::string canonical(const config::ServerConfig& server) {
  std::string out;
  add_field(out, "sluice-server-definition-1");
  if (const auto* stdio = std::get_if<config::StdioServer>(&server.transport)) {
    add_field(out, "stdio");
    add_field(out, stdio->command);
    add_field(out, std::to_string(stdio->args.size()));
    for (const std::string& arg : stdio->args) add_field(out, arg);
    add_field(out, stdio->cwd);
    add_sorted_names(out, stdio->env, false);
  } else {
    const auto& remote = std::get<config::RemoteServer>(server.transport);
    add_field(out, "remote");
    add_field(out, remote.type);
    add_field(out, remote.url);
    add_sorted_names(out, remote.headers, true);
  }
  return out;
}

}  // namespace

std::string fingerprint(const config::ServerConfig& server) {
  return config::content_digest(canonical(server));
}

}  // namespace sluice::store
