#pragma once
// The operator's allow and deny lists (the "policy" object of the top-level "sluice" block,
// from user-level and --config files only): which servers, tools, prompts, resources and
// meta-tools clients may see and use. Patterns are globs (glob.hpp). A tool, prompt or resource
// pattern is `server::name` (a resource's name is its URI; a resource template's, its
// uriTemplate), split at its first "::" into a server glob and a name glob; a server or
// meta-tool pattern is the bare name. Deny wins; an empty allow list allows every name, a
// non-empty one only the names it matches.
//
// Contract: plain immutable values, compared by value. denial() is a pure function; its
// reason names the rule (the list and the entry's position, and the operator's own pattern),
// never anything of a call's arguments. Cost: a walk over one list's patterns; the gateway
// asks it when a listing is taken (withheld entries never reach the catalog or a listing) and
// when a request names something absent, not per call of an allowed tool.
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

// What a pattern list is about, in the order and with the keys of the file.
enum class Subject { servers, tools, prompts, resources, meta_tools };
// Its key in the file: "servers", "tools", "prompts", "resources", "metaTools".
std::string_view key_of(Subject subject);

// One list of patterns per subject.
struct PatternLists {
  std::vector<std::string> servers, tools, prompts, resources, meta_tools;

  const std::vector<std::string>& of(Subject subject) const;
  std::vector<std::string>& of(Subject subject);
  bool empty() const;
  bool operator==(const PatternLists&) const = default;
};

struct AccessPolicy {
  PatternLists allow;
  PatternLists deny;

  // Why `name` (of `server`; ignored for servers and meta-tools) is withheld: `denied by
  // policy.deny.tools entry 3 ("github::delete_*")` or `not allowed by policy.allow.tools
  // (none of its 2 entries matches)`; empty when it is allowed.
  std::string denial(Subject subject, std::string_view server, std::string_view name) const;
  bool allows(Subject subject, std::string_view server, std::string_view name) const {
    return denial(subject, server, name).empty();
  }
  bool empty() const { return allow.empty() && deny.empty(); }
  bool operator==(const AccessPolicy&) const = default;
};

// Whether `pattern` is well formed for `subject`: non-empty, at most kMaxPatternBytes of
// printable characters, and with a "::" for tools, prompts and resources.
inline constexpr std::size_t kMaxPatternBytes = 512;
bool is_valid_pattern(Subject subject, std::string_view pattern);

}  // namespace sluice::config
