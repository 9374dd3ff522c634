#include "cli/doctor_probe.hpp"

#include "config/secrets_store.hpp"
#include "core/file_identity.hpp"
#include "store/fingerprint.hpp"
#include "store/token_store.hpp"
#include "transport/http_client.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace sluice::cli::doctor {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
constexpr std::string_view kDeleted = " (deleted)";

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The first executable `name` in the ':'-separated `path`.
std::optional<std::string> search_path(std::string_view name, std::string_view path) {
  while (!path.empty()) {
    const std::size_t colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    path = colon == std::string_view::npos ? std::string_view() : path.substr(colon + 1);
    if (dir.empty()) continue;
    std::string candidate = std::string(dir) + "/" + std::string(name);
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string read_link(const std::string& link) {
  char buf[4096];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::string first_line(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The numeric entries of /proc: every process this user may be able to look at.
std::vector<pid_t> all_pids() {
  std::vector<pid_t> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && pid > 0) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(dir);
  return out;
}

// The inodes of the listening TCP sockets on `port` (any address), from /proc/net/tcp{,6}.
std::vector<std::string> listening_inodes(std::uint16_t port) {
  std::vector<std::string> out;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const std::size_t colon = local.rfind(':');
      if (state != "0A" || colon == std::string::npos) continue;  // 0A: LISTEN
      if (std::strtoul(local.c_str() + colon + 1, nullptr, 16) == port) out.push_back(inode);
    }
  }
  return out;
}

// The process with an fd on one of `inodes` (sockets), when one of ours has.
pid_t socket_owner(const std::vector<std::string>& inodes) {
  for (pid_t pid : all_pids()) {
    const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* dir = ::opendir(fd_dir.c_str());
    if (dir == nullptr) continue;
    pid_t found = -1;
    while (const dirent* e = ::readdir(dir)) {
      const std::string link = read_link(fd_dir + "/" + e->d_name);
      for (const std::string& inode : inodes) {
        if (link == "socket:[" + inode + "]") found = pid;
      }
      if (found > 0) break;
    }
    ::closedir(dir);
    if (found > 0) return found;
  }
  return -1;
}

// The process holding an flock on `file`, from /proc/locks ("1: FLOCK ADVISORY WRITE <pid>
// <major>:<minor>:<inode> 0 EOF", major and minor in hex); -1 when none does.
pid_t flock_holder(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return -1;
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, kind, advisory, mode, pid, where;
    fields >> slot >> kind >> advisory >> mode >> pid >> where;
    if (kind != "FLOCK") continue;  // "->" marks a waiter, other kinds are not flock()
    unsigned major_n = 0, minor_n = 0;
    unsigned long inode = 0;
    if (std::sscanf(where.c_str(), "%x:%x:%lu", &major_n, &minor_n, &inode) != 3) continue;
    if (inode == st.st_ino && major_n == ::major(st.st_dev) && minor_n == ::minor(st.st_dev)) {
      return static_cast<pid_t>(std::atol(pid.c_str()));
    }
  }
  return -1;
}

// Whether a trial socket can bind host:port; the errno when not.
int try_bind(const std::string& host, std::uint16_t port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  const std::string name = host == "localhost" ? "127.0.0.1" : host;
  if (::inet_pton(AF_INET, name.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, name.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof *v6;
  } else {
    return EADDRNOTAVAIL;
  }
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int result = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 ? 0 : errno;
  ::close(fd);
  return result;
}

bool is_sluice_exe(const std::string& exe, const std::optional<core::FileIdentity>& self,
                   pid_t pid) {
  if (fs::path(exe).filename() == "sluice") return true;
  const std::optional<core::FileIdentity> running =
      core::identity_of("/proc/" + std::to_string(pid) + "/exe");
  return self && running && running->same_file(*self);
}

std::optional<RunningSluice> running_sluice(pid_t pid,
                                            const std::optional<core::FileIdentity>& self) {
  const std::string proc = "/proc/" + std::to_string(pid);
  struct stat owner {};
  if (::stat(proc.c_str(), &owner) != 0 || owner.st_uid != ::geteuid()) return std::nullopt;
  std::string exe = read_link(proc + "/exe");
  if (exe.empty()) return std::nullopt;  // a zombie, or gone
  RunningSluice r;
  r.pid = pid;
  const bool unlinked = exe.ends_with(kDeleted);
  if (unlinked) exe.resize(exe.size() - kDeleted.size());
  if (!is_sluice_exe(exe, self, pid)) return std::nullopt;
  r.exe = exe;
  if (unlinked) {
    // Its file was removed; a file at that path now is a replacement (an upgrade).
    r.replaced = core::identity_of(exe).has_value();
    r.deleted = !r.replaced;
  } else {
    const auto running = core::identity_of(proc + "/exe");
    const auto now = core::identity_of(exe);
    r.replaced = !running || !now || !now->same_file(*running);
  }
  // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
  const std::string stat_line = first_line(proc + "/stat");
  if (const std::size_t close = stat_line.rfind(')'); close != std::string::npos) {
    char state = 0;
    int ppid = -1;
    if (std::sscanf(stat_line.c_str() + close + 1, " %c %d", &state, &ppid) == 2) r.parent = ppid;
  }
  if (r.parent > 0) r.parent_name = first_line("/proc/" + std::to_string(r.parent) + "/comm");
  return r;
}

}  // namespace

