#include "cli/doctor_checks.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <utility>

namespace sluice::cli::doctor {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kFilesSection = "Configuration files";
constexpr std::string_view kServersSection = "Servers";
constexpr std::string_view kPortSection = "HTTP port";
constexpr std::string_view kBinarySection = "The sluice binary";

// `text` as one word of a POSIX shell: as it is when it holds only [A-Za-z0-9_./+,:@%=-],
// else single-quoted.
std::string shell_word(std::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr("_./+,:@%=-", c) != nullptr;
  });
  if (plain) return std::string(text);
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string mode_text(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

Check make(std::string_view section, std::string_view id, std::string subject, Status status,
           std::string detail, std::string fix = {}) {
  return Check{std::string(section), std::string(id), std::move(subject), status,
               std::move(detail),    std::move(fix)};
}

// The Debian package that provides a command servers commonly run, if it is one of those.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kInstallCommands{{
    {"docker", "apt install docker.io"},
    {"git", "apt install git"},
    {"java", "apt install default-jre"},
    {"node", "apt install nodejs"},
    {"npm", "apt install npm"},
    {"npx", "apt install npm"},
    {"python3", "apt install python3"},
    {"uv", "apt install pipx && pipx install uv"},
    {"uvx", "apt install pipx && pipx install uv"},
}};

std::string install_fix(const std::string& command, const std::string& file) {
  if (command.find('/') == std::string::npos) {
    for (const auto& [name, fix] : kInstallCommands) {
      if (name == command) return std::string(fix);
    }
  }
  return fmt::format("install {}, or set its \"command\" in {} to the program's full path",
                     shell_word(command), file);
}

// ---- Configuration files ---------------------------------------------------------------

std::size_t servers_from(const config::GatewayConfig& config, const std::string& file) {
  return static_cast<std::size_t>(
      std::count_if(config.servers.begin(), config.servers.end(),
                    [&](const config::ServerConfig& s) { return s.source_file == file; }));
}

// Whether `path` is the project file discovery read (by real path).
bool is_project_file(const config::GatewayConfig& config, const fs::path& path) {
  return config.project_trust && config::real_path_of(path).string() == config.project_trust->path;
}

Check file_check(const ConfigFacts& facts, const fs::path& path) {
  const config::GatewayConfig& config = *facts.config;
  const std::string file = path.string();
  const bool mine = !facts.user_config.empty() && path == facts.user_config;
  for (const auto& rejected : config.files_rejected) {
    if (rejected.path != file) continue;
    return make(kFilesSection, "config.file", file, Status::fail,
                "left out (none of its servers is served): " + rejected.problem,
                "edit " + shell_word(file) + " and correct what the message names");
  }
  if (std::find(config.files_read.begin(), config.files_read.end(), file) ==
      config.files_read.end()) {
    return make(kFilesSection, "config.file", file, Status::ok,
                mine ? "not present (sluice's own file: `sluice init` or `sluice import` "
                       "writes it)"
                     : "not present");
  }
  const std::size_t n = servers_from(config, file);
  const std::string owner = is_project_file(config, path) ? "the project's file"
                            : mine                        ? "sluice's own file"
                                                          : "yours, trusted";
  return make(kFilesSection, "config.file", file, Status::ok,
              fmt::format("read: {} server{} ({})", n, n == 1 ? "" : "s", owner));
}

Check trust_check(const ConfigFacts& facts) {
  const auto& trust = *facts.config->project_trust;
  using State = config::GatewayConfig::ProjectTrust::State;
  const std::string approve = config::approve_command(trust.path);
  if (trust.state == State::approved) {
    return make(kFilesSection, "config.trust", trust.path, Status::ok,
                "approved as it is now: its servers may start");
  }
  if (trust.state == State::trusted_for_run) {
    return make(kFilesSection, "config.trust", trust.path, Status::warn,
                "trusted for this run only (--trust-project); no approval is recorded", approve);
  }
  if (!facts.approvals) {
    return make(
        kFilesSection, "config.trust", trust.path, Status::fail,
        "not approved, and the approvals cannot be read: " + facts.approvals.error().message,
        "chmod 600 " + shell_word(facts.trust_file.string()));
  }
  const bool changed = std::any_of(facts.approvals->begin(), facts.approvals->end(),
                                   [&](const auto& a) { return a.path == trust.path; });
  return make(kFilesSection, "config.trust", trust.path, Status::fail,
              changed ? "changed since it was approved: its servers do not start until the "
                        "new bytes are approved"
                      : "not approved: its servers do not start",
              approve);
}

