// The checks of `sluice doctor` as pure functions: each failure planted in the facts it reads,
// its status, its value-free detail and the command that fixes it; the report's 80 columns,
// escaping and JSON; where each setting came from.
#include "cli/doctor_checks.hpp"
#include "cli/doctor_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <cerrno>
#include <sstream>

namespace sluice::cli::doctor {
namespace {
namespace bj = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

const Check* find(const std::vector<Check>& checks, std::string_view id,
                  std::string_view subject = {}) {
  for (const Check& c : checks) {
    if (c.id == id && (subject.empty() || c.subject == subject)) return &c;
  }
  return nullptr;
}

config::ServerConfig stdio_server(std::string name, std::string command) {
  config::ServerConfig s;
  s.name = std::move(name);
  s.source_file = "/home/u/.mcp.json";
  config::StdioServer stdio;
  stdio.command = std::move(command);
  s.transport = std::move(stdio);
  return s;
}

config::ServerConfig remote_server(std::string name) {
  config::ServerConfig s;
  s.name = std::move(name);
  s.source_file = "/home/u/.mcp.json";
  config::RemoteServer remote;
  remote.type = "http";
  remote.url = "https://mcp.example.com/mcp";
  s.transport = std::move(remote);
  return s;
}

TEST(DoctorServers, ACommandNotOnPathFailsWithTheCommandThatInstallsIt) {
  config::ServerConfig s = stdio_server("fs", "npx");
  std::vector<Check> checks = check_servers({{.server = &s, .program = std::nullopt}});
  const Check* c = find(checks, "server.command", "fs");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_THAT(c->detail, HasSubstr("not found on PATH"));
  EXPECT_EQ(c->fix, "apt install npm");
}

TEST(DoctorServers, AnUnknownMissingCommandNamesTheFileToEdit) {
  config::ServerConfig s = stdio_server("x", "no-such-tool");
  std::vector<Check> checks = check_servers({{.server = &s}});
  EXPECT_THAT(find(checks, "server.command")->fix, HasSubstr("/home/u/.mcp.json"));
}

TEST(DoctorServers, AResolvedCommandIsOkAndSaysWhereItWasFound) {
  config::ServerConfig s = stdio_server("fs", "node");
  std::vector<Check> checks = check_servers({{.server = &s, .program = "/usr/bin/node"}});
  EXPECT_EQ(find(checks, "server.command")->status, Status::ok);
  EXPECT_THAT(find(checks, "server.command")->detail, HasSubstr("/usr/bin/node"));
}

TEST(DoctorServers, AMissingWorkingDirectoryFailsWithTheMkdirThatCreatesIt) {
  config::ServerConfig s = stdio_server("fs", "node");
  std::get<config::StdioServer>(s.transport).cwd = "/srv/my project";
  std::vector<Check> checks =
      check_servers({{.server = &s, .program = "/usr/bin/node", .cwd_exists = false}});
  const Check* c = find(checks, "server.cwd");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_EQ(c->fix, "mkdir -p '/srv/my project'");
}

TEST(DoctorServers, AMissingVariableFailsByNameWithTheSecretsCommand) {
  config::ServerConfig s = stdio_server("gh", "node");
  s.missing_variables = {"GITHUB_TOKEN"};
  std::vector<Check> checks = check_servers({{.server = &s, .program = "/usr/bin/node"}});
  const Check* c = find(checks, "server.variable");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_THAT(c->detail, HasSubstr("GITHUB_TOKEN"));
  EXPECT_EQ(c->fix, "sluice secrets set GITHUB_TOKEN");
}

TEST(DoctorServers, AnEnvHygieneRefusalFails) {
  config::ServerConfig s = stdio_server("gh", "node");
  s.env_refusal = "its env sets LD_PRELOAD, which sluice never passes to a server";
  std::vector<Check> checks = check_servers({{.server = &s, .program = "/usr/bin/node"}});
  ASSERT_NE(find(checks, "server.env"), nullptr);
  EXPECT_EQ(find(checks, "server.env")->status, Status::fail);
  EXPECT_THAT(find(checks, "server.env")->detail, HasSubstr("LD_PRELOAD"));
}

TEST(DoctorServers, AnUnusableUrlFailsAndAMissingOAuthLoginWarnsWithTheLoginCommand) {
  config::ServerConfig s = remote_server("docs");
  std::vector<Check> checks =
      check_servers({{.server = &s, .url_usable = false, .has_token = false}});
  EXPECT_EQ(find(checks, "server.url")->status, Status::fail);
  const Check* oauth = find(checks, "server.oauth");
  ASSERT_NE(oauth, nullptr);
  EXPECT_EQ(oauth->status, Status::warn);
  EXPECT_EQ(oauth->fix, "sluice auth login docs");
}

TEST(DoctorServers, ADisabledServerIsReportedAndNotChecked) {
  config::ServerConfig s = stdio_server("off", "no-such-tool");
  s.disabled = true;
  std::vector<Check> checks = check_servers({{.server = &s}});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].id, "server.disabled");
  EXPECT_EQ(checks[0].status, Status::ok);
}

