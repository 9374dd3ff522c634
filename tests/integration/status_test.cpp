// `sluice status` against real gateways: two stdio gateways and one HTTP service at once, the
// registry entries they write (modes, stale ones, removal at shutdown), a call in flight, the
// HTTP service's token, and a gateway that does not answer.
#include "cli/gateway_registry.hpp"
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

constexpr std::string_view kToken = "status-test-token-0123456789";

class Status : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = dir_.path() / "state";
    run_ = cli::run_dir_of(state_);
    config_ = dir_.write("mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker_) + "}}");
  }
  void TearDown() override {
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }

  std::vector<std::string> serve_args() const {
    return {"serve", "--no-discover", "--config", config_.string(), "--state-dir", state_.string()};
  }

  // A stdio gateway, once its entry is written.
  std::unique_ptr<Sluice> stdio_gateway() {
    auto s = std::make_unique<Sluice>(serve_args(), dir_.path(), dir_.path());
    EXPECT_TRUE(wait_file(cli::entry_file(run_, s->pid()))) << s->stderr_text();
    return s;
  }

  // The HTTP service with a bearer token, once its entry is written.
  std::unique_ptr<Sluice> http_gateway() {
    std::vector<std::string> args{"SLUICE_AUTH_TOKEN=" + std::string(kToken), SLUICE_BINARY};
    for (const auto& a : serve_args()) args.push_back(a);
    for (const char* a : {"--transport", "http", "--host", "127.0.0.1", "--port", "0"}) {
      args.emplace_back(a);
    }
    auto s = std::make_unique<Sluice>(args, dir_.path(), dir_.path(), "/usr/bin/env");
    EXPECT_TRUE(wait_file(cli::entry_file(run_, s->pid()))) << s->stderr_text();
    return s;
  }

  RunResult status(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"status", "--state-dir", state_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sluice(args, dir_.path(), dir_.path());
  }

  // `status --json`'s array.
  bj::array status_json(std::vector<std::string> extra = {}) const {
    extra.emplace_back("--json");
    RunResult r = status(extra);
    bj::value v = bj::parse(r.out);
    return v.as_array();
  }

  static const bj::object* find_pid(const bj::array& gateways, pid_t pid) {
    for (const auto& g : gateways) {
      if (g.at("pid").to_number<pid_t>() == pid) return &g.as_object();
    }
    return nullptr;
  }

  static unsigned mode_of(const fs::path& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st.st_mode & 0777;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  fs::path state_, run_, config_;
};

TEST_F(Status, ListsTwoStdioGatewaysAndAnHttpServiceAtOnce) {
  auto first = stdio_gateway();
  auto second = stdio_gateway();
  auto http = http_gateway();
  first->initialize();
  second->initialize();

  bj::array gateways = status_json({"--auth-token", std::string(kToken)});
  ASSERT_EQ(gateways.size(), 3u);
  for (pid_t pid : {first->pid(), second->pid()}) {
    const bj::object* g = find_pid(gateways, pid);
    ASSERT_NE(g, nullptr) << pid;
    EXPECT_EQ(g->at("kind"), "stdio");
    EXPECT_EQ(g->at("reachable"), true);
    EXPECT_EQ(g->at("clients").at(0).at("name"), "integration");
    const bj::object& summary = g->at("summary").as_object();
    EXPECT_EQ(summary.at("servers_total"), 1);
    EXPECT_EQ(summary.at("servers_online"), 0);  // the fixture starts at its first use
    EXPECT_EQ(summary.at("calls_in_flight"), 0);
    EXPECT_EQ(summary.at("abandoned"), 0);
    EXPECT_TRUE(summary.at("restart_required").as_array().empty());
    EXPECT_EQ(g->at("health").at("servers").at(0).at("name"), "fx");
    EXPECT_FALSE(g->contains("http_health"));
  }
  const bj::object* h = find_pid(gateways, http->pid());
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->at("kind"), "http");
  EXPECT_EQ(h->at("reachable"), true);
  EXPECT_EQ(h->at("http").at("token_required"), true);
  EXPECT_EQ(h->at("http_health").at("answered"), true);
  EXPECT_EQ(h->at("http_health").at("token"), "accepted");
  EXPECT_EQ(h->at("http_health").at("sessions"), 0);

  RunResult human = status({"--auth-token", std::string(kToken)});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  for (pid_t pid : {first->pid(), second->pid(), http->pid()}) {
    EXPECT_NE(human.out.find("pid " + std::to_string(pid) + "  "), std::string::npos) << human.out;
  }
  EXPECT_NE(human.out.find("client     integration 1"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("the token was accepted"), std::string::npos) << human.out;
  std::istringstream lines(human.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;

  expect_clean_exit(*first);
  expect_clean_exit(*second);
  http->signal(SIGTERM);
  EXPECT_EQ(http->wait_exit(), 0);
}

TEST_F(Status, ACallInFlightIsShownInFlight) {
  auto s = stdio_gateway();
  s->initialize();
  const fs::path open = dir_.path() / "open", started = dir_.path() / "started";
  const std::string args = R"({"path":")" + open.string() + R"(","marker":")" +
                           (dir_.path() / "passed").string() + R"(","started":")" +
                           started.string() + R"("})";
  s->send(R"({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":)"
          R"("gateway.invoke","arguments":{"tool_id":"fx::gate","arguments":)" +
          args + "}}}");
  ASSERT_TRUE(wait_file(started)) << s->stderr_text();

  bj::array gateways = status_json();
  ASSERT_EQ(gateways.size(), 1u);
  const bj::object& summary = gateways.at(0).at("summary").as_object();
  EXPECT_EQ(summary.at("calls_in_flight"), 1);
  EXPECT_EQ(summary.at("servers_online"), 1);
  RunResult human = status();
  EXPECT_NE(human.out.find("calls      1 in flight, 0 abandoned"), std::string::npos) << human.out;

  { std::ofstream(open) << ""; }
  auto answer = s->read_line();
  ASSERT_TRUE(answer.has_value());
  EXPECT_NE(answer->find(R"("id":"slow")"), std::string::npos);
  expect_clean_exit(*s);
}

