#include "config/detail/client_entry.hpp"

#include "config/mcp_json.hpp"
#include "core/describe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

namespace sluice::config::detail {
namespace bj = boost::json;
namespace {

bool is_variable_name(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// What a translation found: notes to report, and the reason the server cannot be taken.
struct Findings {
  std::vector<std::string> notes;
  std::optional<std::string> skip;
  void note(std::string text) {
    if (std::find(notes.begin(), notes.end(), text) == notes.end())
      notes.push_back(std::move(text));
  }
};

// One `${...}` of VS Code or Cursor, as sluice spells it; nullopt (and a skip reason) when
// sluice cannot resolve it.
std::optional<std::string> editor_variable(Client client, std::string_view inner,
                                           const ClientInputs& inputs, Findings& found) {
  const std::string_view editor = client == Client::vscode ? "VS Code" : "Cursor";
  if (inner.starts_with("env:") && is_variable_name(inner.substr(4))) {
    found.note(fmt::format("{}'s ${{env:NAME}} became ${{NAME}}", editor));
    return fmt::format("${{{}}}", inner.substr(4));
  }
  if (inner == "userHome") return std::string("${HOME}");
  if (inner == "pathSeparator" || inner == "/") return std::string("/");
  if (inner.starts_with("input:") && client == Client::vscode) {
    std::string_view id = inner.substr(6);
    std::string variable = input_variable(id);
    auto input = inputs.find(id);
    found.note(fmt::format(
        "VS Code asks for the input {}{}; sluice reads it from ${{{}}}: run `sluice secrets "
        "set {}`",
        core::show_name(id),
        input == inputs.end() ? " (not declared in inputs)"
                              : (input->second ? " (a password)" : ""),
        variable, variable));
    return fmt::format("${{{}}}", variable);
  }
  if (inner.starts_with("workspaceFolder") || inner.starts_with("fileWorkspaceFolder") ||
      inner == "relativeFile" || inner == "file" || inner == "cwd") {
    found.skip = fmt::format(
        "it uses ${{{}}}, the folder open in {}, which sluice's user config has no value for",
        inner, editor);
    return std::nullopt;
  }
  if (is_variable_name(inner)) return fmt::format("${{{}}}", inner);
  std::string_view kind = inner.substr(0, inner.find(':'));
  found.skip = fmt::format(
      "it uses a {} variable sluice cannot resolve ({})", editor,
      is_variable_name(kind) ? fmt::format("${{{}:...}}", kind) : core::describe_text(inner));
  return std::nullopt;
}

// `$NAME` (Gemini CLI) as `${NAME}`; `${NAME}` kept.
std::string gemini_string(std::string_view in, Findings& found) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '$' || i + 1 >= in.size() ||
        !(std::isalpha(static_cast<unsigned char>(in[i + 1])) || in[i + 1] == '_')) {
      out += in[i];
      continue;
    }
    std::size_t end = i + 1;
    while (end < in.size() &&
           (std::isalnum(static_cast<unsigned char>(in[end])) || in[end] == '_')) {
      ++end;
    }
    out += fmt::format("${{{}}}", in.substr(i + 1, end - i - 1));
    found.note("Gemini's $NAME became ${NAME}");
    i = end - 1;
  }
  return out;
}

// One string of an entry, in sluice's `${VAR}` syntax.
std::string translate(Client client, std::string_view in, const ClientInputs& inputs,
                      Findings& found) {
  if (client == Client::gemini) return gemini_string(in, found);
  if (client == Client::claude_desktop && in.find("${") != std::string_view::npos) {
    found.note("a ${...} that Claude Desktop passes as it is, sluice expands");
  }
  if (client != Client::vscode && client != Client::cursor) return std::string(in);
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    std::size_t open = in.find("${", i);
    std::size_t close = open == std::string_view::npos ? open : in.find('}', open);
    if (close == std::string_view::npos) {
      out.append(in.substr(i));
      break;
    }
    out.append(in.substr(i, open - i));
    std::optional<std::string> v =
        editor_variable(client, in.substr(open + 2, close - open - 2), inputs, found);
    if (v) out += *v;
    i = close + 1;
  }
  return out;
}

