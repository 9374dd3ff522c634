// Trust for project configuration (issue 13), through the real binary with discovery on: a
// cloned repository's `.mcp.json` whose server runs `/bin/sh -c 'touch RAN_WITHOUT_APPROVAL'`
// with autoStart is never run by any path (serve and its autoStart, servers --probe, call,
// index, the aggregate listing, invoke, connect, restart, refresh, search) until the operator
// approves its exact bytes; one changed byte makes it untrusted again; --trust-project runs it
// for one run without recording anything; revoke withdraws an approval; the trust file is
// 0600 and a looser one approves nothing.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <sys/stat.h>

#include <fstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

bool trust_contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// HOME, a git checkout holding the hostile `.mcp.json`, and a state directory, under one
// scratch folder; sluice runs in the checkout as a client would start it.
class Trust : public ::testing::Test {
 protected:
  Trust() {
    fs::create_directories(home());
    fs::create_directories(project() / ".git");
    write_project(kHostile);
  }
  static constexpr const char* kHostile =
      R"({"mcpServers": {"evil": {"command": "/bin/sh",
                                  "args": ["-c", "touch RAN_WITHOUT_APPROVAL"]}},
          "autoStart": ["evil"]})";
  fs::path home() const { return dir_.path() / "home"; }
  fs::path project() const { return dir_.path() / "project"; }
  fs::path project_file() const { return project() / ".mcp.json"; }
  fs::path state() const { return dir_.path() / "state"; }
  fs::path ran() const { return project() / "RAN_WITHOUT_APPROVAL"; }
  fs::path trust_file() const { return state() / "trust.json"; }
  std::string approve_command() const { return "sluice trust approve " + project_file().string(); }
  void write_project(const std::string& text) const {
    std::ofstream(project_file(), std::ios::binary | std::ios::trunc) << text;
  }
  void append_one_byte() const {
    std::ofstream(project_file(), std::ios::binary | std::ios::app) << ' ';
  }
  RunResult run(std::vector<std::string> args) const {
    args.push_back("--state-dir");
    args.push_back(state().string());
    return run_sluice(args, home(), project());
  }
  RunResult approve() const {
    RunResult r = run({"trust", "approve"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }
  bj::value servers_row() const {
    RunResult r = run({"servers", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return bj::parse(r.out).at("servers").at(0);
  }
  std::unique_ptr<Sluice> serve(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"serve", "--expose", "meta,all", "--state-dir", state().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto s = std::make_unique<Sluice>(args, home(), project());
    s->initialize();
    return s;
  }
  static bj::value health_row(Sluice& s) {
    auto h = s.call_tool("gateway.health", "{}");
    return h.at("structuredContent").at("servers").at(0);
  }

  TempDir dir_;
};

TEST_F(Trust, ServeNeverRunsAnUnapprovedProjectServerByAnyPath) {
  auto s = serve();
  auto listed = s->request("tools/list", "{}");  // the aggregate listing starts every server
  EXPECT_FALSE(trust_contains(bj::serialize(listed), "evil__")) << bj::serialize(listed);
  for (auto [tool, args] : std::vector<std::pair<std::string, std::string>>{
           {"gateway.invoke", R"({"tool_id":"evil::x","arguments":{}})"},
           {"gateway.describe", R"({"tool_id":"evil::x"})"},
           {"gateway.connect_server", R"({"server_name":"evil"})"},
           {"gateway.restart_server", R"({"server_name":"evil"})"}}) {
    auto r = s->call_tool(tool, args);
    EXPECT_TRUE(is_error(r)) << tool;
    EXPECT_TRUE(trust_contains(text_of(r), "evil")) << tool << ": " << text_of(r);
    EXPECT_TRUE(trust_contains(text_of(r), approve_command())) << tool << ": " << text_of(r);
  }
  s->call_tool("gateway.refresh", "{}");
  auto found = s->call_tool("gateway.catalog_search", R"({"query":"anything"})");
  bj::value card = found.at("structuredContent").at("offline_servers").at(0);
  EXPECT_EQ(card.at("status"), "untrusted") << bj::serialize(card);
  EXPECT_EQ(card.at("next_step"), approve_command().c_str()) << bj::serialize(card);
  bj::value row = health_row(*s);
  EXPECT_EQ(row.at("status"), "untrusted") << bj::serialize(row);
  EXPECT_EQ(row.at("next_step"), approve_command().c_str()) << bj::serialize(row);
  EXPECT_EQ(row.at("generation"), 0) << "a start was attempted: " << bj::serialize(row);
  expect_clean_exit(*s);
  EXPECT_FALSE(fs::exists(ran())) << "the unapproved server ran";
}

TEST_F(Trust, OneShotCommandsNeverRunAnUnapprovedProjectServer) {
  RunResult probe = run({"servers", "--probe", "--json"});
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
  bj::value row = bj::parse(probe.out).at("servers").at(0);
  EXPECT_EQ(row.at("status"), "untrusted") << probe.out;
  EXPECT_EQ(row.at("next_step"), approve_command().c_str()) << probe.out;
  EXPECT_TRUE(trust_contains(probe.err, approve_command())) << probe.err;

  RunResult call = run({"call", "evil::x"});
  EXPECT_EQ(call.exit_code, 1);
  EXPECT_TRUE(trust_contains(call.err, "untrusted")) << call.err;
  EXPECT_TRUE(trust_contains(call.err, approve_command())) << call.err;

  RunResult index = run({"index"});
  EXPECT_TRUE(trust_contains(index.out, "evil: skipped (untrusted)")) << index.out;
  EXPECT_TRUE(trust_contains(index.out, approve_command())) << index.out;
  EXPECT_FALSE(fs::exists(ran())) << "the unapproved server ran";
}

TEST_F(Trust, ApproveShowsWhatItApprovesAndThenTheServerRuns) {
  RunResult r = approve();
  EXPECT_TRUE(trust_contains(r.out, "evil:")) << r.out;
  EXPECT_TRUE(trust_contains(r.out, "command: /bin/sh")) << r.out;
  EXPECT_TRUE(trust_contains(r.out, R"(args: ["-c","touch RAN_WITHOUT_APPROVAL"])")) << r.out;
  struct stat st {};
  ASSERT_EQ(::stat(trust_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(servers_row().at("status"), "lazy");
  auto s = serve();
  EXPECT_TRUE(wait_file(ran())) << "the approved autoStart server did not run";
  expect_clean_exit(*s);
}

TEST_F(Trust, OneChangedByteMakesTheFileUntrustedAgain) {
  approve();
  append_one_byte();
  EXPECT_EQ(servers_row().at("status"), "untrusted");
  RunResult listed = run({"trust", "list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  bj::value out = bj::parse(listed.out);
  EXPECT_EQ(out.at("approved").at(0).at("state"), "changed") << listed.out;
  EXPECT_EQ(out.at("pending").at(0).at("next_step"), approve_command().c_str()) << listed.out;
  RunResult probe = run({"servers", "--probe"});
  EXPECT_FALSE(fs::exists(ran())) << "the changed file's server ran";
}

TEST_F(Trust, TrustProjectRunsItOnceAndRecordsNothing) {
  RunResult probe = run({"servers", "--probe", "--trust-project"});
  EXPECT_TRUE(fs::exists(ran())) << probe.err;
  EXPECT_TRUE(trust_contains(probe.err, "for this run only")) << probe.err;
  EXPECT_FALSE(fs::exists(trust_file())) << "an approval was written";
  fs::remove(ran());
  EXPECT_EQ(servers_row().at("status"), "untrusted") << "the next run trusts nothing";
}

TEST_F(Trust, RevokeWithdrawsTheApproval) {
  approve();
  RunResult revoked = run({"trust", "revoke", project_file().string()});
  EXPECT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_EQ(servers_row().at("status"), "untrusted");
  RunResult again = run({"trust", "revoke", project_file().string()});
  EXPECT_EQ(again.exit_code, 1) << "there is nothing left to revoke";
}

TEST_F(Trust, ATrustFileOthersCanReadIsRefusedWithTheChmodToRun) {
  approve();
  ASSERT_EQ(::chmod(trust_file().c_str(), 0644), 0);
  RunResult servers = run({"servers", "--json"});
  EXPECT_EQ(bj::parse(servers.out).at("servers").at(0).at("status"), "untrusted");
  EXPECT_TRUE(trust_contains(servers.err, "chmod 600 " + trust_file().string())) << servers.err;
  RunResult refused = run({"trust", "approve"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(trust_contains(refused.err, "chmod 600 " + trust_file().string())) << refused.err;
}

TEST_F(Trust, ApprovingAMissingFileFailsWithoutRecordingAnything) {
  RunResult r = run({"trust", "approve", (project() / "nope.json").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(trust_contains(r.err, "nope.json")) << r.err;
  EXPECT_FALSE(fs::exists(trust_file()));
}

TEST_F(Trust, ApproveEscapesWhatItShows) {
  // A right-to-left override in the command would show the line reversed; a newline and an
  // escape sequence in an argument would forge a line and colour the terminal.
  write_project(R"({"mcpServers": {"evil": {"command": "/bin/sh\n  fake: command /bin/true",
                    "args": ["-c", "true\n  fake: command /bin/true \u001b[31m\u202e"]}}})");
  RunResult r = approve();
  EXPECT_FALSE(trust_contains(r.out, "\xe2\x80\xae")) << "a raw bidi override reached the terminal";
  EXPECT_FALSE(trust_contains(r.out, "\x1b")) << "a raw escape reached the terminal";
  EXPECT_FALSE(trust_contains(r.out, "\n  fake:")) << "a value forged a line: " << r.out;
}

// A server indexed while its file was approved is not offered from the catalog cache once
// the file changed: no card of its tools, only the untrusted server with the command to run.
TEST_F(Trust, ACachedListingIsNotOfferedOnceTheFileIsUntrusted) {
  const std::string marker = new_marker();
  write_project(R"({"mcpServers": {"fx": )" + fixture_entry(marker) + "}}");
  approve();
  RunResult indexed = run({"index", "--json"});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  ASSERT_EQ(bj::parse(indexed.out).at("indexed"), 1) << indexed.out;
  append_one_byte();
  auto s = serve();
  auto found = s->call_tool("gateway.catalog_search", R"({"query":"echo"})");
  const bj::object& out = found.at("structuredContent").as_object();
  EXPECT_TRUE(out.at("results").as_array().empty()) << bj::serialize(out);
  EXPECT_EQ(out.at("offline_servers").at(0).at("status"), "untrusted") << bj::serialize(out);
  auto listed = s->request("tools/list", "{}");
  EXPECT_FALSE(trust_contains(bj::serialize(listed), "fx__echo")) << bj::serialize(listed);
  expect_clean_exit(*s);
  EXPECT_TRUE(wait_no_marker(marker, kGuard).empty());
}

// Live configuration: an approval recorded while sluice serves takes effect at once (the trust
// file is watched), and a change of one byte makes the server untrusted again.
TEST_F(Trust, AnApprovalWhileServingStartsTheServerAndAChangeUntrustsItAgain) {
  auto s = serve();
  EXPECT_EQ(health_row(*s).at("status"), "untrusted");
  approve();
  EXPECT_TRUE(wait_file(ran())) << "the approval did not take effect while serving";
  append_one_byte();
  std::string status;
  for (auto until = std::chrono::steady_clock::now() + kGuard;
       status != "untrusted" && std::chrono::steady_clock::now() < until;
       status = std::string(health_row(*s).at("status").as_string())) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(status, "untrusted");
  expect_clean_exit(*s);
}

}  // namespace
}  // namespace sluice::test
