#include "config/env_hygiene.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace sluice::config {
namespace {

// One refused name, or a family of names by prefix, and why (a clause after "it").
struct RefusedName {
  std::string_view name;
  bool prefix;
  std::string_view reason;
};

constexpr std::string_view kLoader = "changes which libraries the dynamic loader loads, and how";
constexpr std::string_view kShellStartup = "makes a shell run a file or a command when it starts";

// A data table (sorted by family, not by name; the lookup is linear over a few dozen short entries
// and runs once per variable of a server entry, never on a call).
constexpr std::array kRefused{
    // The dynamic loader, every LD_ variable: LD_PRELOAD and LD_AUDIT load code into the
    // program; LD_LIBRARY_PATH replaces the libraries it links (libc included); the rest
    // (LD_DEBUG_OUTPUT, LD_PROFILE, LD_BIND_NOW...) change how it loads, and none belongs in
    // a server's entry.
    RefusedName{"LD_", true, kLoader},
    // macOS's loader (DYLD_INSERT_LIBRARIES, DYLD_LIBRARY_PATH...): the same danger where a
    // shared config file is also read on a Mac.
    RefusedName{"DYLD_", true, kLoader},
    // glibc: iconv loads the gconv modules (shared objects) of this folder.
    RefusedName{"GCONV_PATH", false,
                "makes the C library load conversion modules (code) from a folder"},
    // glibc's tunables reach the loader itself (CVE-2023-4911) and the allocator.
    RefusedName{"GLIBC_TUNABLES", false, "changes how the C library and its loader behave"},
    // bash, sh and zsh startup: BASH_ENV is run by every non-interactive bash (a server
    // started through `bash -c` or a bash script); ENV by sh, dash and ksh; ZDOTDIR moves the
    // .zshenv every zsh runs; BASH_FUNC_* are exported functions that replace any command a
    // bash script calls; SHELLOPTS and BASHOPTS switch on options (xtrace, which with PS4
    // runs a command substitution for each line); PROMPT_COMMAND runs before each prompt;
    // IFS changes how every unquoted expansion splits, where a shell imports it.
    RefusedName{"BASH_ENV", false, kShellStartup},
    RefusedName{"ENV", false, kShellStartup},
    RefusedName{"ZDOTDIR", false, kShellStartup},
    RefusedName{"BASH_FUNC_", true, "replaces a command of every bash script with a function"},
    RefusedName{"SHELLOPTS", false, "switches options of every bash it starts"},
    RefusedName{"BASHOPTS", false, "switches options of every bash it starts"},
    RefusedName{"PS4", false, "runs a command for each line a tracing shell executes"},
    RefusedName{"PROMPT_COMMAND", false, kShellStartup},
    RefusedName{"IFS", false, "changes how a shell splits every unquoted expansion"},
    // Perl: PERL5OPT holds command-line switches (-M loads a module); PERL5LIB and PERLLIB
    // come before Perl's own library folders, so a strict.pm there runs in every script;
    // PERL5DB is code run under -d.
    RefusedName{"PERL5OPT", false, "makes Perl load a module before the program"},
    RefusedName{"PERL5LIB", false, "puts a folder before Perl's own modules"},
    RefusedName{"PERLLIB", false, "puts a folder before Perl's own modules"},
    RefusedName{"PERL5DB", false, "is code Perl runs under its debugger"},
    // Ruby: RUBYOPT takes -r (require a file first); RUBYLIB comes before Ruby's own library
    // (rubygems.rb, loaded at every start, can be replaced).
    RefusedName{"RUBYOPT", false, "makes Ruby load a file before the program"},
    RefusedName{"RUBYLIB", false, "puts a folder before Ruby's own library"},
    // Python: PYTHONPATH comes before the standard library, and a sitecustomize.py in it runs
    // at the start of every Python program; PYTHONHOME replaces the standard library;
    // PYTHONUSERBASE moves the user site folder, whose .pth files run their import lines;
    // PYTHONSTARTUP runs a file in interactive mode.
    RefusedName{"PYTHONPATH", false,
                "puts a folder before Python's own modules, where a "
                "sitecustomize.py runs at every start"},
    RefusedName{"PYTHONHOME", false, "replaces Python's standard library"},
    RefusedName{"PYTHONUSERBASE", false,
                "moves Python's user site folder, whose .pth files run "
                "code at every start"},
    RefusedName{"PYTHONSTARTUP", false, "makes Python run a file when it starts"},
    // Java: every JVM reads these options; -javaagent and -agentpath load code.
    RefusedName{"JAVA_TOOL_OPTIONS", false, "makes every JVM load an agent or other options"},
    RefusedName{"_JAVA_OPTIONS", false, "makes every JVM load an agent or other options"},
    RefusedName{"JDK_JAVA_OPTIONS", false,
                "makes the java launcher load an agent or other options"},
    // OpenSSL (node, Python, curl, git over https): its configuration file can load an
    // engine or a provider, a shared object.
    RefusedName{"OPENSSL_CONF", false,
                "makes OpenSSL load a configuration that can load "
                "engines or providers (code)"},
    RefusedName{"OPENSSL_ENGINES", false, "makes OpenSSL load engines (code) from a folder"},
    RefusedName{"OPENSSL_MODULES", false, "makes OpenSSL load providers (code) from a folder"},
    // TLS libraries (OpenSSL through Python and curl, NSS, Go's tools) write the session keys
    // of every connection here: whoever reads the file decrypts the server's traffic, its
    // tokens included.
    RefusedName{"SSLKEYLOGFILE", false,
                "makes TLS libraries write the keys of every "
                "connection to a file"},
};

// NODE_OPTIONS flags that run code other than the program's: preloads (--require, -r,
// --import), module loaders (--loader, --experimental-loader), an inspector port any local
// process can attach to and run code through (--inspect and kin), an OpenSSL configuration
// (engines), and a TLS key log. Other flags (--max-old-space-size, --enable-source-maps,
// --no-warnings...) are left alone.
constexpr std::array<std::string_view, 12> kNodePreloadFlags{"--require",
                                                             "-r",
                                                             "--import",
                                                             "--loader",
                                                             "--experimental-loader",
                                                             "--inspect",
                                                             "--inspect-brk",
                                                             "--inspect-port",
                                                             "--inspect-wait",
                                                             "--debug-port",
                                                             "--openssl-config",
                                                             "--tls-keylog"};

constexpr std::string_view kNodeReason =
    "asks node to preload code, attach an inspector or load an OpenSSL configuration "
    "(--require, --import, --loader, --inspect...)";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Whether NODE_OPTIONS text holds one of kNodePreloadFlags (alone, or with "=value"; "-r"
// also glued to its value). Quotes around a token are ignored.
bool node_options_preload(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    std::size_t end = i;
    while (end < text.size() && !is_space(text[end])) ++end;
    std::string_view token = text.substr(i, end - i);
    i = end;
    auto quote = [](char c) { return c == '"' || c == '\''; };
    while (!token.empty() && quote(token.front())) token.remove_prefix(1);
    while (!token.empty() && quote(token.back())) token.remove_suffix(1);
    if (token.starts_with("-r")) return true;
    std::string_view flag = token.substr(0, token.find('='));
    if (std::find(kNodePreloadFlags.begin(), kNodePreloadFlags.end(), flag) !=
        kNodePreloadFlags.end()) {
      return true;
    }
  }
  return false;
}

const RefusedName* refused_entry(std::string_view name) {
  for (const RefusedName& r : kRefused) {
    if (r.prefix ? name.starts_with(r.name) : name == r.name) return &r;
  }
  return nullptr;
}

bool is_plain_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  auto start = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  return start(name.front()) && std::all_of(name.begin(), name.end(), [&](char c) {
           return start(c) || (c >= '0' && c <= '9');
         });
}

}  // namespace