// ---- Servers ---------------------------------------------------------------------------

void stdio_checks(const ServerFacts& facts, const config::StdioServer& stdio,
                  std::vector<Check>& out) {
  const config::ServerConfig& s = *facts.server;
  if (facts.program) {
    out.push_back(make(kServersSection, "server.command", s.name, Status::ok,
                       fmt::format("command {} is {}", stdio.command, *facts.program)));
  } else {
    out.push_back(make(kServersSection, "server.command", s.name, Status::fail,
                       fmt::format("command {} is {}", stdio.command,
                                   stdio.command.find('/') == std::string::npos
                                       ? "not found on PATH (as sluice starts it)"
                                       : "missing or not executable"),
                       install_fix(stdio.command, s.source_file)));
  }
  if (!stdio.cwd.empty()) {
    out.push_back(facts.cwd_exists ? make(kServersSection, "server.cwd", s.name, Status::ok,
                                          "working directory " + stdio.cwd + " exists")
                                   : make(kServersSection, "server.cwd", s.name, Status::fail,
                                          "working directory " + stdio.cwd + " does not exist",
                                          "mkdir -p " + shell_word(stdio.cwd)));
  }
  if (!s.env_refusal.empty()) {
    out.push_back(make(kServersSection, "server.env", s.name, Status::fail,
                       "never started: " + s.env_refusal,
                       "edit " + shell_word(s.source_file) + " and remove it from the \"env\""));
  }
}

void remote_checks(const ServerFacts& facts, const config::RemoteServer& remote,
                   std::vector<Check>& out) {
  const config::ServerConfig& s = *facts.server;
  if (facts.url_usable) {
    out.push_back(make(kServersSection, "server.url", s.name, Status::ok,
                       fmt::format("{} server, its url is usable", remote.type)));
  } else {
    out.push_back(make(kServersSection, "server.url", s.name, Status::fail,
                       "its url is not an http(s) URL sluice can connect to (a host, a valid "
                       "port, no user:password@)",
                       "edit the \"url\" of " + s.name + " in " + shell_word(s.source_file)));
  }
  if (facts.has_token) {
    out.push_back(*facts.has_token ? make(kServersSection, "server.oauth", s.name, Status::ok,
                                          "OAuth tokens are stored for it")
                                   : make(kServersSection, "server.oauth", s.name, Status::warn,
                                          "no OAuth tokens are stored for it yet",
                                          "sluice auth login " + shell_word(s.name)));
  }
}

void server_checks(const ServerFacts& facts, std::vector<Check>& out) {
  const config::ServerConfig& s = *facts.server;
  if (s.disabled) {
    out.push_back(make(kServersSection, "server.disabled", s.name, Status::ok,
                       "disabled in " + s.source_file + ": never started"));
    return;
  }
  if (const auto* stdio = std::get_if<config::StdioServer>(&s.transport)) {
    stdio_checks(facts, *stdio, out);
  } else {
    remote_checks(facts, std::get<config::RemoteServer>(s.transport), out);
  }
  for (const std::string& name : s.missing_variables) {
    out.push_back(
        make(kServersSection, "server.variable", s.name, Status::fail,
             "variable " + name + " is set neither in the environment nor in the secrets store",
             "sluice secrets set " + name));
  }
}

// ---- Private directories ---------------------------------------------------------------