TEST_F(Status, TheRunFolderTheEntryAndTheSocketAreOnlyTheOwners) {
  auto s = stdio_gateway();
  EXPECT_EQ(mode_of(run_), 0700u);
  EXPECT_EQ(mode_of(cli::entry_file(run_, s->pid())), 0600u);
  struct stat st {};
  ASSERT_EQ(::lstat(cli::socket_file(run_, s->pid()).c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  expect_clean_exit(*s);
}

TEST_F(Status, AnOrderlyShutdownRemovesTheEntryAndTheSocket) {
  auto stdio = stdio_gateway();
  auto http = http_gateway();
  const pid_t stdio_pid = stdio->pid(), http_pid = http->pid();
  expect_clean_exit(*stdio);
  http->signal(SIGTERM);
  EXPECT_EQ(http->wait_exit(), 0);
  for (pid_t pid : {stdio_pid, http_pid}) {
    EXPECT_FALSE(fs::exists(cli::entry_file(run_, pid)));
    EXPECT_FALSE(fs::exists(cli::socket_file(run_, pid)));
  }
  RunResult r = status();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("no sluice gateway is running"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("stale"), std::string::npos) << r.out;
}

TEST_F(Status, AGatewayKilledOutrightLeavesAStaleEntryThatStatusRemoves) {
  auto s = stdio_gateway();
  const pid_t pid = s->pid();
  s->signal(SIGKILL);
  EXPECT_EQ(s->wait_exit(), 128 + SIGKILL);
  ASSERT_TRUE(fs::exists(cli::entry_file(run_, pid)));

  RunResult r = status();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed 1 stale entry"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no sluice gateway is running"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(cli::entry_file(run_, pid)));
  EXPECT_FALSE(fs::exists(cli::socket_file(run_, pid)));
  EXPECT_EQ(status_json().size(), 0u);
}

TEST_F(Status, AGatewayWhoseSocketDoesNotAnswerIsReportedAndExitsOne) {
  // A live process (this test) with an entry and no status socket: a gateway that is stuck.
  ASSERT_TRUE(cli::prepare_run_dir(run_));
  cli::RegistryEntry entry;
  entry.pid = ::getpid();
  entry.kind = "stdio";
  entry.start_ticks = cli::process_start_ticks(entry.pid).value_or(0);
  entry.started_unix_ms = 1764622805000;
  entry.version = "0.0.0";
  ASSERT_TRUE(cli::write_entry(run_, entry));

  RunResult r = status();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("not reached: its status socket is not there"), std::string::npos) << r.out;
  bj::array gateways = status_json();
  ASSERT_EQ(gateways.size(), 1u);
  EXPECT_EQ(gateways.at(0).at("reachable"), false);
  EXPECT_TRUE(gateways.at(0).at("problem").is_string());
  cli::remove_entry(run_, entry.pid);
}

// The text of a human block with its wrapped lines joined again.
std::string unwrapped(const std::string& out) {
  std::string joined;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '\n') {
      joined += out[i];
      continue;
    }
    while (i + 1 < out.size() && out[i + 1] == ' ') ++i;
    joined += ' ';
  }
  return joined;
}

TEST_F(Status, TheHttpServicesTokenIsNeededForItsDetailsAndAWrongOneFails) {
  auto http = http_gateway();
  RunResult without = status();
  without.out = unwrapped(without.out);
  EXPECT_EQ(without.exit_code, 0) << without.out;
  EXPECT_NE(without.out.find("need the token"), std::string::npos) << without.out;

  RunResult wrong = status({"--auth-token", "not-the-token"});
  wrong.out = unwrapped(wrong.out);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out;
  EXPECT_NE(wrong.out.find("the token given was not accepted"), std::string::npos) << wrong.out;
  EXPECT_EQ(wrong.out.find("not-the-token"), std::string::npos) << "a token was shown";
  EXPECT_EQ(status_json({"--auth-token", "x"}).at(0).at("http_health").at("token"), "not_accepted");

  http->signal(SIGTERM);
  EXPECT_EQ(http->wait_exit(), 0);
}

TEST_F(Status, NoGatewayRunningIsSaidAndExitsZero) {
  RunResult r = status();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("no sluice gateway is running"), std::string::npos) << r.out;
  RunResult j = status({"--json"});
  EXPECT_EQ(j.out, "[]\n");
}

TEST_F(Status, HelpHasExamplesAndExitCodes) {
  RunResult r = run_sluice({"status", "--help"}, dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sluice::test
