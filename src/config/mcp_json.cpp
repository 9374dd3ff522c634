#include "config/mcp_json.hpp"

#include "config/interpolate.hpp"
#include "core/describe.hpp"
#include "core/display.hpp"
#include "core/json.hpp"

#include <boost/json/value.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <system_error>
#include <unordered_set>
#include <utility>

namespace sluice::config {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

constexpr std::size_t kMaxServerNameLength = 64;
constexpr std::string_view kNameRule =
    "a server name is 1 to 64 of A-Z a-z 0-9 _ . -, starts with a letter or digit, and has no "
    "\"__\" and no trailing \"_\"";
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// The inclusive range of an integer setting of the "sluice" objects.
struct Range {
  std::uint64_t min;
  std::uint64_t max;
};
constexpr Range kBudgetRange{1, 1024};
constexpr Range kClientCapRange{1, 4096};
constexpr Range kQueueSizeRange{0, 100000};
constexpr Range kQueueTimeoutMsRange{0, 3600000};
constexpr Range kAbandonMsRange{1000, 86400000};
constexpr Range kDrainMsRange{0, 600000};
constexpr Range kStartConcurrencyRange{1, 256};
constexpr Range kCallTimeoutMsRange{1000, 86400000};

// Where a problem is: the JSON path and, inside mcpServers, the entry's 1-based position
// (the entry's name is a value of the file, so the path says `entry` instead).
struct Where {
  std::string path;
  std::size_t entry = 0;

  Where key(std::string_view k) const { return {fmt::format("{}.{}", path, k), entry}; }
  Where index(std::size_t i) const { return {fmt::format("{}[{}]", path, i), entry}; }
};

// "<path>[ (server entry N)]: <what>[; <hint>]".
core::Error problem(const Where& at, std::string_view what, std::string_view hint = {}) {
  std::string where =
      at.entry == 0 ? at.path : fmt::format("{} (server entry {})", at.path, at.entry);
  if (hint.empty()) return core::make_error(fmt::format("{}: {}", where, what));
  return core::make_error(fmt::format("{}: {}; {}", where, what, hint));
}

core::Error wrong_type(const Where& at, std::string_view expected, const bj::value& found) {
  return problem(at, fmt::format("expected {}, found {}", expected, core::describe_value(found)));
}


bool is_ascii_alnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

bool rejects_nul(char c) { return c == '\0'; }
bool rejects_in_url(char c) { return is_control(c) || c == ' '; }
bool rejects_in_header(char c) { return is_control(c) && c != '\t'; }

// Which characters a kind of string may not hold, and how to say so.
struct TextRule {
  CharFilter rejects;
  std::string_view found;
};
constexpr TextRule kProcessText{rejects_nul, "a NUL character"};
constexpr TextRule kUrlText{rejects_in_url, "a control character or a space"};
constexpr TextRule kHeaderText{rejects_in_header, "a control character"};

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

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

bool starts_with_http_scheme(std::string_view url) {
  return (url.size() >= 7 && iequals(url.substr(0, 7), "http://")) ||
         (url.size() >= 8 && iequals(url.substr(0, 8), "https://"));
}

core::Result<std::string_view> read_text(const bj::value& v, const Where& at, const TextRule& rule,
                                         bool non_empty) {
  const bj::string* s = v.if_string();
  if (s == nullptr) return wrong_type(at, non_empty ? "a non-empty string" : "a string", v);
  std::string_view text(s->data(), s->size());
  if (non_empty && text.empty())
    return problem(at, "expected a non-empty string, found an empty one");
  if (std::any_of(text.begin(), text.end(), rule.rejects)) {
    return problem(at, fmt::format("{} contains {}", core::describe_value(v), rule.found));
  }
  return text;
}

// An integer within `range`. A number with a fraction or an exponent (4.0, 1e3) is not an
// integer.
core::Result<std::uint64_t> read_integer(const bj::value& v, const Where& at, Range range) {
  std::uint64_t n = 0;
  bool negative = false;
  if (const std::int64_t* i = v.if_int64()) {
    negative = *i < 0;
    if (!negative) n = static_cast<std::uint64_t>(*i);
  } else if (const std::uint64_t* u = v.if_uint64()) {
    n = *u;
  } else {
    return wrong_type(at, "an integer", v);
  }
  if (negative || n < range.min) {
    return problem(at, fmt::format("must be at least {} ({})", range.min, core::describe_value(v)));
  }
  if (n > range.max) {
    return problem(at, fmt::format("must be at most {} ({})", range.max, core::describe_value(v)));
  }
  return n;
}

// Reads the optional settings of one "sluice" object, in the order asked; after the first
// problem it reads nothing more and error() holds that problem.
class SettingsReader {
 public:
  SettingsReader(const bj::object& settings, Where at) : settings_(settings), at_(std::move(at)) {}

