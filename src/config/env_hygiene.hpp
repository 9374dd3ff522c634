#pragma once
// Environment hygiene: the variables a server entry's `env` may not set, because they make a
// program run code other than its own (a preloaded library, a shell's or interpreter's
// startup file, an agent or a module loaded through an options variable, a search path read
// before the runtime's own files), or hand the TLS keys of its connections to a file. The
// rule of the list, each entry's reason and what is left out on purpose are in
// docs/configuration.md (Environment hygiene).
//
// Names are compared exactly (the environment is case-sensitive); values are read only where
// the danger depends on them (NODE_OPTIONS with a preloading flag), and after `${VAR}`
// expansion, so a value that only becomes dangerous through interpolation is refused too.
// Pure functions; safe from any thread.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::config {

// Why the variable `name` with `value` may not be in a server's environment: one value-free
// clause ("makes the dynamic loader load a library into the program first"), or nullopt
// when it may.
std::optional<std::string_view> refused_variable(std::string_view name, std::string_view value);

// `name` as a refusal may show it: the name itself when it is a plain identifier
// ([A-Za-z_][A-Za-z0-9_]*, at most 64 characters), else "a variable starting with PREFIX"
// for the refused family it belongs to. Never the value.
std::string refused_variable_label(std::string_view name);

// The refusal of a stdio server whose expanded `env` holds refused variables: "its env sets
// LD_PRELOAD, which sluice never passes to a server (it ...): remove it from the entry", naming
// each one (by refused_variable_label) with its reason; empty when there is none. Display-safe
// and value-free.
std::string env_refusal(const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace sluice::config
