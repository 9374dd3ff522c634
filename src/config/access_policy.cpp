#include "config/access_policy.hpp"

#include "config/glob.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <utility>

namespace sluice::config {
namespace {

bool scoped(Subject subject) {
  return subject == Subject::tools || subject == Subject::prompts || subject == Subject::resources;
}

// Whether `pattern` matches: the bare name, or `server::name` split at its first "::".
bool matches(Subject subject, std::string_view pattern, std::string_view server,
             std::string_view name) {
  if (!scoped(subject)) return glob_match(pattern, name);
  const std::size_t sep = pattern.find("::");
  if (sep == std::string_view::npos) return false;
  return glob_match(pattern.substr(0, sep), server) && glob_match(pattern.substr(sep + 2), name);
}

}  // namespace

std::string_view key_of(Subject subject) {
  switch (subject) {
    case Subject::servers:
      return "servers";
    case Subject::tools:
      return "tools";
    case Subject::prompts:
      return "prompts";
    case Subject::resources:
      return "resources";
    case Subject::meta_tools:
      return "metaTools";
  }
  return "servers";
}

const std::vector<std::string>& PatternLists::of(Subject subject) const {
  switch (subject) {
    case Subject::servers:
      return servers;
    case Subject::tools:
      return tools;
    case Subject::prompts:
      return prompts;
    case Subject::resources:
      return resources;
    case Subject::meta_tools:
      return meta_tools;
  }
  return servers;
}

std::vector<std::string>& PatternLists::of(Subject subject) {
  return const_cast<std::vector<std::string>&>(std::as_const(*this).of(subject));
}

bool PatternLists::empty() const {
  return servers.empty() && tools.empty() && prompts.empty() && resources.empty() &&
         meta_tools.empty();
}

std::string AccessPolicy::denial(Subject subject, std::string_view server,
                                 std::string_view name) const {
  const std::vector<std::string>& denied = deny.of(subject);
  for (std::size_t i = 0; i < denied.size(); ++i) {
    if (matches(subject, denied[i], server, name)) {
      return fmt::format("denied by policy.deny.{} entry {} (\"{}\")", key_of(subject), i + 1,
                         denied[i]);
    }
  }
  const std::vector<std::string>& allowed = allow.of(subject);
  if (allowed.empty()) return {};
  for (const std::string& pattern : allowed) {
    if (matches(subject, pattern, server, name)) return {};
  }
  return fmt::format("not allowed by policy.allow.{} (none of its {} entr{} matches)",
                     key_of(subject), allowed.size(), allowed.size() == 1 ? "y" : "ies");
}

bool is_valid_pattern(Subject subject, std::string_view pattern) {
  if (pattern.empty() || pattern.size() > kMaxPatternBytes) return false;
  for (char c : pattern) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"' || c == '\\') return false;
  }
  return !scoped(subject) || pattern.find("::") != std::string_view::npos;
}

}  // namespace sluice::config
