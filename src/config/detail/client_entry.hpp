#pragma once
// Internal to src/config: one server entry of a JSON-family client file (Claude Code, Claude
// Desktop, Cursor, VS Code, Gemini CLI) in sluice's `.mcp.json` entry shape (client_entry.cpp),
// for the documents of client_config.cpp. Pure functions; reasons and notes are value-free by
// construction (the client's key names, kinds and variable names, never a value).
#include "config/client_config.hpp"

#include <boost/json/value.hpp>

#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace sluice::config::detail {

// VS Code's `inputs`: each declared id, and whether it is a password.
using ClientInputs = std::map<std::string, bool, std::less<>>;

// The entry `name` of `client`'s file, read in `scope`, translated: `${env:X}` (VS Code,
// Cursor) and `$X` (Gemini) become `${X}`, `${input:id}` becomes `${ID}` with a note; what
// sluice cannot carry over is a note, and what the server cannot work without (a variable only
// the editor knows, a shape sluice does not take) skips it.
std::variant<ClientServer, SkippedServer> json_client_server(Client client, std::string_view name,
                                                             std::string_view scope,
                                                             const boost::json::value& entry,
                                                             const ClientInputs& inputs);

// Whether the entry starts sluice: its command is `sluice` or a path to a file of that name.
bool starts_sluice(const boost::json::value& entry);

// The variable a VS Code input id is read from: upper case, [A-Z0-9_], not starting with a
// digit ("api-key" -> "API_KEY").
std::string input_variable(std::string_view id);

}  // namespace sluice::config::detail