// ---- Configuration files ---------------------------------------------------------------

struct Files {
  config::GatewayConfig config;
  ConfigFacts facts() const {
    ConfigFacts f;
    f.config = &config;
    f.user_config = "/home/u/.config/sluice/mcp.json";
    f.trust_file = "/home/u/.local/state/sluice/trust.json";
    f.cwd = "/work/app";
    return f;
  }
};

Files project_files(config::GatewayConfig::ProjectTrust::State state) {
  Files f;
  f.config.project_dir = "/work/app";
  f.config.files_looked_for = {"/work/app/.mcp.json", "/home/u/.config/sluice/mcp.json",
                               "/home/u/.mcp.json", "/home/u/.local/state/sluice/trust.json"};
  f.config.files_read = {"/work/app/.mcp.json"};
  f.config.project_trust = {.path = "/work/app/.mcp.json", .sha256 = "ab", .state = state};
  f.config.servers.push_back(stdio_server("app", "node"));
  f.config.servers.back().source_file = "/work/app/.mcp.json";
  return f;
}

TEST(DoctorConfigFiles, AnUntrustedProjectFileFailsWithTheApproveCommand) {
  Files f = project_files(config::GatewayConfig::ProjectTrust::State::untrusted);
  std::vector<Check> checks = check_config_files(f.facts());
  const Check* c = find(checks, "config.trust");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_THAT(c->detail, HasSubstr("not approved"));
  EXPECT_EQ(c->fix, "sluice trust approve /work/app/.mcp.json");
  EXPECT_EQ(find(checks, "config.file", "/home/u/.local/state/sluice/trust.json"), nullptr);
}

TEST(DoctorConfigFiles, AProjectFileChangedSinceItsApprovalSaysSo) {
  Files f = project_files(config::GatewayConfig::ProjectTrust::State::untrusted);
  ConfigFacts facts = f.facts();
  facts.approvals = std::vector<config::TrustApproval>{{"/work/app/.mcp.json", "cd", 1}};
  const std::vector<Check> checks = check_config_files(facts);
  const Check* c = find(checks, "config.trust");
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_THAT(c->detail, HasSubstr("changed since it was approved"));
}

TEST(DoctorConfigFiles, AnApprovedProjectFileIsOk) {
  Files f = project_files(config::GatewayConfig::ProjectTrust::State::approved);
  std::vector<Check> checks = check_config_files(f.facts());
  EXPECT_EQ(find(checks, "config.trust")->status, Status::ok);
  EXPECT_EQ(tally(checks).fail, 0u);
  EXPECT_THAT(find(checks, "config.file", "/work/app/.mcp.json")->detail, HasSubstr("1 server"));
  EXPECT_THAT(find(checks, "config.file", "/home/u/.config/sluice/mcp.json")->detail,
              HasSubstr("not present"));
}

TEST(DoctorConfigFiles, AnUnreadableTrustFileFailsWithTheChmodThatFixesIt) {
  Files f = project_files(config::GatewayConfig::ProjectTrust::State::untrusted);
  ConfigFacts facts = f.facts();
  facts.approvals = core::make_error("the trust file is open to other users");
  const std::vector<Check> checks = check_config_files(facts);
  const Check* c = find(checks, "config.trust");
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_EQ(c->fix, "chmod 600 /home/u/.local/state/sluice/trust.json");
}

TEST(DoctorConfigFiles, ARejectedFileFailsWithTheParsersOwnMessage) {
  Files f;
  f.config.files_looked_for = {"/home/u/.mcp.json"};
  f.config.files_read = {"/home/u/.mcp.json"};
  f.config.files_rejected = {{"/home/u/.mcp.json", "invalid JSON at line 3, column 7"}};
  std::vector<Check> checks = check_config_files(f.facts());
  const Check* c = find(checks, "config.file", "/home/u/.mcp.json");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::fail);
  EXPECT_THAT(c->detail, HasSubstr("invalid JSON at line 3, column 7"));
  EXPECT_THAT(c->fix, HasSubstr("/home/u/.mcp.json"));
  EXPECT_EQ(find(checks, "config.servers")->status, Status::warn);  // nothing is served
}

