#include "config/detail/server_entry.hpp"

#include "config/detail/oauth_entry.hpp"
#include "config/detail/policy_block.hpp"
#include "config/env_hygiene.hpp"
#include "config/interpolate.hpp"
#include "core/ascii.hpp"
#include "core/describe.hpp"
#include "core/display.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

namespace sluice::config::detail {
namespace bj = boost::json;
namespace fs = std::filesystem;

// Expands `${VAR}` references for one server and remembers which variables were missing.
class Expander {
 public:
  explicit Expander(const EnvLookup& lookup) : lookup_(lookup) {}

  std::string expand(std::string_view text, CharFilter rejects) {
    Expansion e = interpolate(text, lookup_, rejects);
    for (auto& name : e.unset) note(std::move(name), "is not set; substituted empty");
    for (auto& name : e.unusable) {
      note(std::move(name), "holds a character not allowed where it is used; its value is ignored");
    }
    return std::move(e.text);
  }

  void finish(ServerConfig& server, std::string_view file) {
    for (auto& [name, why] : notes_) {
      server.warnings.push_back(
          fmt::format("server {} ({}): variable {} {}", server.name, file, name, why));
      server.missing_variables.push_back(std::move(name));
    }
  }

 private:
  void note(std::string name, std::string_view why) {
    if (noted_.insert(name).second) notes_.emplace_back(std::move(name), why);
  }

  const EnvLookup& lookup_;
  std::vector<std::pair<std::string, std::string_view>> notes_;
  std::unordered_set<std::string> noted_;  // the names in notes_
};

namespace {

// RFC 9110 token characters, the only ones a header name may hold.
bool is_token_char(char c) {
  return is_ascii_alnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_header_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), is_token_char);
}

bool is_env_name(std::string_view name) {
  return !name.empty() && name.find('=') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

bool starts_with_http_scheme(std::string_view url) {
  return core::ascii::starts_with_in_any_case(url, "http://") ||
         core::ascii::starts_with_in_any_case(url, "https://");
}

// The keys a server entry may hold: the format's own, and keys other MCP clients write
// that are harmless to ignore (a description; Cline's and Roo's auto-approval lists, which
// only skip a confirmation sluice never asks for). Anything else is reported, once per file.
bool is_known_entry_key(std::string_view key) {
  static const std::unordered_set<std::string_view> kKnown{
      "type",        "command",     "args",      "env",           "cwd",      "url",
      "headers",     "sluice",      "timeoutMs", "idleTimeoutMs", "disabled", "description",
      "autoApprove", "alwaysAllow", "oauth",     "caFile",        "allowHttp"};
  return kKnown.contains(key);
}

// A key shown by name in a warning: [A-Za-z_][A-Za-z0-9_-]{0,63}. Any other key is a value
// the file chose and is only counted.
bool is_plain_key(std::string_view key) {
  if (key.empty() || key.size() > 64) return false;
  if (!(is_ascii_alnum(key.front()) || key.front() == '_') ||
      (key.front() >= '0' && key.front() <= '9')) {
    return false;
  }
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '_' || c == '-'; });
}

}  // namespace

void UnknownKeys::add(std::string_view key) {
  if (!is_plain_key(key)) {
    ++unnamed_;
  } else if (seen_.emplace(key).second) {
    names_.emplace_back(key);
  }
}

std::optional<std::string> UnknownKeys::warning(std::string_view display_file) const {
  if (names_.empty() && unnamed_ == 0) return std::nullopt;
  constexpr std::size_t kShown = 8;
  std::string list;
  std::size_t shown = std::min(names_.size(), kShown);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) list += ", ";
    list += names_[i];
  }
  std::size_t others = names_.size() - shown + unnamed_;
  if (others > 0) {
    if (shown > 0) list += " and ";
    if (shown > 0) {
      list += fmt::format("{} other key{}", others, others == 1 ? "" : "s");
    } else {
      list += others == 1 ? "an unknown key" : fmt::format("{} unknown keys", others);
    }
  }
  return fmt::format("config file {}: server entries hold keys sluice does not use, ignored: {}",
                     display_file, list);
}

ServerEntryParser::ServerEntryParser(const fs::path& file, Origin origin, const EnvLookup& lookup)
    : file_(file.lexically_normal()),
      dir_(file_.parent_path()),
      display_file_(core::display_safe(file_.string())),
      origin_(origin),
      lookup_(lookup) {}

