#include "cli/gateway_registry.hpp"

#include "core/json.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>

namespace sluice::cli {
namespace bj = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxEntryBytes = 4096;

// The pid a file name `<pid>.json` or `<pid>.sock` gives, when it is one.
std::optional<pid_t> pid_of_name(const std::string& name, std::string_view suffix) {
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  std::string_view digits(name.data(), name.size() - suffix.size());
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return std::nullopt;
  return pid;
}

// The text of a regular file of this user's, at most kMaxEntryBytes, not through a link.
std::optional<std::string> read_small_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      static_cast<std::size_t>(st.st_size) <= kMaxEntryBytes) {
    text.resize(kMaxEntryBytes);
    ssize_t n = ::read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  if (text.empty()) return std::nullopt;
  return text;
}

// Whether the entry's process is the one that wrote it.
bool entry_is_live(const RegistryEntry& entry) {
  std::optional<std::uint64_t> ticks = process_start_ticks(entry.pid);
  return ticks && *ticks == entry.start_ticks;
}

}  // namespace

fs::path run_dir_of(const fs::path& state_dir) { return state_dir / "run"; }

fs::path entry_file(const fs::path& run_dir, pid_t pid) {
  return run_dir / (std::to_string(pid) + ".json");
}

fs::path socket_file(const fs::path& run_dir, pid_t pid) {
  return run_dir / (std::to_string(pid) + ".sock");
}

std::optional<std::uint64_t> process_start_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces: count after its end.
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  std::uint64_t ticks = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), ticks);
  if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return ticks;
}

core::Result<void> prepare_run_dir(const fs::path& run_dir) {
  // The state directory, when missing, is made 0700 as every command makes it; the folder
  // itself 0700 whatever the umask (which only takes bits away).
  std::error_code ec;
  if (fs::create_directories(run_dir.parent_path(), ec)) {
    ::chmod(run_dir.parent_path().c_str(), 0700);
  }
  ::mkdir(run_dir.c_str(), 0700);
  struct stat st {};
  if (::lstat(run_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return core::make_error("the run folder " + run_dir.string() + " is not a directory");
  }
  if (st.st_uid != ::geteuid()) {
    return core::make_error("the run folder " + run_dir.string() + " does not belong to you");
  }
  if ((st.st_mode & 077) != 0) {
    return core::make_error("the run folder " + run_dir.string() +
                            " is open to other users; run: chmod 700 " + run_dir.string());
  }
  return {};
}

std::string entry_json(const RegistryEntry& entry) {
  bj::object o;
  o["pid"] = entry.pid;
  o["kind"] = entry.kind;
  o["start_ticks"] = entry.start_ticks;
  o["started_unix_ms"] = entry.started_unix_ms;
  o["version"] = entry.version;
  if (entry.kind == "http") {
    o["host"] = entry.host;
    o["port"] = entry.port;
    o["token_required"] = entry.token_required;
  }
  return bj::serialize(o);
}

std::optional<RegistryEntry> parse_entry(std::string_view text) {
  auto parsed = core::json::parse_strict(text, {.max_depth = 4});
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const bj::object& o = parsed->get_object();
  const bj::value* pid = o.if_contains("pid");
  const bj::value* kind = o.if_contains("kind");
  const bj::value* ticks = o.if_contains("start_ticks");
  if (!pid || !pid->is_int64() || pid->get_int64() <= 0 || !kind || !kind->is_string() || !ticks ||
      !(ticks->is_uint64() || ticks->is_int64())) {
    return std::nullopt;
  }
  RegistryEntry e;
  e.pid = static_cast<pid_t>(pid->get_int64());
  e.kind = kind->get_string();
  if (e.kind != "stdio" && e.kind != "http") return std::nullopt;
  e.start_ticks =
      ticks->is_uint64() ? ticks->get_uint64() : static_cast<std::uint64_t>(ticks->get_int64());
  if (const bj::value* v = o.if_contains("started_unix_ms"); v && v->is_int64()) {
    e.started_unix_ms = v->get_int64();
  }
  if (const bj::value* v = o.if_contains("version"); v && v->is_string()) {
    e.version = v->get_string();
  }
  if (const bj::value* v = o.if_contains("host"); v && v->is_string()) e.host = v->get_string();
  if (const bj::value* v = o.if_contains("port");
      v && v->is_int64() && v->get_int64() > 0 && v->get_int64() <= 65535) {
    e.port = static_cast<std::uint16_t>(v->get_int64());
  }
  if (const bj::value* v = o.if_contains("token_required"); v && v->is_bool()) {
    e.token_required = v->get_bool();
  }
  return e;
}

core::Result<void> write_entry(const fs::path& run_dir, const RegistryEntry& entry) {
  const fs::path target = entry_file(run_dir, entry.pid);
  fs::path tmp = target;
  tmp += ".tmp";
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return core::make_error("cannot create " + tmp.string());
  const std::string text = entry_json(entry) + "\n";
  bool written = ::fchmod(fd, 0600) == 0 &&
                 ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), target.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return core::make_error("cannot write " + target.string());
  }
  return {};
}

void remove_entry(const fs::path& run_dir, pid_t pid) {
  ::unlink(entry_file(run_dir, pid).c_str());
  ::unlink(socket_file(run_dir, pid).c_str());
}

RegistryListing list_entries(const fs::path& run_dir) {
  RegistryListing listing;
  std::error_code ec;
  if (!fs::exists(run_dir, ec)) return listing;
  if (auto ready = prepare_run_dir(run_dir); !ready) {
    listing.problem = ready.error().message;
    return listing;
  }
  std::vector<pid_t> sockets;
  for (const fs::directory_entry& file : fs::directory_iterator(run_dir, ec)) {
    const std::string name = file.path().filename().string();
    if (std::optional<pid_t> pid = pid_of_name(name, ".sock")) {
      sockets.push_back(*pid);
      continue;
    }
    std::optional<pid_t> pid = pid_of_name(name, ".json");
    if (!pid) continue;
    std::optional<std::string> text = read_small_file(file.path());
    std::optional<RegistryEntry> entry = text ? parse_entry(*text) : std::nullopt;
    if (entry && entry->pid == *pid && entry_is_live(*entry)) {
      listing.live.push_back(std::move(*entry));
    } else if (!process_start_ticks(*pid) || entry) {
      // Its process is gone, or the pid now names another process: stale. (An entry that is
      // not the format, of a live process, is left to that process.)
      remove_entry(run_dir, *pid);
      ++listing.stale_removed;
    }
  }
  // A socket without an entry: a gateway between binding it and writing its entry, or one
  // that died there. Only the second is removed.
  for (pid_t pid : sockets) {
    if (!fs::exists(entry_file(run_dir, pid), ec) && !process_start_ticks(pid)) {
      ::unlink(socket_file(run_dir, pid).c_str());
    }
  }
  std::sort(listing.live.begin(), listing.live.end(),
            [](const RegistryEntry& a, const RegistryEntry& b) { return a.pid < b.pid; });
  return listing;
}

}  // namespace sluice::cli