Check directory_check(const DirectoryFacts& f) {
  const std::string dir = f.dir.path.string();
  const std::string id = f.id + ".dir";
  if (!f.dir.exists) {
    if (f.creatable) {
      return make(f.section, id, dir, Status::ok,
                  "not created yet; sluice creates it (0700) at first use");
    }
    return make(f.section, id, dir, Status::fail, "missing, and its parent is not writable",
                "mkdir -p -m 700 " + shell_word(dir));
  }
  if (f.dir.is_symlink || !f.dir.is_dir) {
    return make(f.section, id, dir, Status::fail,
                "not a directory (a symbolic link is not followed)",
                "mv " + shell_word(dir) + " " + shell_word(dir + ".old"));
  }
  if (f.dir.uid != f.me) {
    return make(f.section, id, dir, Status::fail, "belongs to another user",
                "mv " + shell_word(dir) + " " + shell_word(dir + ".old"));
  }
  if ((f.dir.mode & 077) != 0) {
    return make(
        f.section, id, dir, Status::fail,
        fmt::format("open to other users (mode {}); it must be 0700", mode_text(f.dir.mode)),
        "chmod 700 " + shell_word(dir));
  }
  return make(f.section, id, dir, Status::ok, "yours, mode 0700");
}

Check private_file_check(const DirectoryFacts& f, const PathFacts& file) {
  const std::string path = file.path.string();
  const std::string id = f.id + ".file";
  if (file.is_symlink || !file.is_regular) {
    return make(f.section, id, path, Status::fail,
                "not a regular file (a symbolic link is not followed)",
                "mv " + shell_word(path) + " " + shell_word(path + ".old"));
  }
  if (file.uid != f.me) {
    return make(f.section, id, path, Status::fail, "belongs to another user",
                "mv " + shell_word(path) + " " + shell_word(path + ".old"));
  }
  if ((file.mode & 077) != 0) {
    return make(f.section, id, path, Status::fail,
                fmt::format("open to other users (mode {}); it must be 0600", mode_text(file.mode)),
                "chmod 600 " + shell_word(path));
  }
  return make(f.section, id, path, Status::ok, "yours, mode 0600");
}

// ---- HTTP port -------------------------------------------------------------------------

std::string listen_address_of(const PortFacts& f) {
  return f.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", f.host, f.port)
                                               : fmt::format("{}:{}", f.host, f.port);
}

std::string other_port_fix(const PortFacts& f) {
  return fmt::format("sluice serve --transport http --port {}",
                     f.port == 65535 ? 3345 : f.port + 1);
}

}  // namespace

std::string_view status_name(Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::warn:
      return "warn";
    case Status::fail:
      return "fail";
  }
  return "fail";
}

std::vector<Check> check_config_files(const ConfigFacts& facts) {
  const config::GatewayConfig& config = *facts.config;
  std::vector<Check> out;
  std::vector<fs::path> files = config.files_looked_for;
  // With no project, discovery also watches <cwd>/.mcp.json (last), which would make one.
  if (!config.project_dir && !files.empty() && files.back() == facts.cwd / ".mcp.json") {
    files.pop_back();
  }
  std::vector<fs::path> shown;
  for (const fs::path& path : files) {
    if (path == facts.trust_file) continue;  // the trust check below covers it
    if (std::find(shown.begin(), shown.end(), path) != shown.end()) continue;
    shown.push_back(path);
    out.push_back(file_check(facts, path));
  }
  if (config.project_trust) out.push_back(trust_check(facts));
  if (config.servers.empty()) {
    out.push_back(make(kFilesSection, "config.servers", "", Status::warn,
                       "no server is configured: sluice would serve only its meta-tools",
                       "sluice import --from claude-code"));
  }
  return out;
}

std::vector<Check> check_servers(const std::vector<ServerFacts>& servers) {
  std::vector<Check> out;
  for (const ServerFacts& facts : servers) server_checks(facts, out);
  return out;
}

std::vector<Check> check_private_directory(const DirectoryFacts& facts) {
  std::vector<Check> out;
  if (facts.dir.path.empty()) {
    out.push_back(make(facts.section, facts.id + ".dir", "", Status::fail,
                       "there is none: neither HOME nor the XDG variable is set",
                       "export HOME=/home/$(id -un)"));
    return out;
  }
  out.push_back(directory_check(facts));
  for (const PathFacts& file : facts.files) {
    if (file.exists) out.push_back(private_file_check(facts, file));
  }
  return out;
}