std::optional<std::string> find_program(const config::StdioServer& stdio, std::string_view path) {
  if (stdio.command.find('/') != std::string::npos) {
    if (is_executable_file(stdio.command)) return stdio.command;
    return std::nullopt;
  }
  std::string_view search = path;
  for (const auto& [name, value] : stdio.env) {
    if (name == "PATH") search = value;
  }
  if (search.empty()) search = kDefaultPath;
  return search_path(stdio.command, search);
}

ServerFacts server_facts(const config::ServerConfig& server, std::string_view path,
                         const fs::path& state_dir) {
  ServerFacts facts;
  facts.server = &server;
  if (const auto* stdio = std::get_if<config::StdioServer>(&server.transport)) {
    facts.program = find_program(*stdio, path);
    std::error_code ec;
    facts.cwd_exists = stdio->cwd.empty() || fs::is_directory(stdio->cwd, ec);
    return facts;
  }
  const auto& remote = std::get<config::RemoteServer>(server.transport);
  facts.url_usable = transport::is_usable_http_url(remote.url);
  if (remote.oauth && !state_dir.empty()) {
    store::TokenStore tokens(state_dir);
    auto record = tokens.load(server.name, store::fingerprint(server));
    if (record) facts.has_token = *record && !(*record)->access_token.empty();
  }
  return facts;
}

PathFacts path_facts(const fs::path& path) {
  PathFacts f;
  f.path = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return f;
  f.exists = true;
  f.is_dir = S_ISDIR(st.st_mode);
  f.is_regular = S_ISREG(st.st_mode);
  f.is_symlink = S_ISLNK(st.st_mode);
  f.uid = st.st_uid;
  f.mode = st.st_mode & 07777;
  return f;
}

DirectoryFacts state_directory_facts(const fs::path& dir) {
  DirectoryFacts f{.section = "State directory", .id = "state", .purpose = "the state directory"};
  f.me = ::geteuid();
  if (dir.empty()) return f;
  f.dir = path_facts(dir);
  if (!f.dir.exists) {
    fs::path parent = dir.parent_path();
    while (!parent.empty() && !path_facts(parent).exists && parent != parent.parent_path()) {
      parent = parent.parent_path();
    }
    f.creatable = ::access(parent.c_str(), W_OK | X_OK) == 0;
    return f;
  }
  if (!f.dir.is_dir || f.dir.is_symlink) return f;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& entry : entries) {
    PathFacts file = path_facts(entry);
    if (file.is_regular || file.is_symlink) f.files.push_back(std::move(file));
  }
  return f;
}

DirectoryFacts secrets_directory_facts(const fs::path& dir) {
  DirectoryFacts f{.section = "Secrets", .id = "secrets", .purpose = "the secrets directory"};
  f.me = ::geteuid();
  if (dir.empty()) return f;
  f.dir = path_facts(dir);
  f.creatable = !f.dir.exists;  // `sluice secrets set` creates it (and its parents)
  if (f.dir.exists) f.files.push_back(path_facts(dir / config::kSecretsFileName));
  return f;
}

PortFacts probe_port(const std::string& host, std::uint16_t port, const fs::path& state_dir) {
  PortFacts f;
  f.host = host;
  f.port = port;
  f.bind_error = try_bind(host, port);
  f.free = f.bind_error == 0;
  if (!state_dir.empty()) f.lock_holder = flock_holder(state_dir / "http.lock");
  if (f.free) return f;
  f.holder = socket_owner(listening_inodes(port));
  if (f.holder > 0) {
    f.holder_exe = read_link("/proc/" + std::to_string(f.holder) + "/exe");
    f.holder_is_sluice =
        f.holder == f.lock_holder || is_sluice_exe(f.holder_exe, core::executable_of(0), f.holder);
  }
  return f;
}

BinaryFacts binary_facts(std::string_view path) {
  BinaryFacts f;
  const std::optional<core::FileIdentity> self = core::executable_of(0);
  f.self = self ? self->path : read_link("/proc/self/exe");
  f.on_path = search_path("sluice", path.empty() ? kDefaultPath : path);
  if (f.on_path) {
    const auto found = core::identity_of(*f.on_path);
    f.on_path_is_self = self && found && found->same_file(*self);
  }
  for (pid_t pid : all_pids()) {
    if (pid == ::getpid()) continue;
    if (std::optional<RunningSluice> r = running_sluice(pid, self)) f.running.push_back(*r);
  }
  return f;
}

}  // namespace sluice::cli::doctor