  void count(std::string_view key, Range range, std::optional<std::size_t>& out) {
    if (std::optional<std::uint64_t> n = integer(key, range)) out = static_cast<std::size_t>(*n);
  }

  void millis(std::string_view key, Range range, std::optional<std::chrono::milliseconds>& out) {
    if (std::optional<std::uint64_t> n = integer(key, range)) {
      out = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(*n));
    }
  }

  void flag(std::string_view key, std::optional<bool>& out) {
    const bj::value* v = find(key);
    if (v == nullptr) return;
    if (const bool* b = v->if_bool()) {
      out = *b;
    } else {
      error_ = wrong_type(at_.key(key), "a boolean", *v);
    }
  }

  const std::optional<core::Error>& error() const { return error_; }

 private:
  const bj::value* find(std::string_view key) const {
    if (error_) return nullptr;
    return settings_.if_contains(bj::string_view(key.data(), key.size()));
  }

  std::optional<std::uint64_t> integer(std::string_view key, Range range) {
    const bj::value* v = find(key);
    if (v == nullptr) return std::nullopt;
    core::Result<std::uint64_t> n = read_integer(*v, at_.key(key), range);
    if (!n) {
      error_ = n.error();
      return std::nullopt;
    }
    return *n;
  }

  const bj::object& settings_;
  Where at_;
  std::optional<core::Error> error_;
};

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

