#include "config/discovery.hpp"

#include "config/secrets_store.hpp"
#include "config/trust_store.hpp"
#include "core/display.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace sluice::config {
namespace {
namespace fs = std::filesystem;

constexpr std::string_view kFileName = ".mcp.json";

// Absolute, lexically normal, without a trailing separator.
fs::path normalized_path(const fs::path& path, const fs::path& base) {
  fs::path out = (path.is_absolute() ? path : base / path).lexically_normal();
  if (!out.has_filename() && out.has_relative_path()) out = out.parent_path();
  return out;
}

// Symlinks resolved as far as the path exists; the normalised path when that fails.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(path, ec);
  if (ec) return path;
  if (!out.has_filename() && out.has_relative_path()) out = out.parent_path();
  return out;
}

// True when `ancestor` is `path` or one of its ancestors (both absolute and normalised).
bool is_same_or_ancestor(const fs::path& ancestor, const fs::path& path) {
  auto [a, p] = std::mismatch(ancestor.begin(), ancestor.end(), path.begin(), path.end());
  return a == ancestor.end();
}

bool has_entry(const fs::path& dir, std::string_view name) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(dir / name, ec));
}

struct Candidate {
  fs::path path;
  Origin origin;
};

fs::path base_dir(const DiscoveryOptions& options) {
  std::error_code ec;
  fs::path base = options.cwd.empty() ? fs::current_path(ec) : fs::absolute(options.cwd, ec);
  if (ec) return fs::path("/");
  return base.lexically_normal();
}

std::optional<fs::path> home_dir(const DiscoveryOptions& options, const fs::path& base) {
  if (!options.home || options.home->empty()) return std::nullopt;
  return normalized_path(*options.home, base);
}

template <typename T>
void first_wins(std::optional<T>& merged, const std::optional<T>& later) {
  if (!merged) merged = later;
}

// Fills each key `merged` does not set yet from `later` (a file later in discovery order).
void merge_policy(FilePolicy& merged, const FilePolicy& later) {
  first_wins(merged.read_budget, later.read_budget);
  first_wins(merged.mutating_budget, later.mutating_budget);
  first_wins(merged.client_cap, later.client_cap);
  first_wins(merged.queue_size, later.queue_size);
  first_wins(merged.queue_timeout, later.queue_timeout);
  first_wins(merged.abandon_bound, later.abandon_bound);
  first_wins(merged.drain_bound, later.drain_bound);
  first_wins(merged.forbid_force, later.forbid_force);
  first_wins(merged.fail_closed_when_stale, later.fail_closed_when_stale);
  first_wins(merged.writes_per_server, later.writes_per_server);
  first_wins(merged.start_concurrency, later.start_concurrency);
  first_wins(merged.call_timeout, later.call_timeout);
  first_wins(merged.max_call, later.max_call);
  first_wins(merged.allow_unvalidated_tools, later.allow_unvalidated_tools);
  first_wins(merged.idle_timeout, later.idle_timeout);
  first_wins(merged.index_concurrency, later.index_concurrency);
  first_wins(merged.index_wait, later.index_wait);
  first_wins(merged.index_idle, later.index_idle);
  first_wins(merged.access, later.access);
  first_wins(merged.max_output_bytes, later.max_output_bytes);
  first_wins(merged.redact, later.redact);
  first_wins(merged.audit, later.audit);
}

