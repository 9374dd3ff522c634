#include "cli/client_files.hpp"

#include "cli/secrets.hpp"
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"
#include "core/display.hpp"
#include "core/private_file.hpp"
#include "core/wall_clock.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice::cli {
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr std::uintmax_t kMaxClientFileBytes = 64u << 20;
constexpr std::string_view kBackupInfix = ".sluice-backup-";
constexpr std::size_t kWidth = 80;

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

std::optional<std::string> read_whole(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// `path` with the symlinks of it and its folders resolved as far as they exist.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path) : real;
}

// Writes `bytes` to a new file beside `target` with `mode`, fsynced; its path, or nullopt.
std::optional<fs::path> write_beside(const fs::path& target, std::string_view bytes, mode_t mode,
                                     std::string_view infix, std::string& error) {
  fs::path temp = target;
  temp += fmt::format("{}{}", infix, ::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = fmt::format("cannot create {}: {}", core::display_path(temp), errno_text(errno));
    return std::nullopt;
  }
  bool ok = ::fchmod(fd, mode & 07777) == 0 && core::write_all(fd, bytes) && ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(temp.c_str());
    error = fmt::format("cannot write {}: {}", core::display_path(temp), errno_text(err));
    return std::nullopt;
  }
  return temp;
}

void sync_folder(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::size_t take = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(0, take));
    text.remove_prefix(take);
  }
  return lines;
}

struct Op {
  char kind;  // ' ', '-', '+'
  std::string_view line;
};

// The edit script of two line lists: common ends, then a longest common subsequence of the
// middle (all removed, then all added, when the middle is too large to compare).
std::vector<Op> edit_script(const std::vector<std::string_view>& a,
                            const std::vector<std::string_view>& b) {
  std::size_t p = 0;
  while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
  std::size_t s = 0;
  while (s < a.size() - p && s < b.size() - p && a[a.size() - 1 - s] == b[b.size() - 1 - s]) ++s;
  std::vector<Op> ops;
  for (std::size_t i = 0; i < p; ++i) ops.push_back({' ', a[i]});
  const std::size_t n = a.size() - p - s, m = b.size() - p - s;
  if (n * m <= 4'000'000) {
    std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;) {
      for (std::size_t j = m; j-- > 0;) {
        at(i, j) =
            a[p + i] == b[p + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[p + i] == b[p + j]) {
        ops.push_back({' ', a[p + i++]});
        ++j;
      } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
        ops.push_back({'+', b[p + j++]});
      } else {
        ops.push_back({'-', a[p + i++]});
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) ops.push_back({'-', a[p + i]});
    for (std::size_t j = 0; j < m; ++j) ops.push_back({'+', b[p + j]});
  }
  for (std::size_t i = a.size() - s; i < a.size(); ++i) ops.push_back({' ', a[i]});
  return ops;
}

std::string kind_of(const config::ClientServer& server) {
  const bj::value* type = server.entry.if_contains("type");
  return type != nullptr && type->is_string() ? std::string(type->get_string()) : "stdio";
}

std::string masked_toml(std::string_view text) {
  std::string out;
  for (std::string_view line : lines_of(text)) {
    std::size_t start = line.find_first_not_of(" \t");
    std::size_t eq = line.find('=');
    std::string_view key =
        eq == std::string_view::npos || start == std::string_view::npos || start > eq
            ? std::string_view()
            : line.substr(start, line.find_last_not_of(" \t", eq - 1) + 1 - start);
    if ((start != std::string_view::npos && line[start] == '[') || key == "command" ||
        key == "args" || key == "type") {
      out.append(line);
      continue;
    }
    std::size_t i = eq == std::string_view::npos ? 0 : eq;
    out.append(line.substr(0, i));
    while (i < line.size()) {
      char q = line[i];
      if (q != '"' && q != '\'') {
        out += line[i++];
        continue;
      }
      std::size_t j = i + 1;
      while (j < line.size() && line[j] != q) j += (q == '"' && line[j] == '\\') ? 2 : 1;
      out.append(std::string(1, q) + "\u2026" + std::string(1, q));
      i = std::min(j + 1, line.size());
    }
  }
  return out;
}

}  // namespace