// ---- Private directories ---------------------------------------------------------------

DirectoryFacts state(mode_t dir_mode) {
  DirectoryFacts f{.section = "State directory", .id = "state", .purpose = "the state directory"};
  f.me = 1000;
  f.dir = {.path = "/home/u/.local/state/sluice",
           .exists = true,
           .is_dir = true,
           .uid = 1000,
           .mode = dir_mode};
  return f;
}

TEST(DoctorDirectories, AStateDirectoryOpenToOthersFailsWithChmod700) {
  std::vector<Check> checks = check_private_directory(state(0755));
  EXPECT_EQ(checks[0].status, Status::fail);
  EXPECT_THAT(checks[0].detail, HasSubstr("0755"));
  EXPECT_EQ(checks[0].fix, "chmod 700 /home/u/.local/state/sluice");
  EXPECT_EQ(check_private_directory(state(0700))[0].status, Status::ok);
}

TEST(DoctorDirectories, AFileReadableByOthersFailsWithChmod600) {
  DirectoryFacts f = state(0700);
  f.files.push_back({.path = "/home/u/.local/state/sluice/trust.json",
                     .exists = true,
                     .is_regular = true,
                     .uid = 1000,
                     .mode = 0644});
  f.files.push_back({.path = "/home/u/.local/state/sluice/audit.jsonl",
                     .exists = true,
                     .is_regular = true,
                     .uid = 1000,
                     .mode = 0600});
  std::vector<Check> checks = check_private_directory(f);
  const Check* trust = find(checks, "state.file", "/home/u/.local/state/sluice/trust.json");
  EXPECT_EQ(trust->status, Status::fail);
  EXPECT_EQ(trust->fix, "chmod 600 /home/u/.local/state/sluice/trust.json");
  EXPECT_EQ(find(checks, "state.file", "/home/u/.local/state/sluice/audit.jsonl")->status,
            Status::ok);
}

TEST(DoctorDirectories, AnotherUsersDirectoryOrASymlinkFails) {
  DirectoryFacts theirs = state(0700);
  theirs.dir.uid = 0;
  EXPECT_EQ(check_private_directory(theirs)[0].status, Status::fail);
  DirectoryFacts link = state(0777);
  link.dir.is_dir = false;
  link.dir.is_symlink = true;
  EXPECT_THAT(check_private_directory(link)[0].detail, HasSubstr("symbolic link"));
}

TEST(DoctorDirectories, AMissingDirectoryIsOkWhenItCanBeCreated) {
  DirectoryFacts f = state(0);
  f.dir.exists = false;
  f.creatable = true;
  EXPECT_EQ(check_private_directory(f)[0].status, Status::ok);
  f.creatable = false;
  EXPECT_EQ(check_private_directory(f)[0].status, Status::fail);
}

// ---- HTTP port and binary --------------------------------------------------------------

TEST(DoctorPort, APortHeldByAnotherProgramFailsNamingItsPid) {
  PortFacts f{.port = 3344,
              .free = false,
              .bind_error = EADDRINUSE,
              .holder = 4242,
              .holder_exe = "/usr/bin/python3"};
  std::vector<Check> checks = check_http_port(f);
  EXPECT_EQ(checks[0].status, Status::fail);
  EXPECT_THAT(checks[0].detail, HasSubstr("pid 4242 (/usr/bin/python3)"));
  EXPECT_THAT(checks[0].fix, HasSubstr("--port 3345"));
}

TEST(DoctorPort, APortHeldBySluiceOrFreeIsOk) {
  PortFacts sluice{.free = false, .bind_error = EADDRINUSE, .holder = 7, .holder_is_sluice = true};
  EXPECT_EQ(check_http_port(sluice)[0].status, Status::ok);
  EXPECT_THAT(check_http_port(sluice)[0].detail, HasSubstr("sluice HTTP service (pid 7)"));
  EXPECT_EQ(check_http_port(PortFacts{.free = true})[0].status, Status::ok);
}