// The key `key` of `in` as a string (nullopt when absent); a wrong type is a skip reason.
std::optional<std::string> string_of(const bj::object& in, std::string_view key, Client client,
                                     const ClientInputs& inputs, Findings& found) {
  const bj::value* v = in.if_contains(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    found.skip = fmt::format("its {} is {}, not a string", key, core::describe_kind(*v));
    return std::nullopt;
  }
  return translate(client, std::string_view(v->get_string()), inputs, found);
}

// An array of strings (`args`) or an object of strings (`env`, `headers`), translated.
std::optional<bj::value> strings_of(const bj::object& in, std::string_view key, Client client,
                                    const ClientInputs& inputs, Findings& found) {
  const bj::value* v = in.if_contains(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_array() && key == "args") {
    bj::array out;
    for (const bj::value& item : v->get_array()) {
      if (!item.is_string()) break;
      out.emplace_back(translate(client, std::string_view(item.get_string()), inputs, found));
    }
    if (out.size() == v->get_array().size()) return bj::value(std::move(out));
  } else if (v->is_object() && key != "args") {
    bj::object out;
    for (const auto& member : v->get_object()) {
      if (!member.value().is_string()) break;
      out[member.key()] =
          translate(client, std::string_view(member.value().get_string()), inputs, found);
    }
    if (out.size() == v->get_object().size()) return bj::value(std::move(out));
  }
  found.skip = fmt::format("its {} is not {}", key,
                           key == "args" ? "an array of strings" : "an object of strings");
  return std::nullopt;
}

// "stdio", "http" or "sse"; "" with a skip reason when the entry says none sluice takes.
std::string kind_of(Client client, const bj::object& in, Findings& found) {
  const bj::value* type = in.if_contains("type");
  if (type != nullptr && !type->is_string()) {
    found.skip = fmt::format("its type is {}, not a string", core::describe_kind(*type));
    return "";
  }
  std::string_view t = type != nullptr ? std::string_view(type->get_string()) : "";
  if (t == "stdio" || t == "sse") return std::string(t);
  if (t == "http" || t == "streamable-http" || t == "streamableHttp") return "http";
  if (!t.empty()) {
    found.skip = fmt::format("its type {} is not stdio, http or sse", core::show_name(t));
    return "";
  }
  if (in.contains("command")) return "stdio";
  if (client == Client::gemini && in.contains("httpUrl")) return "http";
  if (in.contains("url")) return client == Client::gemini ? "sse" : "http";
  found.skip = "it has neither a command nor a url";
  return "";
}

// The keys sluice reads itself, or drops because they change nothing behind sluice.
constexpr std::string_view kTaken[] = {
    "type",    "command",  "args",        "env",         "cwd",         "url",    "httpUrl",
    "headers", "disabled", "description", "autoApprove", "alwaysAllow", "timeout"};

// A note for each key that is not carried over, saying what to do instead where there is a way.
void note_dropped_keys(const bj::object& in, Findings& found) {
  for (const auto& member : in) {
    std::string_view key = member.key();
    if (std::find(std::begin(kTaken), std::end(kTaken), key) != std::end(kTaken)) continue;
    if (key == "envFile") {
      found.note(
          "envFile is not carried over: give sluice those variables (its environment, or "
          "`sluice secrets set NAME`)");
    } else if (key == "includeTools" || key == "excludeTools") {
      found.note(fmt::format(
          "{} is not carried over: sluice's policy lists filter tools (docs/configuration.md)",
          key));
    } else if (key == "trust") {
      found.note("trust is not carried over: the client asks about sluice's tools instead");
    } else if (key == "oauth") {
      found.note("oauth is not carried over: sluice signs in itself (`sluice auth login NAME`)");
    } else {
      found.note(fmt::format("{} is not carried over",
                             is_variable_name(key) ? std::string(key) : std::string("a key")));
    }
  }
}