std::optional<std::string_view> refused_variable(std::string_view name, std::string_view value) {
  if (const RefusedName* r = refused_entry(name)) return r->reason;
  if (name == "NODE_OPTIONS" && node_options_preload(value)) return kNodeReason;
  return std::nullopt;
}

std::string refused_variable_label(std::string_view name) {
  if (is_plain_name(name)) return std::string(name);
  if (const RefusedName* r = refused_entry(name); r != nullptr && r->prefix) {
    return "a variable starting with " + std::string(r->name);
  }
  return "a variable";
}

std::string env_refusal(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::pair<std::string, std::string_view>> refused;  // label, reason
  for (const auto& [name, value] : env) {
    if (std::optional<std::string_view> reason = refused_variable(name, value)) {
      refused.emplace_back(refused_variable_label(name), *reason);
    }
  }
  if (refused.empty()) return {};
  if (refused.size() == 1) {
    return fmt::format(
        "its env sets {}, which sluice never passes to a server (it {}): remove it from the "
        "entry",
        refused.front().first, refused.front().second);
  }
  std::string list;
  for (const auto& [label, reason] : refused) {
    if (!list.empty()) list += ", ";
    list += fmt::format("{} (it {})", label, reason);
  }
  return fmt::format(
      "its env sets variables sluice never passes to a server: {}; remove them from the entry",
      list);
}

}  // namespace sluice::config