core::Result<ServerConfig> ServerEntryParser::parse(std::string_view name, const bj::value& v,
                                                    const Where& at, UnknownKeys& unknown) const {
  const bj::object* entry = v.if_object();
  if (entry == nullptr) return wrong_type(at, "an object", v);
  for (const auto& kv : *entry) {
    std::string_view key(kv.key().data(), kv.key().size());
    if (!is_known_entry_key(key)) unknown.add(key);
  }
  std::string type;
  if (const bj::value* t = entry->if_contains("type")) {
    const bj::string* s = t->if_string();
    if (s == nullptr) return wrong_type(at.key("type"), "a string", *t);
    type.assign(s->data(), s->size());
    if (type == "streamable-http") type = "http";
    if (type != "stdio" && type != "http" && type != "sse") {
      return problem(at.key("type"),
                     fmt::format("unknown transport type ({})", core::describe_value(*t)),
                     "expected \"stdio\", \"http\" or \"sse\"");
    }
  } else if (entry->contains("command")) {
    type = "stdio";
  } else if (entry->contains("url")) {
    type = "http";
  } else {
    return problem(at, "expected a \"command\" (stdio server) or a \"url\" (remote server)");
  }

  ServerConfig server;
  server.name = std::string(name);
  server.source_file = file_.string();
  server.origin = origin_;
  Expander expander(lookup_);
  if (type == "stdio") {
    core::Result<StdioServer> stdio = parse_stdio(*entry, at, expander);
    if (!stdio) return stdio.error();
    // Checked after expansion: a value that only becomes dangerous through ${VAR} counts.
    server.env_refusal = env_refusal(stdio->env);
    server.transport = std::move(*stdio);
  } else {
    core::Result<RemoteServer> remote = parse_remote(*entry, std::move(type), at, expander);
    if (!remote) return remote.error();
    server.transport = std::move(*remote);
  }
  if (const bj::value* settings = entry->if_contains("sluice")) {
    core::Result<ServerPolicy> policy = parse_server_policy(*settings, at.key("sluice"));
    if (!policy) return policy.error();
    server.policy = std::move(*policy);
  }
  if (const bj::value* timeout = entry->if_contains("timeoutMs")) {
    core::Result<std::uint64_t> n =
        read_integer(*timeout, at.key("timeoutMs"), kCallTimeoutMsRange);
    if (!n) return n.error();
    server.timeout = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(*n));
  }
  if (const bj::value* idle = entry->if_contains("idleTimeoutMs")) {
    core::Result<std::uint64_t> n =
        read_integer_or_zero(*idle, at.key("idleTimeoutMs"), kIdleTimeoutMsRange);
    if (!n) return n.error();
    server.idle_timeout =
        std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(*n));
  }
  if (const bj::value* disabled = entry->if_contains("disabled")) {
    const bool* b = disabled->if_bool();
    if (b == nullptr) return wrong_type(at.key("disabled"), "a boolean", *disabled);
    server.disabled = *b;
  }
  expander.finish(server, display_file_);
  if (!server.env_refusal.empty()) {
    server.warnings.push_back(fmt::format("server {} ({}): {}; sluice does not start it",
                                          server.name, display_file_, server.env_refusal));
  }
  // A server that never starts needs no word about its variables.
  if (server.disabled) server.warnings.clear();
  return server;
}