TEST(DoctorBinary, ASluiceRunningARemovedOrReplacedBinaryIsNamedWithWhatToRestart) {
  BinaryFacts f{.self = "/usr/bin/sluice", .on_path = "/usr/bin/sluice", .on_path_is_self = true};
  f.running.push_back({.pid = 11,
                       .exe = "/usr/bin/sluice",
                       .deleted = true,
                       .parent = 10,
                       .parent_name = "claude"});
  f.running.push_back({.pid = 12, .exe = "/usr/bin/sluice"});
  std::vector<Check> checks = check_binary(f);
  const Check* stale = find(checks, "binary.stale", "pid 11");
  ASSERT_NE(stale, nullptr);
  EXPECT_EQ(stale->status, Status::warn);
  EXPECT_THAT(stale->detail, HasSubstr("claude, pid 10"));
  EXPECT_THAT(stale->fix, HasSubstr("kill 11"));
  EXPECT_EQ(find(checks, "binary.stale", "pid 12"), nullptr);
  EXPECT_EQ(find(checks, "binary.path")->status, Status::ok);
}

TEST(DoctorBinary, NoSluiceOnPathWarns) {
  std::vector<Check> checks = check_binary(BinaryFacts{.self = "/tmp/b/sluice"});
  EXPECT_EQ(find(checks, "binary.path")->status, Status::warn);
  EXPECT_EQ(find(checks, "binary.stale")->status, Status::ok);
}

// ---- Report and settings ---------------------------------------------------------------

TEST(DoctorReport, EveryLineFitsEightyColumnsAndControlCharactersAreEscaped) {
  std::vector<Check> checks{{"Servers", "server.command", "evil\x1b[31mname", Status::fail,
                             "command " + std::string(120, 'x') +
                                 " is not found on PATH and a long sentence follows "
                                 "it so that it wraps over more than one line",
                             "install it"},
                            {"Servers", "server.cwd", "b", Status::ok, "fine", ""}};
  std::vector<Setting> settings{{"sluice.audit", std::string(70, 'v'), "/home/u/.mcp.json"}};
  const std::string report = human_report(checks, settings);
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), kReportWidth) << line;
  }
  EXPECT_THAT(report, Not(HasSubstr("\x1b")));
  EXPECT_THAT(report, HasSubstr("fix: install it"));
  EXPECT_THAT(report, HasSubstr("1 check failed, 0 warnings, 1 ok"));
}

TEST(DoctorReport, JsonIsByteExactWithNullForNoFix) {
  std::vector<Check> checks{{"Servers", "server.command", "e\x1b", Status::fail, "d", "f"},
                            {"Servers", "server.cwd", "b", Status::ok, "fine", ""}};
  const bj::value v = bj::parse(json_report(checks, {{"n", "v", "default"}}));
  const bj::array& rows = v.at("checks").as_array();
  EXPECT_EQ(rows[0].at("subject").as_string(), "e\x1b");  // not escaped for a terminal
  EXPECT_EQ(rows[0].at("status").as_string(), "fail");
  EXPECT_EQ(rows[0].at("fix").as_string(), "f");
  EXPECT_TRUE(rows[1].at("fix").is_null());
  EXPECT_EQ(v.at("summary").at("fail").as_int64(), 1);
  EXPECT_EQ(v.at("settings").as_array()[0].at("source").as_string(), "default");
}

std::string source_of(const std::vector<Setting>& settings, std::string_view name) {
  for (const Setting& s : settings) {
    if (s.name == name) return s.source;
  }
  return "(none)";
}

TEST(DoctorSettings, EachSettingNamesTheFirstFileThatSetsItAFlagOrTheDefault) {
  config::FilePolicy first, second;
  first.read_budget = 3;
  second.read_budget = 5;
  second.queue_size = 9;
  second.call_timeout = std::chrono::milliseconds(5000);
  SettingSources sources{{{"/a.json", first}, {"/b.json", second}},
                         {"--call-timeout-ms", "--max-message-bytes"}};
  const std::vector<Setting> settings =
      settings_of(core::Limits{}, config::GatewayPolicy{}, sources);
  EXPECT_EQ(source_of(settings, "sluice.readBudget"), "/a.json");
  EXPECT_EQ(source_of(settings, "sluice.queueSize"), "/b.json");
  EXPECT_EQ(source_of(settings, "sluice.callTimeoutMs"), "flag --call-timeout-ms");
  EXPECT_EQ(source_of(settings, "sluice.clientCap"), "default");
  EXPECT_EQ(source_of(settings, "limits.max_message_bytes"), "flag --max-message-bytes");
  EXPECT_EQ(source_of(settings, "limits.list_timeout"), "default");
}

}  // namespace
}  // namespace sluice::cli::doctor
