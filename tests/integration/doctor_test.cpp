// `sluice doctor` through the real binary: a clean setup passes with exit 0; each failure it
// checks, planted on disk (a command not on PATH, a missing cwd, a missing variable, an
// untrusted or changed project file, a bad JSON file, a 0755 state directory, a 0644
// trust.json, the port held by a plain listener, a sluice whose binary was removed or
// replaced), fails (exit 1) or warns with the command that fixes it; no secret value ever
// appears in its output.
#include "harness.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A listener on 127.0.0.1 at a port the kernel chose; closed at destruction.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  std::string port() const { return std::to_string(port_); }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// A port that was free a moment ago.
std::string free_port() { return Listener().port(); }

// The report as one line per check: the 80-column wrapping joined back, so that a text is
// found whatever the length of the temporary paths around it.
std::string flat(const std::string& report) {
  std::string out;
  for (std::size_t i = 0; i < report.size(); ++i) {
    if (report[i] == '\n' && i + 1 < report.size() && report[i + 1] == ' ') {
      while (i + 1 < report.size() && report[i + 1] == ' ') ++i;
      out += ' ';
    } else {
      out += report[i];
    }
  }
  return out;
}

std::string sentinel(std::string_view what) {
  return "SENTINEL-" + std::string(what) + "-" + new_marker();
}

// A scratch HOME whose XDG config and state directories are its own for the whole test (sluice
// processes inherit the test's environment).
class Doctor : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"XDG_CONFIG_HOME", "XDG_STATE_HOME"}) {
      if (const char* old = std::getenv(name)) saved_.emplace_back(name, old);
    }
    ::setenv("XDG_CONFIG_HOME", (home() / "xdg").c_str(), 1);
    ::setenv("XDG_STATE_HOME", (home() / "state").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("XDG_CONFIG_HOME");
    ::unsetenv("XDG_STATE_HOME");
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

  const fs::path& home() const { return tmp_.path(); }
  fs::path state_dir() const { return home() / "state" / "sluice"; }
  void write_user_config(const std::string& servers_json) const {
    tmp_.write(".mcp.json", R"({"mcpServers": )" + servers_json + "}");
  }
  RunResult doctor(std::vector<std::string> args = {}, const fs::path& cwd = {}) {
    args.insert(args.begin(), "doctor");
    if (std::find(args.begin(), args.end(), "--port") == args.end()) {
      args.push_back("--port");
      args.push_back(free_port());
    }
    return run_sluice(args, home(), cwd.empty() ? home() : cwd);
  }

  TempDir tmp_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(Doctor, ACleanSetupPassesWithExitZeroAndFitsEightyColumns) {
  write_user_config(R"({"fixture": )" + fixture_entry(new_marker()) + "}");
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(flat(r.out), HasSubstr("no check failed"));
  EXPECT_THAT(flat(r.out), HasSubstr("Settings"));
  EXPECT_THAT(flat(r.out), HasSubstr("sluice.readBudget"));
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_FALSE(fs::exists(state_dir())) << "doctor created the state directory";
}

TEST_F(Doctor, ACommandNotOnPathFailsWithExitOne) {
  write_user_config(R"({"missing": {"command": "sluice-doctor-no-such-command"}})");
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out),
              HasSubstr("FAIL  missing: command sluice-doctor-no-such-command is not"));
  EXPECT_THAT(flat(r.out), HasSubstr("1 check failed"));
}

TEST_F(Doctor, AMissingWorkingDirectoryFailsWithTheMkdirThatCreatesIt) {
  const fs::path cwd = home() / "gone";
  write_user_config(R"({"fx": {"command": ")" FIXTURE_SERVER R"(", "cwd": ")" + cwd.string() +
                    R"("}})");
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out), HasSubstr("fix: mkdir -p " + cwd.string()));
}

TEST_F(Doctor, AMissingVariableFailsByNameWithTheSecretsCommand) {
  write_user_config(R"({"fx": {"command": ")" FIXTURE_SERVER
                    R"(", "env": {"TOKEN": "${DOCTOR_MISSING_VARIABLE}"}}})");
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out), HasSubstr("variable DOCTOR_MISSING_VARIABLE is set neither"));
  EXPECT_THAT(flat(r.out), HasSubstr("fix: sluice secrets set DOCTOR_MISSING_VARIABLE"));
}

TEST_F(Doctor, AnUntrustedProjectFailsUntilApprovedAndAgainOnceChanged) {
  const fs::path project = home() / "proj";
  fs::create_directories(project / ".git");
  const std::string entry = R"({"mcpServers": {"fx": )" + fixture_entry(new_marker()) + "}}";
  tmp_.write("proj/.mcp.json", entry);
  RunResult untrusted = doctor({}, project);
  EXPECT_EQ(untrusted.exit_code, 1) << untrusted.out;
  EXPECT_THAT(flat(untrusted.out), HasSubstr("not approved: its servers do not start"));
  EXPECT_THAT(flat(untrusted.out), HasSubstr("fix: sluice trust approve "));

  RunResult approve = run_sluice({"trust", "approve"}, home(), project);
  ASSERT_EQ(approve.exit_code, 0) << approve.err;
  RunResult approved = doctor({}, project);
  EXPECT_EQ(approved.exit_code, 0) << approved.out;
  EXPECT_THAT(flat(approved.out), HasSubstr("approved as it is now"));

  tmp_.write("proj/.mcp.json", entry + "\n");
  RunResult changed = doctor({}, project);
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_THAT(flat(changed.out), HasSubstr("changed since it was approved"));
}

