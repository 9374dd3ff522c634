#include "process/child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <sys/pidfd.h>
}

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>

extern char** environ;

namespace sluice::process {

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {

struct Pipe {
  UniqueFd read, write;
};

core::Result<Pipe> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return core::make_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Builds the child's environment: the allowlisted variables of ours, then the configured
// ones (which win).
std::vector<std::string> build_env(const SpawnSpec& spec) {
  std::vector<std::string> env;
  for (const auto& name : spec.inherit) {
    bool configured = std::any_of(spec.env.begin(), spec.env.end(),
                                  [&](const auto& kv) { return kv.first == name; });
    if (configured) continue;
    if (const char* v = std::getenv(name.c_str())) env.push_back(name + "=" + v);
  }
  for (const auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  return env;
}

// PATH lookup done in the parent, with the child's PATH, so the error is reported here.
std::optional<std::string> resolve_program(const SpawnSpec& spec) {
  if (spec.program.find('/') != std::string::npos) return spec.program;
  std::string path;
  for (const auto& [k, v] : spec.env) {
    if (k == "PATH") path = v;
  }
  if (path.empty()) {
    const char* p = std::getenv("PATH");
    path = p ? p : "/usr/local/bin:/usr/bin:/bin";
  }
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + spec.program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace

core::Result<std::unique_ptr<Child>> Child::spawn(const SpawnSpec& spec) {
  // Errors name the command as resolved and the working directory (configuration, not
  // secrets), so that a wrong path or folder can be seen at once.
  auto program = resolve_program(spec);
  if (!program) return core::make_error("command " + spec.program + " was not found in PATH");
  const std::string where =
      spec.cwd.empty() ? std::string("sluice's working directory") : spec.cwd;
  if (!spec.cwd.empty() && access(spec.cwd.c_str(), X_OK) != 0) {
    return core::make_error("working directory " + spec.cwd +
                            " is not accessible: " + std::strerror(errno));
  }
  auto in = make_pipe();
  if (!in) return in.error();
  auto out = make_pipe();
  if (!out) return out.error();
  auto err = make_pipe();
  if (!err) return err.error();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in->read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out->write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err->write.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t no_signals, all_defaults;
  sigemptyset(&no_signals);
  sigfillset(&all_defaults);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setsigdefault(&attr, &all_defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> env = build_env(spec);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args_storage;
  args_storage.push_back(spec.program);
  for (const auto& a : spec.args) args_storage.push_back(a);
  std::vector<char*> argv;
  for (auto& a : args_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, program->c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return core::make_error("cannot run " + *program + " in " + where + ": " + std::strerror(rc));
  }

  std::unique_ptr<Child> child(new Child());
  child->pid_ = pid;
  int pfd = pidfd_open(pid, 0);
  if (pfd < 0) {
    // Without a pidfd we cannot own it safely: kill the new group at once and reap.
    send_signal_to_group(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    return core::make_error(std::string("cannot open a pidfd: ") + std::strerror(errno));
  }
  child->pidfd_ = UniqueFd(pfd);
  child->stdin_ = std::move(in->write);
  child->stdout_ = std::move(out->read);
  child->stderr_ = std::move(err->read);
  return child;
}

Child::~Child() { kill_now(); }

bool Child::try_reap() {
  if (exit_) return true;
  if (!pidfd_) return false;
  siginfo_t info{};
  if (waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.get()), &info,
             WEXITED | WNOHANG) != 0) {
    if (errno == ECHILD) exit_ = ExitStatus{false, -1};  // reaped elsewhere
    return exit_.has_value();
  }
  if (info.si_pid == 0) return false;
  ExitStatus st;
  st.signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
  st.code = info.si_status;
  exit_ = st;
  return true;
}

bool Child::has_exited() const {
  if (exit_) return true;
  if (!pidfd_) return true;
  siginfo_t info{};
  if (waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.get()), &info,
             WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid != 0;
}

bool Child::signal_group(int sig) {
  if (exit_ || pid_ <= 1) return false;
  // The leader is unreaped, so its pid (and the group id equal to it) cannot be reused.
  return send_signal_to_group(pid_, sig);
}

void Child::kill_now() {
  if (pid_ > 1 && pidfd_ && !try_reap()) {
    signal_group(SIGKILL);
    siginfo_t info{};
    while (waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.get()), &info,
                  WEXITED) != 0 &&
           errno == EINTR) {
    }
    exit_ = ExitStatus{true, SIGKILL};
  }
  stdin_.reset();
  stdout_.reset();
  stderr_.reset();
  pidfd_.reset();
}

bool send_signal_to_group(pid_t pgid, int sig) {
  if (pgid <= 1 || pgid == getpid() || pgid == getpgrp()) return false;
  return ::kill(-pgid, sig) == 0;
}

bool send_signal_to_process(pid_t pid, int sig) {
  if (pid <= 1 || pid == getpid()) return false;
  return ::kill(pid, sig) == 0;
}

bool become_subreaper() { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }

namespace {

std::vector<pid_t> direct_children() {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/children");
    pid_t p;
    while (f >> p) out.push_back(p);
  }
  closedir(dir);
  return out;
}

}  // namespace

std::size_t reap_adopted_orphans(const std::vector<pid_t>& owned) {
  std::size_t n = 0;
  for (pid_t p : direct_children()) {
    if (std::find(owned.begin(), owned.end(), p) != owned.end()) continue;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(p), &info, WEXITED | WNOHANG) == 0 && info.si_pid == p) {
      ++n;
    }
  }
  return n;
}

namespace {

bool environ_has(pid_t pid, std::string_view entry) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string var;
  while (std::getline(f, var, '\0')) {
    if (var == entry) return true;
  }
  return false;
}

void kill_and_reap(pid_t p) {
  // An adopted orphan is our direct child and unreaped, so its pid cannot be reused
  // before the waitid below: signalling it (and its group, if it leads one) is safe.
  if (getpgid(p) == p) send_signal_to_group(p, SIGKILL);
  send_signal_to_process(p, SIGKILL);
  siginfo_t info{};
  waitid(P_PID, static_cast<id_t>(p), &info, WEXITED);
}

}  // namespace

std::size_t kill_adopted_orphans_with_token(std::string_view token) {
  std::string entry = std::string(kOwnerTokenVariable) + "=" + std::string(token);
  std::size_t n = 0;
  for (pid_t p : direct_children()) {
    if (p <= 1 || p == getpid() || !environ_has(p, entry)) continue;
    kill_and_reap(p);
    ++n;
  }
  return n;
}

std::size_t kill_adopted_orphans(const std::vector<pid_t>& owned) {
  std::size_t n = 0;
  for (pid_t p : direct_children()) {
    if (std::find(owned.begin(), owned.end(), p) != owned.end()) continue;
    if (p <= 1 || p == getpid()) continue;
    kill_and_reap(p);
    ++n;
  }
  return n;
}

}  // namespace sluice::process
