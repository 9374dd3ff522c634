#include "config/discovery.hpp"

#include "core/display.hpp"

#include <fmt/format.h>

#include <algorithm>
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

void merge(GatewayConfig& out, ConfigFile&& file) {
  for (ServerConfig& server : file.servers) {
    auto same = [&](const ServerConfig& s) { return s.name == server.name; };
    if (std::any_of(out.servers.begin(), out.servers.end(), same)) continue;
    out.warnings.insert(out.warnings.end(), server.warnings.begin(), server.warnings.end());
    out.servers.push_back(std::move(server));
  }
  for (const std::string& name : file.auto_start) add_unique(out.auto_start, name);
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
    merge(out, std::move(*file));
  }
  return out;
}

}  // namespace sluice::config