// The keys a server entry may hold: the format's own, and keys other MCP clients write
// that are harmless to ignore (a description; Cline's and Roo's auto-approval lists, which
// only skip a confirmation sluice never asks for). Anything else is reported, once per file.
bool is_known_entry_key(std::string_view key) {
  static const std::unordered_set<std::string_view> kKnown{
      "type",     "command",     "args",        "env",        "cwd",        "url",    "headers",
      "sluice",   "timeoutMs",   "disabled",    "description", "autoApprove", "alwaysAllow"};
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

// The unknown keys of one file's server entries, for its one warning.
class UnknownKeys {
 public:
  void add(std::string_view key) {
    if (!is_plain_key(key)) {
      ++unnamed_;
    } else if (seen_.emplace(key).second) {
      names_.emplace_back(key);
    }
  }

  // "config file F: server entries hold keys sluice does not use, ignored: a, b and 2 other
  // keys"; nullopt when there were none.
  std::optional<std::string> warning(std::string_view display_file) const {
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

 private:
  std::unordered_set<std::string> seen_;
  std::vector<std::string> names_;  // plain names, in the order first found
  std::size_t unnamed_ = 0;         // keys that are not plain names (not shown)
};

class FileParser {
 public:
  FileParser(const fs::path& file, Origin origin, const EnvLookup& lookup)
      : file_(file.lexically_normal()),
        dir_(file_.parent_path()),
        display_file_(core::display_safe(file_.string())),
        origin_(origin),
        lookup_(lookup) {}

  core::Result<ConfigFile> parse(const bj::value& root) const {
    const bj::object* obj = root.if_object();
    if (obj == nullptr) return wrong_type({"$"}, "an object", root);
    ConfigFile out;
    UnknownKeys unknown;
    if (const bj::value* servers = obj->if_contains("mcpServers")) {
      const bj::object* entries = servers->if_object();
      if (entries == nullptr) return wrong_type({"$.mcpServers"}, "an object", *servers);
      std::size_t position = 0;
      for (const auto& kv : *entries) {
        Where at{"$.mcpServers.entry", ++position};
        std::string_view name(kv.key().data(), kv.key().size());
        if (!is_valid_server_name(name)) {
          return problem(at, fmt::format("invalid server name ({})", core::describe_text(name)),
                         kNameRule);
        }
        core::Result<ServerConfig> server = parse_server(name, kv.value(), at, unknown);
        if (!server) return server.error();
        if (kv.value().as_object().contains("sluice")) out.has_operator_settings = true;
        out.servers.push_back(std::move(*server));
      }
    }
    if (const bj::value* auto_start = obj->if_contains("autoStart")) {
      core::Result<std::vector<std::string>> names = parse_auto_start(*auto_start);
      if (!names) return names.error();
      out.auto_start = std::move(*names);
    }
    if (const bj::value* settings = obj->if_contains("sluice")) {
      core::Result<FilePolicy> policy = parse_gateway_policy(*settings);
      if (!policy) return policy.error();
      out.policy = *policy;
      out.has_operator_settings = true;
    }
    if (std::optional<std::string> w = unknown.warning(display_file_)) {
      out.warnings.push_back(std::move(*w));
    }
    return out;
  }

 private:
  static core::Result<std::vector<std::string>> parse_auto_start(const bj::value& v) {
    Where at{"$.autoStart"};
    const bj::array* arr = v.if_array();
    if (arr == nullptr) return wrong_type(at, "an array of server names", v);
    std::vector<std::string> names;
    std::unordered_set<std::string_view> seen;  // views of the array's own strings
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const bj::string* s = (*arr)[i].if_string();
      if (s == nullptr) return wrong_type(at.index(i), "a server name", (*arr)[i]);
      std::string_view name(s->data(), s->size());
      if (!is_valid_server_name(name)) {
        return problem(at.index(i),
                       fmt::format("invalid server name ({})", core::describe_value((*arr)[i])),
                       kNameRule);
      }
      if (seen.insert(name).second) names.emplace_back(name);
    }
    return names;
  }

  // The top-level "sluice" object: gateway-wide admission settings, each optional.
  static core::Result<FilePolicy> parse_gateway_policy(const bj::value& v) {
    Where at{"$.sluice"};
    const bj::object* settings = v.if_object();
    if (settings == nullptr) return wrong_type(at, "an object", v);
    FilePolicy out;
    SettingsReader reader(*settings, at);
    reader.count("readBudget", kBudgetRange, out.read_budget);
    reader.count("mutatingBudget", kBudgetRange, out.mutating_budget);
    reader.count("clientCap", kClientCapRange, out.client_cap);
    reader.count("queueSize", kQueueSizeRange, out.queue_size);
    reader.millis("queueTimeoutMs", kQueueTimeoutMsRange, out.queue_timeout);
    reader.millis("abandonMs", kAbandonMsRange, out.abandon_bound);
    reader.millis("drainMs", kDrainMsRange, out.drain_bound);
    reader.flag("forbidForce", out.forbid_force);
    reader.flag("failClosedWhenStale", out.fail_closed_when_stale);
    reader.count("writesPerServer", kBudgetRange, out.writes_per_server);
    reader.count("startConcurrency", kStartConcurrencyRange, out.start_concurrency);
    reader.millis("callTimeoutMs", kCallTimeoutMsRange, out.call_timeout);
    reader.millis("maxCallMs", kCallTimeoutMsRange, out.max_call);
    reader.flag("allowUnvalidatedTools", out.allow_unvalidated_tools);
    if (reader.error()) return *reader.error();
    return out;
  }

  // The "sluice" object of one server entry: its default budget and per-tool budgets. Tool
  // names are the downstream's, not fixed keys of the format, so paths say `entry`.
  static core::Result<ServerPolicy> parse_server_policy(const bj::value& v, const Where& at) {
    const bj::object* settings = v.if_object();
    if (settings == nullptr) return wrong_type(at, "an object", v);
    ServerPolicy out;
    if (const bj::value* budget = settings->if_contains("budget")) {
      core::Result<std::uint64_t> n = read_integer(*budget, at.key("budget"), kBudgetRange);
      if (!n) return n.error();
      out.budget = static_cast<std::size_t>(*n);
    }
    if (const bj::value* writes = settings->if_contains("writes")) {
      core::Result<std::uint64_t> n = read_integer(*writes, at.key("writes"), kBudgetRange);
      if (!n) return n.error();
      out.writes = static_cast<std::size_t>(*n);
    }
    if (const bj::value* tools = settings->if_contains("tools")) {
      Where where = at.key("tools");
      const bj::object* budgets = tools->if_object();
      if (budgets == nullptr) return wrong_type(where, "an object of integers", *tools);
      for (const auto& kv : *budgets) {
        core::Result<std::uint64_t> n = read_integer(kv.value(), where.key("entry"), kBudgetRange);
        if (!n) return n.error();
        out.tool_budgets.emplace_back(std::string(kv.key().data(), kv.key().size()),
                                      static_cast<std::size_t>(*n));
      }
    }
    return out;
  }

  core::Result<ServerConfig> parse_server(std::string_view name, const bj::value& v,
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
    if (const bj::value* disabled = entry->if_contains("disabled")) {
      const bool* b = disabled->if_bool();
      if (b == nullptr) return wrong_type(at.key("disabled"), "a boolean", *disabled);
      server.disabled = *b;
    }
    expander.finish(server, display_file_);
    // A server that never starts needs no word about its variables.
    if (server.disabled) server.warnings.clear();
    return server;
  }

  core::Result<StdioServer> parse_stdio(const bj::object& entry, const Where& at,
                                        Expander& expander) const {
    StdioServer out;
    const bj::value* command = entry.if_contains("command");
    if (command == nullptr) return problem(at.key("command"), "missing");
    core::Result<std::string_view> text =
        read_text(*command, at.key("command"), kProcessText, true);
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

  static core::Result<RemoteServer> parse_remote(const bj::object& entry, std::string type,
                                                 const Where& at, Expander& expander) {
    RemoteServer out;
    out.type = std::move(type);
    const bj::value* url = entry.if_contains("url");
    if (url == nullptr) return problem(at.key("url"), "missing");
    core::Result<std::string_view> text = read_text(*url, at.key("url"), kUrlText, true);
    if (!text) return text.error();
    if (!starts_with_http_scheme(*text) && !text->starts_with("${")) {
      return problem(at.key("url"), fmt::format("{} is not an http:// or https:// URL",
                                                core::describe_value(*url)));
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
        if (!lowered.insert(ascii_lower(name)).second) {
          return problem(where.key("entry"), "duplicate header name (names ignore case)");
        }
        core::Result<std::string_view> value =
            read_text(kv.value(), where.key("entry"), kHeaderText, false);
        if (!value) return value.error();
        out.headers.emplace_back(std::string(name), expander.expand(*value, rejects_in_header));
      }
    }
    return out;
  }

  // A relative command containing '/' is relative to the config file's folder; a bare name
  // is looked up in PATH at spawn time.
  std::string resolve_command(std::string command) const {
    if (command.find('/') == std::string::npos) return command;
    return resolve(std::move(command));
  }

  // Absolute paths are kept as written; relative ones are joined to the file's folder and
  // normalised lexically, without a trailing separator.
  std::string resolve(std::string path) const {
    if (path.empty() || fs::path(path).is_absolute()) return path;
    fs::path out = (dir_ / path).lexically_normal();
    if (!out.has_filename() && out.has_relative_path()) out = out.parent_path();
    return out.string();
  }

  fs::path file_;
  fs::path dir_;
  std::string display_file_;
  Origin origin_;
  const EnvLookup& lookup_;
};

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// Owns one file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

core::Result<std::string> read_whole_file(const fs::path& file, std::size_t max_bytes) {
  // O_NONBLOCK: a FIFO or device named as a config file must not block the open.
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0)
    return core::make_error(fmt::format("cannot be opened ({})", errno_text(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return core::make_error(fmt::format("cannot be read ({})", errno_text(errno)));
  }
  if (!S_ISREG(st.st_mode)) return core::make_error("not a regular file");
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::make_error(fmt::format("cannot be read ({})", errno_text(errno)));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      return core::make_error(fmt::format("larger than {} bytes", max_bytes));
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  // In place: core::Error is constructible from a std::string too.
  return core::Result<std::string>(boost::system::in_place_value, std::move(text));
}

}  // namespace

bool is_valid_server_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxServerNameLength) return false;
  if (!is_ascii_alnum(name.front()) || name.back() == '_') return false;
  if (name.find("__") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

core::Result<ConfigFile> parse_text(std::string_view text, const fs::path& file, Origin origin,
                                    const EnvLookup& lookup) {
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  auto doc = core::json::parse_strict(text, core::json::ParseLimits{});
  if (!doc) return core::make_error(doc.error().message);
  const bj::value& root = *doc;
  return FileParser(file, origin, lookup).parse(root);
}

core::Result<ConfigFile> parse_file(const fs::path& file, Origin origin, const EnvLookup& lookup,
                                    std::size_t max_bytes) {
  core::Result<std::string> text = read_whole_file(file, max_bytes);
  if (!text) return text.error();
  return parse_text(*text, file, origin, lookup);
}

}  // namespace sluice::config
