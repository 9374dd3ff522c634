#include "config/discovery.hpp"

#include "core/display.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace sluice::config {
namespace {
namespace fs = std::filesystem;

constexpr std::string_view kFileName = ".mcp.json";

// Absolute, lexically normal, without a trailing separator.
fs::path normalized(const fs::path& path, const fs::path& base) {
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
  return normalized(*options.home, base);
}

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
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
  return out;
}

void merge(GatewayConfig& out, FilePolicy& policy, ConfigFile&& file) {
  for (ServerConfig& server : file.servers) {
    auto same = [&](const ServerConfig& s) { return s.name == server.name; };
    if (std::any_of(out.servers.begin(), out.servers.end(), same)) continue;
    out.warnings.insert(out.warnings.end(), server.warnings.begin(), server.warnings.end());
    out.servers.push_back(std::move(server));
  }
  for (const std::string& name : file.auto_start) add_unique(out.auto_start, name);
  merge_policy(policy, file.policy);
}

}  // namespace

std::optional<fs::path> find_project_dir(const fs::path& cwd, const std::optional<fs::path>& home) {
  std::error_code ec;
  fs::path start = fs::absolute(cwd, ec);
  if (ec) return std::nullopt;
  fs::path dir = resolved(normalized(start, "/"));
  std::optional<fs::path> stop;
  if (home && !home->empty()) stop = resolved(normalized(*home, dir));
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
    fs::path dir = normalized(*options.project_dir, base);
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

  std::vector<Candidate> candidates;
  if (out.project_dir && options.search) {
    candidates.push_back({*out.project_dir / kFileName, Origin::project});
  }
  if (home && options.search) {
    candidates.push_back({*home / kFileName, Origin::user});
    candidates.push_back({*home / ".claude" / kFileName, Origin::user});
  }
  for (const fs::path& file : options.explicit_configs) {
    candidates.push_back({normalized(file, base), Origin::explicit_file});
  }

  std::vector<fs::path> seen;
  FilePolicy policy;
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
    seen.push_back(std::move(identity));

    out.files_read.push_back(candidate.path.string());
    core::Result<ConfigFile> file =
        parse_file(candidate.path, candidate.origin, options.getenv, options.max_file_bytes);
    if (!file) {
      out.warnings.push_back(fmt::format("config file {} is left out: {}",
                                         core::display_safe(candidate.path.string()),
                                         file.error().message));
      continue;
    }
    merge(out, policy, std::move(*file));
  }
  out.policy = resolve_policy(policy);
  return out;
}

}  // namespace sluice::config
