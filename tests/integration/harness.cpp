#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace sluice::test {
namespace bj = boost::json;

TempDir::TempDir() {
  char tmpl[] = "/tmp/sluice-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& text) const {
  auto p = path_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p;
}

std::string new_marker() {
  static std::atomic<int> n{0};
  std::random_device rd;
  return "sluice-marker-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" +
         std::to_string(rd());
}

std::vector<pid_t> processes_with_marker(const std::string& marker) {
  std::vector<pid_t> found;
  std::string needle = "SLUICE_FIXTURE_MARKER=" + marker;
  DIR* d = ::opendir("/proc");
  if (!d) return found;
  while (dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string env = ss.str();
    // A zombie has an empty environ; it is still a leftover if never reaped, but its
    // parent (sluice, a subreaper) owns reaping; count only live environments here.
    if (env.find(needle) != std::string::npos) found.push_back(pid);
  }
  ::closedir(d);
  return found;
}

std::vector<pid_t> wait_no_marker(const std::string& marker, std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  for (;;) {
    auto left = processes_with_marker(marker);
    if (left.empty() || std::chrono::steady_clock::now() > deadline) return left;
    // Waiting on another process's exit has no event to block on from here; a short
    // yield between scans keeps this a state wait, bounded by the guard.
    std::this_thread::sleep_for(20ms);
  }
}

std::string fixture_entry(const std::string& marker, const std::vector<std::string>& args) {
  bj::array a;
  for (const auto& s : args) a.push_back(bj::value(s));
  bj::object o{{"command", FIXTURE_SERVER},
               {"args", a},
               {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker}}}};
  return bj::serialize(o);
}

Sluice::Sluice(const std::vector<std::string>& args, const std::filesystem::path& home,
               const std::filesystem::path& cwd, const std::string& binary, bool read_stderr) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "HOME=", 5) != 0) env_s.emplace_back(*e);
  }
  env_s.push_back("HOME=" + home.string());
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  if (posix_spawn(&pid_, binary.c_str(), &fa, nullptr, argv.data(), envp.data()) != 0) {
    throw std::runtime_error("spawn failed");
  }
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  if (read_stderr) read_stderr_now();
}

void Sluice::read_stderr_now() {
  if (err_thread_.joinable()) return;
  err_thread_ = std::thread([this] {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(err_, buf, sizeof buf);
      if (n <= 0) break;
      std::lock_guard lock(err_mu_);
      if (err_text_.size() < (64u << 20)) err_text_.append(buf, static_cast<std::size_t>(n));
    }
  });
}

Sluice::~Sluice() {
  if (in_ >= 0) ::close(in_);
  if (!exit_code_) {
    if (!wait_exit(kGuard)) {
      ::kill(pid_, SIGKILL);
      wait_exit(kGuard);
    }
  }
  if (err_thread_.joinable()) err_thread_.join();
  if (out_ >= 0) ::close(out_);
  if (err_ >= 0) ::close(err_);
}


void Sluice::send(const std::string& line) { send_raw(line + "\n"); }

void Sluice::send_raw(std::string_view bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(in_, bytes.data() + off, bytes.size() - off);
    if (n <= 0) throw std::runtime_error("write to sluice failed");
    off += static_cast<std::size_t>(n);
  }
}

std::optional<std::string> Sluice::read_line(std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  for (;;) {
    auto nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    char buf[65536];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    out_buf_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string Sluice::request_raw(const std::string& method, const std::string& params_json,
                                const std::string& id_json) {
  std::string id = id_json.empty() ? std::to_string(next_id_++) : id_json;
  std::string frame = R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + "\"";
  if (!params_json.empty()) frame += R"(,"params":)" + params_json;
  frame += "}";
  send(frame);
  std::string needle = "\"id\":" + id + ",";
  for (;;) {
    auto line = read_line();
    if (!line) throw std::runtime_error("no response to " + method);
    if (line->find(needle) != std::string::npos) return *line;
    notifications_.push_back(*line);
  }
}

bj::value Sluice::request(const std::string& method, const std::string& params_json) {
  return bj::parse(request_raw(method, params_json));
}

bj::value Sluice::initialize() {
  auto r = request("initialize",
                   R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                   R"("clientInfo":{"name":"integration","version":"1"}})");
  send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  return r;
}

bj::value Sluice::call_tool(const std::string& name, const std::string& args_json) {
  auto r = request("tools/call", R"({"name":")" + name + R"(","arguments":)" + args_json + "}");
  if (!r.as_object().contains("result")) throw std::runtime_error("tools/call failed");
  return r.at("result");
}

void Sluice::close_stdout() {
  if (out_ >= 0) ::close(out_);
  out_ = -1;
}

void Sluice::close_stdin() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

std::optional<int> Sluice::wait_exit(std::chrono::milliseconds guard) {
  if (exit_code_) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + guard;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{pidfd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::max<long>(0, left.count())));
    ::close(pidfd);
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

void Sluice::signal(int sig) { ::kill(pid_, sig); }

std::string Sluice::stderr_text() {
  std::lock_guard lock(err_mu_);
  return err_text_;
}

std::size_t Sluice::stderr_unread_bytes() const {
  int n = 0;
  if (::ioctl(err_, FIONREAD, &n) != 0) return 0;
  return static_cast<std::size_t>(n);
}

bool is_error(const bj::value& result) {
  const auto* e = result.as_object().if_contains("isError");
  return e && e->is_bool() && e->as_bool();
}

std::string text_of(const bj::value& result) {
  const auto& content = result.at("content").as_array();
  if (content.empty()) return "";
  return std::string(content[0].at("text").as_string());
}

bool wait_file(const std::filesystem::path& path) {
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

void expect_clean_exit(Sluice& sluice) {
  sluice.close_stdin();
  auto code = sluice.wait_exit();
  EXPECT_EQ(code, 0);
  if (code != 0) {
    sluice.join_stderr();
    std::string err = sluice.stderr_text();
    ADD_FAILURE() << "sluice's stderr ends with:\n"
                  << err.substr(err.size() > 6000 ? err.size() - 6000 : 0);
  }
}

void Sluice::join_stderr() {
  if (err_thread_.joinable()) err_thread_.join();
}

RunResult run_sluice(const std::vector<std::string>& args, const std::filesystem::path& home,
                     const std::filesystem::path& cwd, std::string_view input) {
  Sluice s(args, home, cwd);
  if (!input.empty()) s.send_raw(input);
  s.close_stdin();
  RunResult r;
  while (auto line = s.read_line()) r.out += *line + "\n";
  r.exit_code = s.wait_exit().value_or(-1);
  s.join_stderr();
  r.err = s.stderr_text();
  return r;
}

}  // namespace sluice::test