TEST_F(Doctor, ABadJsonFileFailsWithTheParsersOwnMessage) {
  tmp_.write(".mcp.json", "{\"mcpServers\": {\"a\": }");
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out), HasSubstr("left out (none of its servers is served)"));
  EXPECT_THAT(flat(r.out), HasSubstr("no server is configured"));
}

TEST_F(Doctor, AStateDirectoryOpenToOthersFailsWithChmod700) {
  fs::create_directories(state_dir());
  ::chmod(state_dir().c_str(), 0755);
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out), HasSubstr("open to other users (mode 0755)"));
  EXPECT_THAT(flat(r.out), HasSubstr("fix: chmod 700 " + state_dir().string()));
}

TEST_F(Doctor, ATrustFileReadableByOthersFailsWithChmod600) {
  fs::create_directories(state_dir());
  ::chmod(state_dir().c_str(), 0700);
  const fs::path trust = tmp_.write("state/sluice/trust.json", R"({"version":1,"files":[]})");
  ::chmod(trust.c_str(), 0644);
  RunResult r = doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out), HasSubstr("fix: chmod 600 " + trust.string()));
}

TEST_F(Doctor, APortHeldByAPlainListenerFailsNamingItsProcess) {
  Listener listener;
  RunResult r = doctor({"--port", listener.port()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(flat(r.out),
              HasSubstr("127.0.0.1:" + listener.port() + ": held by another program: pid " +
                        std::to_string(::getpid())));
}

TEST_F(Doctor, ASluiceWhoseBinaryWasRemovedOrReplacedIsNamedWithWhatToRestart) {
  fs::create_directories(home() / "bin");
  const fs::path copy = home() / "bin" / "sluice";
  fs::copy_file(SLUICE_BINARY, copy);
  Sluice running({"--no-discover"}, home(), home(), copy.string());
  running.initialize();
  const std::string pid = "pid " + std::to_string(running.pid());

  fs::remove(copy);
  RunResult deleted = doctor({"--json"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.out;  // a warning: the stale gateway still serves
  const bj::value report = bj::parse(deleted.out);
  bool named = false;
  for (const bj::value& c : report.at("checks").as_array()) {
    if (c.at("id").as_string() != "binary.stale" || c.at("subject").as_string() != pid) continue;
    named = true;
    EXPECT_EQ(c.at("status").as_string(), "warn");
    EXPECT_THAT(std::string(c.at("detail").as_string()), HasSubstr("(deleted since)"));
    EXPECT_THAT(std::string(c.at("fix").as_string()), HasSubstr("kill " + pid.substr(4)));
  }
  EXPECT_TRUE(named) << deleted.out;

  fs::copy_file(SLUICE_BINARY, copy);  // a new file at the old path
  RunResult replaced = doctor();
  EXPECT_THAT(flat(replaced.out), HasSubstr("(replaced since)")) << replaced.out;
  expect_clean_exit(running);
}

TEST_F(Doctor, NoSecretEnvironmentOrHeaderValueAppearsInItsOutput) {
  const std::string secret = sentinel("secret"), env = sentinel("env"),
                    literal = sentinel("literal"), header = sentinel("header");
  ASSERT_EQ(
      run_sluice({"secrets", "set", "DOCTOR_SECRET"}, home(), home(), secret + "\n").exit_code, 0);
  ::setenv("DOCTOR_ENV_SENTINEL", env.c_str(), 1);
  write_user_config(R"({"fx": {"command": ")" FIXTURE_SERVER R"(", "args": [")" + literal +
                    R"("], "env": {"A": "${DOCTOR_SECRET}", "B": "${DOCTOR_ENV_SENTINEL}", )"
                    R"("C": ")" +
                    literal +
                    R"(", "D": "${DOCTOR_UNSET}"}},)"
                    R"("web": {"type": "http", "url": "https://127.0.0.1:9/mcp", "headers": )"
                    R"({"Authorization": "Bearer )" +
                    header + R"("}}})");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, std::vector<std::string>{"--json"}}) {
    RunResult r = doctor(args);
    EXPECT_EQ(r.exit_code, 1) << r.out;  // DOCTOR_UNSET
    for (const std::string& value : {secret, env, literal, header}) {
      EXPECT_THAT(r.out + r.err, Not(HasSubstr(value)));
    }
  }
  ::unsetenv("DOCTOR_ENV_SENTINEL");
}

TEST_F(Doctor, JsonNamesEachSettingsSourceAndEveryCheckHasItsFields) {
  tmp_.write(".mcp.json", R"({"mcpServers": {}, "sluice": {"readBudget": 3}})");
  RunResult r = doctor({"--json", "--call-timeout-ms", "5000"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const bj::value v = bj::parse(r.out);
  for (const bj::value& c : v.at("checks").as_array()) {
    for (const char* key : {"id", "section", "subject", "status", "detail", "fix"}) {
      EXPECT_TRUE(c.as_object().contains(key)) << key;
    }
  }
  std::map<std::string, std::string> sources;
  for (const bj::value& s : v.at("settings").as_array()) {
    sources[std::string(s.at("name").as_string())] = s.at("source").as_string();
  }
  EXPECT_EQ(sources["sluice.readBudget"], (home() / ".mcp.json").string());
  EXPECT_EQ(sources["sluice.callTimeoutMs"], "flag --call-timeout-ms");
  EXPECT_EQ(sources["sluice.mutatingBudget"], "default");
}

TEST_F(Doctor, HelpShowsExamplesAndExitCodes) {
  RunResult r = run_sluice({"doctor", "--help"}, home(), home());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(flat(r.out), HasSubstr("Examples:"));
  EXPECT_THAT(flat(r.out), HasSubstr("Exit codes:"));
  RunResult bad = run_sluice({"doctor", "--port", "0"}, home(), home());
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace sluice::test