core::Result<StdioServer> ServerEntryParser::parse_stdio(const bj::object& entry, const Where& at,
                                                         Expander& expander) const {
  StdioServer out;
  const bj::value* command = entry.if_contains("command");
  if (command == nullptr) return problem(at.key("command"), "missing");
  core::Result<std::string_view> text = read_text(*command, at.key("command"), kProcessText, true);
  if (!text) return text.error();
  out.command = resolve_command(expander.expand(*text, rejects_nul));

  if (const bj::value* args = entry.if_contains("args")) {
    Where where = at.key("args");
    const bj::array* arr = args->if_array();
    if (arr == nullptr) return wrong_type(where, "an array of strings", *args);
    for (std::size_t i = 0; i < arr->size(); ++i) {
      core::Result<std::string_view> arg =
          read_text((*arr)[i], where.index(i), kProcessText, false);
      if (!arg) return arg.error();
      out.args.push_back(expander.expand(*arg, rejects_nul));
    }
  }

  if (const bj::value* env = entry.if_contains("env")) {
    Where where = at.key("env");
    const bj::object* vars = env->if_object();
    if (vars == nullptr) return wrong_type(where, "an object of strings", *env);
    for (const auto& kv : *vars) {
      std::string_view name(kv.key().data(), kv.key().size());
      if (!is_env_name(name)) {
        return problem(where.key("entry"),
                       fmt::format("invalid variable name ({})", core::describe_text(name)),
                       "expected a non-empty name without \"=\" or NUL");
      }
      core::Result<std::string_view> value =
          read_text(kv.value(), where.key("entry"), kProcessText, false);
      if (!value) return value.error();
      out.env.emplace_back(std::string(name), expander.expand(*value, rejects_nul));
    }
  }

  if (const bj::value* cwd = entry.if_contains("cwd")) {
    core::Result<std::string_view> dir = read_text(*cwd, at.key("cwd"), kProcessText, true);
    if (!dir) return dir.error();
    out.cwd = resolve(expander.expand(*dir, rejects_nul));
  }
  return out;
}

core::Result<RemoteServer> ServerEntryParser::parse_remote(const bj::object& entry,
                                                           std::string type, const Where& at,
                                                           Expander& expander) const {
  RemoteServer out;
  out.type = std::move(type);
  const bj::value* url = entry.if_contains("url");
  if (url == nullptr) return problem(at.key("url"), "missing");
  core::Result<std::string_view> text = read_text(*url, at.key("url"), kUrlText, true);
  if (!text) return text.error();
  if (!starts_with_http_scheme(*text) && !text->starts_with("${")) {
    return problem(at.key("url"),
                   fmt::format("{} is not an http:// or https:// URL", core::describe_value(*url)));
  }
  out.url = expander.expand(*text, rejects_in_url);

  if (const bj::value* headers = entry.if_contains("headers")) {
    Where where = at.key("headers");
    const bj::object* fields = headers->if_object();
    if (fields == nullptr) return wrong_type(where, "an object of strings", *headers);
    std::unordered_set<std::string> lowered;  // the names so far, ASCII lower case
    for (const auto& kv : *fields) {
      std::string_view name(kv.key().data(), kv.key().size());
      if (!is_header_name(name)) {
        return problem(where.key("entry"),
                       fmt::format("invalid header name ({})", core::describe_text(name)),
                       "expected HTTP token characters");
      }
      if (!lowered.insert(core::ascii::lowered(name)).second) {
        return problem(where.key("entry"), "duplicate header name (names ignore case)");
      }
      core::Result<std::string_view> value =
          read_text(kv.value(), where.key("entry"), kHeaderText, false);
      if (!value) return value.error();
      out.headers.emplace_back(std::string(name), expander.expand(*value, rejects_in_header));
    }
  }
  if (const bj::value* oauth = entry.if_contains("oauth")) {
    core::Result<OAuthSettings> settings = parse_oauth(
        *oauth, at.key("oauth"),
        [&](std::string_view text) { return expander.expand(text, rejects_in_header); });
    if (!settings) return settings.error();
    out.oauth = std::move(*settings);
  }
  if (const bj::value* ca = entry.if_contains("caFile")) {
    core::Result<std::string_view> file = read_text(*ca, at.key("caFile"), kProcessText, true);
    if (!file) return file.error();
    out.ca_file = resolve(expander.expand(*file, rejects_nul));
  }
  if (const bj::value* allow = entry.if_contains("allowHttp")) {
    const bool* b = allow->if_bool();
    if (b == nullptr) return wrong_type(at.key("allowHttp"), "a boolean", *allow);
    out.allow_http = *b;
  }
  return out;
}

// A relative command containing '/' is relative to the config file's folder; a bare name
// is looked up in PATH at spawn time.
std::string ServerEntryParser::resolve_command(std::string command) const {
  if (command.find('/') == std::string::npos) return command;
  return resolve(std::move(command));
}

// Absolute paths are kept as written; relative ones are joined to the file's folder and
// normalised lexically, without a trailing separator.
std::string ServerEntryParser::resolve(std::string path) const {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  fs::path out = (dir_ / path).lexically_normal();
  if (!out.has_filename() && out.has_relative_path()) out = out.parent_path();
  return out.string();
}

}  // namespace sluice::config::detail