// The optional keys both kinds share: description, Gemini's timeout, disabled.
void take_common_keys(Client client, const bj::object& in, ClientServer& server, Findings& found) {
  if (const bj::value* d = in.if_contains("description"); d != nullptr && d->is_string()) {
    server.entry["description"] = *d;
  }
  if (const bj::value* timeout = in.if_contains("timeout"); timeout != nullptr) {
    std::optional<std::int64_t> ms =
        timeout->is_int64() ? std::optional(timeout->get_int64()) : std::nullopt;
    if (client == Client::gemini && ms && *ms >= 1000 && *ms <= 86400000) {
      server.entry["timeoutMs"] = *ms;
    } else {
      found.note("timeout is not carried over (sluice's timeoutMs is 1000..86400000 ms)");
    }
  }
  if (const bj::value* disabled = in.if_contains("disabled");
      disabled != nullptr && disabled->is_bool() && disabled->get_bool()) {
    server.disabled = true;
    server.entry["disabled"] = true;
    found.note("disabled in the client: imported disabled");
  }
}

}  // namespace

std::string input_variable(std::string_view id) {
  std::string out;
  for (char c : id) {
    unsigned char u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::toupper(u)) : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(0, "_");
  return out;
}

bool starts_sluice(const bj::value& entry) {
  const bj::value* command =
      entry.is_object() ? entry.get_object().if_contains("command") : nullptr;
  if (command == nullptr || !command->is_string()) return false;
  return std::filesystem::path(std::string(command->get_string())).filename() == "sluice";
}

std::variant<ClientServer, SkippedServer> json_client_server(Client client, std::string_view name,
                                                             std::string_view scope,
                                                             const bj::value& entry,
                                                             const ClientInputs& inputs) {
  auto skip = [&](std::string reason) {
    return SkippedServer{std::string(name), std::string(scope), std::move(reason)};
  };
  if (name == "sluice") return skip("it is named sluice, the name of sluice's own entry");
  if (!entry.is_object()) return skip(fmt::format("its entry is {}", core::describe_kind(entry)));
  if (starts_sluice(entry)) return skip("it starts sluice itself");
  if (!is_valid_server_name(name)) {
    return skip("its name is not a sluice server name (1 to 64 of A-Z a-z 0-9 _ . -)");
  }
  const bj::object& in = entry.get_object();
  Findings found;
  ClientServer server{std::string(name), std::string(scope), {}, false, {}};
  std::string kind = kind_of(client, in, found);
  if (kind == "stdio") {
    std::optional<std::string> command = string_of(in, "command", client, inputs, found);
    if (!found.skip && (!command || command->empty())) found.skip = "it has no command";
    if (command) server.entry["command"] = *command;
    if (auto args = strings_of(in, "args", client, inputs, found)) server.entry["args"] = *args;
    if (auto env = strings_of(in, "env", client, inputs, found)) server.entry["env"] = *env;
    if (auto cwd = string_of(in, "cwd", client, inputs, found)) server.entry["cwd"] = *cwd;
  } else if (!kind.empty()) {
    server.entry["type"] = kind;
    const bool gemini_http = client == Client::gemini && in.contains("httpUrl");
    std::optional<std::string> url =
        string_of(in, gemini_http ? "httpUrl" : "url", client, inputs, found);
    if (!found.skip && (!url || url->empty())) found.skip = "it has no url";
    if (url) server.entry["url"] = *url;
    if (auto headers = strings_of(in, "headers", client, inputs, found)) {
      server.entry["headers"] = *headers;
    }
  }
  if (found.skip) return skip(*found.skip);
  take_common_keys(client, in, server, found);
  note_dropped_keys(in, found);
  server.notes = std::move(found.notes);
  return server;
}

}  // namespace sluice::config::detail