std::vector<Check> check_http_port(const PortFacts& f) {
  const std::string where = listen_address_of(f);
  std::vector<Check> out;
  if (f.free) {
    std::string detail = "free";
    if (f.lock_holder > 0) {
      detail = fmt::format(
          "free; a sluice HTTP service (pid {}) holds the state directory's lock on another "
          "port",
          f.lock_holder);
    }
    out.push_back(make(kPortSection, "http.port", where, Status::ok, std::move(detail)));
    return out;
  }
  if (f.bind_error != 0 && f.bind_error != EADDRINUSE) {
    out.push_back(make(kPortSection, "http.port", where, Status::fail,
                       fmt::format("cannot be bound: {}", std::strerror(f.bind_error)),
                       other_port_fix(f)));
    return out;
  }
  const pid_t sluice = f.holder_is_sluice ? f.holder : f.lock_holder;
  if (f.holder_is_sluice || (f.holder < 0 && f.lock_holder > 0)) {
    out.push_back(make(kPortSection, "http.port", where, Status::ok,
                       fmt::format("held by the sluice HTTP service (pid {})", sluice)));
    return out;
  }
  if (f.holder > 0) {
    out.push_back(make(
        kPortSection, "http.port", where, Status::fail,
        fmt::format("held by another program: pid {} ({})", f.holder,
                    f.holder_exe.empty() ? "unknown" : f.holder_exe),
        fmt::format("stop pid {}, or serve on another port: {}", f.holder, other_port_fix(f))));
    return out;
  }
  out.push_back(make(kPortSection, "http.port", where, Status::fail,
                     "held by a program sluice cannot see (another user's)",
                     "serve on another port: " + other_port_fix(f)));
  return out;
}

std::vector<Check> check_binary(const BinaryFacts& f) {
  std::vector<Check> out;
  if (!f.on_path) {
    out.push_back(make(kBinarySection, "binary.path", f.self, Status::warn,
                       "no sluice on PATH: a client configured to run `sluice` cannot start it",
                       "sudo install -m 755 " + shell_word(f.self) + " /usr/local/bin/sluice"));
  } else if (!f.on_path_is_self) {
    out.push_back(make(kBinarySection, "binary.path", f.self, Status::warn,
                       "the sluice on PATH is another file: " + *f.on_path,
                       "run that one: " + shell_word(*f.on_path) + " doctor"));
  } else {
    out.push_back(make(kBinarySection, "binary.path", f.self, Status::ok,
                       "this binary is the sluice on PATH"));
  }
  std::size_t stale = 0;
  for (const RunningSluice& r : f.running) {
    if (!r.deleted && !r.replaced) continue;
    ++stale;
    const std::string parent = r.parent_name.empty()
                                   ? fmt::format("pid {}", r.parent)
                                   : fmt::format("{}, pid {}", r.parent_name, r.parent);
    out.push_back(
        make(kBinarySection, "binary.stale", fmt::format("pid {}", r.pid), Status::warn,
             fmt::format("runs {} {}; restart it to run the current one (started by "
                         "{})",
                         r.exe, r.deleted ? "(deleted since)" : "(replaced since)", parent),
             fmt::format("restart the client that started it, or: kill {}", r.pid)));
  }
  if (stale == 0) {
    out.push_back(make(kBinarySection, "binary.stale", "", Status::ok,
                       fmt::format("{} other sluice process{} running, none from a removed or "
                                   "replaced binary",
                                   f.running.size(), f.running.size() == 1 ? "" : "es")));
  }
  return out;
}

Tally tally(const std::vector<Check>& checks) {
  Tally t;
  for (const Check& c : checks) {
    (c.status == Status::ok ? t.ok : c.status == Status::warn ? t.warn : t.fail) += 1;
  }
  return t;
}

}  // namespace sluice::cli::doctor