std::optional<ClientFile> read_client_file(const fs::path& path, std::string& error) {
  ClientFile file;
  file.path = path;
  file.real = resolved(path);
  struct stat st {};
  if (::stat(file.real.c_str(), &st) != 0) {
    if (errno == ENOENT) return file;
    error = fmt::format("cannot read {}: {}", core::display_path(path), errno_text(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = fmt::format("{} is not a regular file", core::display_path(path));
    return std::nullopt;
  }
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxClientFileBytes) {
    error = fmt::format("{} is larger than {} MiB", core::display_path(path),
                        kMaxClientFileBytes >> 20);
    return std::nullopt;
  }
  std::optional<std::string> text = read_whole(file.real);
  if (!text) {
    error = fmt::format("cannot read {}", core::display_path(path));
    return std::nullopt;
  }
  file.exists = true;
  file.text = std::move(*text);
  file.mode = st.st_mode & 07777;
  return file;
}

std::optional<std::string> replace_file(const ClientFile& file, std::string_view text,
                                        mode_t new_mode) {
  std::string error;
  const fs::path dir = file.real.parent_path();
  if (!file.exists && !fs::exists(dir) && !core::make_private_directories(dir)) {
    return fmt::format("cannot create the folder {}", core::display_path(dir));
  }
  std::optional<fs::path> temp =
      write_beside(file.real, text, file.exists ? file.mode : new_mode, ".sluice-new-", error);
  if (!temp) return error;
  std::string now_error;
  std::optional<ClientFile> now = read_client_file(file.real, now_error);
  if (!now || now->exists != file.exists || now->text != file.text) {
    ::unlink(temp->c_str());
    return fmt::format(
        "{} changed while sluice was editing it; nothing was written: run the "
        "command again",
        core::display_path(file.path));
  }
  if (::rename(temp->c_str(), file.real.c_str()) != 0) {
    int err = errno;
    ::unlink(temp->c_str());
    return fmt::format("cannot replace {}: {}", core::display_path(file.path), errno_text(err));
  }
  sync_folder(dir);
  return std::nullopt;
}

std::optional<fs::path> write_backup(const ClientFile& file, std::string& error) {
  std::string stamp = core::utc_text(std::chrono::system_clock::now());
  std::erase(stamp, '-');
  std::erase(stamp, ':');
  if (!fs::exists(file.real.parent_path()) &&
      !core::make_private_directories(file.real.parent_path())) {
    error = fmt::format("cannot create the folder {}", core::display_path(file.real.parent_path()));
    return std::nullopt;
  }
  fs::path base = file.real;
  base += std::string(kBackupInfix) + stamp;
  fs::path backup = base;
  for (int n = 2; fs::exists(backup) || fs::is_symlink(backup); ++n) {
    backup = base;
    backup += fmt::format("-{}", n);
  }
  std::optional<fs::path> temp =
      write_beside(backup, file.exists ? std::string_view(file.text) : std::string_view(),
                   file.exists ? file.mode : 0600, ".tmp-", error);
  if (!temp) return std::nullopt;
  if (::rename(temp->c_str(), backup.c_str()) != 0) {
    error = fmt::format("cannot write the backup {}: {}", core::display_path(backup),
                        errno_text(errno));
    ::unlink(temp->c_str());
    return std::nullopt;
  }
  return backup;
}

void stamp_backup(const fs::path& backup, const fs::path& written) {
  struct stat st {};
  if (::stat(written.c_str(), &st) != 0) return;
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ::utimensat(AT_FDCWD, backup.c_str(), times, 0);
}

bool unchanged_since_stamp(const fs::path& file, const fs::path& backup) {
  struct stat a {
  }, b{};
  if (::stat(backup.c_str(), &b) != 0) return false;
  if (::stat(file.c_str(), &a) != 0) return b.st_size == 0;  // setup created it; it is gone
  return a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

std::vector<fs::path> backups_of(const fs::path& real) {
  std::vector<std::pair<std::pair<std::string, int>, fs::path>> found;
  const std::string prefix = real.filename().string() + std::string(kBackupInfix);
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(real.parent_path(), ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !entry.is_regular_file(ec)) continue;
    std::string stamp = name.substr(prefix.size());
    if (stamp.find(".tmp-") != std::string::npos) continue;
    std::size_t dash = stamp.find('-');
    int n = dash == std::string::npos ? 1 : std::atoi(stamp.c_str() + dash + 1);
    found.push_back({{stamp.substr(0, dash), n}, entry.path()});
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::string unified_diff(std::string_view before, std::string_view after,
                         std::string_view from_label, std::string_view to_label) {
  if (before == after) return "";
  const std::vector<Op> ops = edit_script(lines_of(before), lines_of(after));
  const std::size_t n = ops.size();
  std::vector<std::size_t> old_at(n + 1, 0), new_at(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    old_at[i + 1] = old_at[i] + (ops[i].kind != '+');
    new_at[i + 1] = new_at[i] + (ops[i].kind != '-');
  }
  std::string out = fmt::format("--- {}\n+++ {}\n", from_label, to_label);
  std::size_t k = 0;
  while (k < n) {
    if (ops[k].kind == ' ') {
      ++k;
      continue;
    }
    const std::size_t start = k >= 3 ? k - 3 : 0;
    std::size_t last = k, j = k;
    while (j < n) {
      if (ops[j].kind != ' ') {
        last = j++;
        continue;
      }
      std::size_t run = j;
      while (run < n && ops[run].kind == ' ') ++run;
      if (run == n || run - j > 6) break;
      j = run;
    }
    const std::size_t end = std::min(n, last + 4);
    const std::size_t old_count = old_at[end] - old_at[start];
    const std::size_t new_count = new_at[end] - new_at[start];
    out += fmt::format("@@ -{},{} +{},{} @@\n", old_at[start] + (old_count > 0), old_count,
                       new_at[start] + (new_count > 0), new_count);
    for (std::size_t i = start; i < end; ++i) {
      out += ops[i].kind;
      out.append(ops[i].line);
      if (!ops[i].line.ends_with('\n')) out += "\n\\ No newline at end of file\n";
    }
    k = end;
  }
  return out;
}

std::string masked_for_display(config::Client client, std::string_view text) {
  if (client == config::Client::codex) return masked_toml(text);
  return config::masked_json(text, {"command", "args", "type"});
}

std::optional<std::string> plan_import(const config::ClientServers& found,
                                       const ImportChoice& choice, config::JsonText& user,
                                       const fs::path& user_path, ImportPlan& plan) {
  plan.skipped = found.skipped;
  const bj::value* existing =
      user.value().is_object() ? user.value().get_object().if_contains("mcpServers") : nullptr;
  std::vector<std::string> names;
  for (const config::ClientServer& server : found.servers) {
    auto skip = [&](std::string reason) {
      plan.skipped.push_back({server.name, server.scope, std::move(reason)});
    };
    if (server.scope != "user" && !choice.all_projects &&
        !(choice.project && server.scope == "local " + *choice.project)) {
      skip("local to one project: --project DIR or --all-projects takes it");
      continue;
    }
    if (std::find(names.begin(), names.end(), server.name) != names.end()) {
      skip("a server of that name is taken from another scope");
      continue;
    }
    const bool present = existing != nullptr && existing->is_object() &&
                         existing->get_object().contains(server.name);
    if (present && !choice.force) {
      skip("sluice's user config has a server of that name (--force replaces it)");
      continue;
    }
    if (!user.set({"mcpServers", server.name}, server.entry)) {
      return fmt::format("{}: its mcpServers is not an object", core::display_path(user_path));
    }
    existing = user.value().get_object().if_contains("mcpServers");
    if (present) plan.replaced.push_back(server.name);
    names.push_back(server.name);
    plan.taken.push_back(server);
  }
  if (user.edit_failed())
    return fmt::format("{} could not be edited", core::display_path(user_path));
  core::Result<config::ConfigFile> check = config::parse_text(
      user.text(), fs::absolute(user_path), config::Origin::user,
      [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
  if (!check) {
    return fmt::format("{} would not be a valid sluice config ({}); nothing was written",
                       core::display_path(user_path), check.error().message);
  }
  return std::nullopt;
}

fs::path user_config_path() { return config::user_config_file_of(process_environment()); }

fs::path default_client_path(config::Client client) {
  const char* codex_home = std::getenv("CODEX_HOME");
  if (client == config::Client::codex && codex_home != nullptr &&
      fs::path(codex_home).is_absolute()) {
    return fs::path(codex_home) / "config.toml";  // Codex's own override of ~/.codex
  }
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const fs::path xdg_dir =
      xdg != nullptr && fs::path(xdg).is_absolute() ? fs::path(xdg) : fs::path();
  return config::client_config_path(client, home != nullptr ? fs::path(home) : fs::path(), xdg_dir);
}

std::optional<UserConfig> open_user_config(std::string& error) {
  const fs::path path = user_config_path();
  if (path.empty()) {
    error = "neither HOME nor XDG_CONFIG_HOME is set: there is no user config to write";
    return std::nullopt;
  }
  std::optional<ClientFile> file = read_client_file(path, error);
  if (!file) return std::nullopt;
  config::JsonTextFailure failure;
  std::optional<config::JsonText> document = config::JsonText::parse(file->text, false, failure);
  if (!document) {
    error = fmt::format("{}:{}:{}: {}", core::display_path(path), failure.line, failure.column,
                        failure.problem);
    return std::nullopt;
  }
  return UserConfig{std::move(*file), std::move(*document)};
}

std::string wrapped(std::string_view text, std::size_t first_indent, std::size_t indent) {
  std::string out(first_indent, ' ');
  std::size_t column = first_indent;
  std::istringstream words{std::string(text)};
  std::string word;
  bool first = true;
  while (words >> word) {
    std::string safe = core::display_safe(word);
    if (!first && column + 1 + safe.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += safe;
    column += safe.size();
    first = false;
  }
  return out + "\n";
}

std::string describe_plan(const ImportPlan& plan) {
  std::string out;
  if (!plan.taken.empty()) {
    out += fmt::format("took {} server{}:\n", plan.taken.size(), plan.taken.size() == 1 ? "" : "s");
  }
  for (const config::ClientServer& server : plan.taken) {
    const bool replaced =
        std::find(plan.replaced.begin(), plan.replaced.end(), server.name) != plan.replaced.end();
    out += wrapped(fmt::format("{} ({}, {}){}", server.name, server.scope, kind_of(server),
                               replaced ? ", replacing sluice's own" : ""),
                   2, 6);
    for (const std::string& note : server.notes) out += wrapped("note: " + note, 4, 10);
  }
  if (!plan.skipped.empty()) {
    out += fmt::format("skipped {} server{}:\n", plan.skipped.size(),
                       plan.skipped.size() == 1 ? "" : "s");
  }
  for (const config::SkippedServer& server : plan.skipped) {
    out += wrapped(fmt::format("{} ({}): {}", server.name, server.scope, server.reason), 2, 6);
  }
  return out;
}

void plan_json(const ImportPlan& plan, bj::object& out) {
  bj::array taken, skipped;
  for (const config::ClientServer& server : plan.taken) {
    bj::array notes;
    for (const std::string& note : server.notes) notes.emplace_back(note);
    taken.emplace_back(bj::object{{"name", server.name},
                                  {"scope", server.scope},
                                  {"kind", kind_of(server)},
                                  {"disabled", server.disabled},
                                  {"notes", std::move(notes)}});
  }
  for (const config::SkippedServer& server : plan.skipped) {
    skipped.emplace_back(
        bj::object{{"name", server.name}, {"scope", server.scope}, {"reason", server.reason}});
  }
  out["taken"] = std::move(taken);
  out["skipped"] = std::move(skipped);
}

}  // namespace sluice::cli