// The merged settings, with GatewayPolicy's defaults for the keys no file set.
GatewayPolicy resolve_policy(const FilePolicy& merged) {
  GatewayPolicy out;
  out.read_budget = merged.read_budget.value_or(out.read_budget);
  out.mutating_budget = merged.mutating_budget.value_or(out.mutating_budget);
  out.client_cap = merged.client_cap.value_or(out.client_cap);
  out.queue_size = merged.queue_size.value_or(out.queue_size);
  out.queue_timeout = merged.queue_timeout.value_or(out.queue_timeout);
  out.abandon_bound = merged.abandon_bound.value_or(out.abandon_bound);
  out.drain_bound = merged.drain_bound.value_or(out.drain_bound);
  out.forbid_force = merged.forbid_force.value_or(out.forbid_force);
  out.fail_closed_when_stale = merged.fail_closed_when_stale.value_or(out.fail_closed_when_stale);
  out.writes_per_server = merged.writes_per_server.value_or(out.writes_per_server);
  out.start_concurrency = merged.start_concurrency.value_or(out.start_concurrency);
  out.call_timeout = merged.call_timeout.value_or(out.call_timeout);
  out.max_call = merged.max_call.value_or(out.max_call);
  out.allow_unvalidated_tools =
      merged.allow_unvalidated_tools.value_or(out.allow_unvalidated_tools);
  out.idle_timeout = merged.idle_timeout.value_or(out.idle_timeout);
  out.index_concurrency = merged.index_concurrency.value_or(out.index_concurrency);
  out.index_wait = merged.index_wait.value_or(out.index_wait);
  out.index_idle = merged.index_idle.value_or(out.index_idle);
  out.access = merged.access.value_or(out.access);
  out.max_output_bytes = merged.max_output_bytes;
  out.redact = merged.redact.value_or(out.redact);
  out.audit = merged.audit.value_or(out.audit);
  return out;
}

// The program a stdio entry runs, found as Child::spawn finds it: a command with a '/' as
// it is (the parser made it absolute), a bare name in the entry's own PATH when it sets one,
// else in sluice's. nullopt when no executable is found.
std::optional<fs::path> find_program(const StdioServer& stdio, const EnvLookup& getenv) {
  if (stdio.command.find('/') != std::string::npos) return fs::path(stdio.command);
  std::string path;
  for (const auto& [name, value] : stdio.env) {
    if (name == "PATH") path = value;
  }
  if (path.empty() && getenv) path = getenv("PATH").value_or("");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  std::string_view dirs(path);
  while (!dirs.empty()) {
    std::size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / stdio.command;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// Merges accepted files into one GatewayConfig in discovery order, in time linear in what
// they hold (names are deduplicated through hash sets).
class Merger {
 public:
  Merger(GatewayConfig& out, const DiscoveryOptions& options) : out_(out), options_(options) {}

  // `untrusted`: a project file the operator has not approved (its servers never start).
  void add(const Candidate& candidate, ConfigFile&& file, bool untrusted) {
    out_.warnings.insert(out_.warnings.end(), file.warnings.begin(), file.warnings.end());
    if (untrusted && !file.servers.empty()) {
      const std::string path = core::display_safe(candidate.path.string());
      out_.warnings.push_back(fmt::format(
          "config file {} is a project file whose exact content you have not approved: its {} "
          "server(s) are listed as untrusted and never started; review it, then run: {}",
          path, file.servers.size(), core::display_safe(approve_command(candidate.path.string()))));
    }
    // The operator's settings come only from user-level files and flags: a project file can
    // add servers, never loosen a setting.
    const bool operator_file = candidate.origin != Origin::project;
    if (!operator_file && file.has_operator_settings) {
      out_.warnings.push_back(fmt::format(
          "config file {}: its \"sluice\" settings are ignored (operator settings come only "
          "from sluice's user file, ~/.mcp.json, ~/.claude/.mcp.json, --config files and flags)",
          core::display_safe(candidate.path.string())));
    }
    for (ServerConfig& server : file.servers) {
      if (servers_.contains(server.name)) continue;
      if (starts_self(server)) {
        out_.warnings.push_back(fmt::format(
            "server {} ({}) is skipped: its command starts sluice itself, which would serve "
            "behind itself and start itself again; remove that entry",
            server.name, core::display_safe(server.source_file)));
        continue;
      }
      if (!operator_file) server.policy = ServerPolicy{};
      server.untrusted = untrusted;
      servers_.insert(server.name);
      out_.warnings.insert(out_.warnings.end(), server.warnings.begin(), server.warnings.end());
      out_.servers.push_back(std::move(server));
    }
    for (std::string& name : file.auto_start) {
      if (auto_start_.insert(name).second) out_.auto_start.push_back(std::move(name));
    }
    if (operator_file) merge_policy(policy_, file.policy);
  }

  GatewayPolicy policy() const { return resolve_policy(policy_); }

 private:
  // Whether the entry runs sluice's own executable (options.self) as anything but the
  // built-in demo downstream (`sluice demo-server`, which `sluice demo` configures).
  bool starts_self(const ServerConfig& server) {
    const auto* stdio = std::get_if<StdioServer>(&server.transport);
    if (!options_.self || stdio == nullptr) return false;
    if (!stdio->args.empty() && stdio->args.front() == "demo-server") return false;
    std::string key = stdio->command;
    for (const auto& [name, value] : stdio->env) {
      if (name == "PATH") key += '\0' + value;
    }
    auto [it, fresh] = identities_.try_emplace(std::move(key));
    if (fresh) {
      std::optional<fs::path> program = find_program(*stdio, options_.getenv);
      if (program) it->second = core::identity_of(program->string());
    }
    return it->second && it->second->same_file(*options_.self);
  }

  GatewayConfig& out_;
  const DiscoveryOptions& options_;
  FilePolicy policy_;
  std::unordered_set<std::string> servers_;     // the names in out_.servers
  std::unordered_set<std::string> auto_start_;  // the names in out_.auto_start
  // The identity each command resolved to, by command and the entry's PATH.
  std::unordered_map<std::string, std::optional<core::FileIdentity>> identities_;
};

// Whether the project file (its real path, the bytes read) may run: --trust-project's bytes
// for this run, else an approval in the trust store. A trust file that cannot be used is one
// warning (it says how to fix it), and approves nothing.
GatewayConfig::ProjectTrust trust_of(const fs::path& real, std::string_view bytes,
                                     const DiscoveryOptions& options,
                                     std::vector<std::string>& warnings) {
  using State = GatewayConfig::ProjectTrust::State;
  GatewayConfig::ProjectTrust trust{real.string(), content_digest(bytes), State::untrusted};
  const auto& pinned = options.pinned_project;
  if (options.trust_project &&
      (!pinned || (pinned->path == trust.path && pinned->sha256 == trust.sha256))) {
    trust.state = State::trusted_for_run;
    return trust;
  }
  core::Result<bool> approved = TrustStore(options.state_dir).approves(trust.path, trust.sha256);
  if (!approved) {
    warnings.push_back(core::display_safe(approved.error().message));
  } else if (*approved) {
    trust.state = State::approved;
  }
  return trust;
}

// The servers the operator's policy withholds (policy.deny.servers, policy.allow.servers)
// leave the configuration here, so that no path can start them: one warning each names the
// rule, and their names leave the autoStart list.
void withhold_denied_servers(GatewayConfig& out) {
  const AccessPolicy& access = out.policy.access;
  if (access.deny.servers.empty() && access.allow.servers.empty()) return;
  std::erase_if(out.servers, [&](const ServerConfig& server) {
    std::string why = access.denial(Subject::servers, {}, server.name);
    if (why.empty()) return false;
    out.warnings.push_back(fmt::format("server {} ({}) is withheld: {}; sluice never starts it",
                                       server.name, core::display_safe(server.source_file),
                                       core::display_safe(why)));
    return true;
  });
  std::erase_if(out.auto_start, [&](const std::string& name) {
    return !access.allows(Subject::servers, {}, name);
  });
}

// The files to read, in discovery order.
std::vector<Candidate> candidates_of(const DiscoveryOptions& options, const fs::path& base,
                                     const std::optional<fs::path>& home,
                                     const std::optional<fs::path>& project_dir) {
  std::vector<Candidate> candidates;
  if (project_dir && options.search) {
    candidates.push_back({*project_dir / kFileName, Origin::project});
  }
  if (!options.user_config.empty() && options.search) {
    candidates.push_back({normalized_path(options.user_config, base), Origin::user});
  }
  if (home && options.search) {
    candidates.push_back({*home / kFileName, Origin::user});
    candidates.push_back({*home / ".claude" / kFileName, Origin::user});
  }
  for (const fs::path& file : options.explicit_configs) {
    candidates.push_back({normalized_path(file, base), Origin::explicit_file});
  }
  // A project file that is also a user-level file (--project ~) is the user's own.
  if (!candidates.empty() && candidates.front().origin == Origin::project) {
    const fs::path project_file = resolved(candidates.front().path);
    for (const Candidate& c : candidates) {
      if (c.origin == Origin::user && resolved(c.path) == project_file) {
        candidates.front().origin = Origin::user;
      }
    }
  }
  return candidates;
}

}  // namespace

fs::path user_config_file_of(const EnvLookup& getenv) {
  const fs::path dir = secrets_dir_of(getenv);
  return dir.empty() ? fs::path() : dir / "mcp.json";
}

std::optional<fs::path> find_project_dir(const fs::path& cwd, const std::optional<fs::path>& home) {
  std::error_code ec;
  fs::path start = fs::absolute(cwd, ec);
  if (ec) return std::nullopt;
  fs::path dir = resolved(normalized_path(start, "/"));
  std::optional<fs::path> stop;
  if (home && !home->empty()) stop = resolved(normalized_path(*home, dir));
  for (;;) {
    if (stop && is_same_or_ancestor(dir, *stop)) return std::nullopt;
    if (has_entry(dir, kFileName) || has_entry(dir, ".git")) return dir;
    fs::path parent = dir.parent_path();
    if (parent == dir || parent.empty()) return std::nullopt;
    dir = std::move(parent);
  }
}

GatewayConfig discover(const DiscoveryOptions& options) {
  GatewayConfig out;
  const fs::path base = base_dir(options);
  const std::optional<fs::path> home = home_dir(options, base);

  if (options.project_dir) {
    fs::path dir = normalized_path(*options.project_dir, base);
    std::error_code ec;
    if (fs::is_directory(dir, ec)) {
      out.project_dir = std::move(dir);
    } else {
      out.warnings.push_back(
          fmt::format("--project folder {} is not a directory", core::display_safe(dir.string())));
    }
  } else {
    out.project_dir = find_project_dir(base, home);
  }

  const std::vector<Candidate> candidates = candidates_of(options, base, home, out.project_dir);
  for (const Candidate& candidate : candidates) out.files_looked_for.push_back(candidate.path);
  // An approval recorded while sluice runs applies at the reread it causes.
  if (out.project_dir && options.search && !options.state_dir.empty()) {
    out.files_looked_for.push_back(options.state_dir / kTrustFileName);
  }
  // No project yet: a `.mcp.json` created in the cwd would make it one.
  if (!out.project_dir && options.search) out.files_looked_for.push_back(base / kFileName);

  std::vector<fs::path> seen;
  Merger merger(out, options);
  for (const Candidate& candidate : candidates) {
    std::error_code ec;
    fs::file_status status = fs::status(candidate.path, ec);
    if (status.type() == fs::file_type::not_found) {
      if (candidate.origin == Origin::explicit_file) {
        out.warnings.push_back(fmt::format("config file {} (--config) does not exist",
                                           core::display_safe(candidate.path.string())));
      }
      continue;
    }
    fs::path identity = resolved(candidate.path);
    if (std::find(seen.begin(), seen.end(), identity) != seen.end()) continue;
    seen.push_back(identity);

    out.files_read.push_back(candidate.path.string());
    core::Result<std::string> text = read_config_text(candidate.path, options.max_file_bytes);
    core::Result<ConfigFile> file =
        text ? parse_text(*text, candidate.path, candidate.origin, options.getenv)
             : core::Result<ConfigFile>(text.error());
    if (!file) {
      out.files_rejected.push_back({candidate.path.string(), file.error().message});
      out.warnings.push_back(fmt::format("config file {} is left out: {}",
                                         core::display_safe(candidate.path.string()),
                                         file.error().message));
      continue;
    }
    bool untrusted = false;
    if (candidate.origin == Origin::project) {
      out.project_trust = trust_of(identity, *text, options, out.warnings);
      untrusted = out.project_trust->state == GatewayConfig::ProjectTrust::State::untrusted;
    }
    merger.add(candidate, std::move(*file), untrusted);
  }
  out.policy = merger.policy();
  withhold_denied_servers(out);
  // The default idle timeout skips autoStart servers: each knows whether it is one.
  const std::unordered_set<std::string_view> auto_start(out.auto_start.begin(),
                                                        out.auto_start.end());
  for (ServerConfig& server : out.servers) server.auto_start = auto_start.contains(server.name);
  return out;
}

}  // namespace sluice::config
