// The secrets store and environment hygiene through the real binary: `sluice secrets` reads a
// value from stdin and never shows one; a loose mode is refused with the fix; `${NAME}` from
// the store reaches only the server whose entry names it and appears in none of sluice's own
// output; sluice's environment does not reach a child; an entry that sets LD_PRELOAD is
// refused and its command never runs.
#include "harness.hpp"

#include "config/secrets_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Unique per run, so that a hit can only come from this test's input.
std::string secrets_sentinel(std::string_view what) {
  return "SENTINEL-" + std::string(what) + "-" + new_marker();
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

mode_t secrets_mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

// A scratch HOME whose XDG config directory is its own, for the whole test (sluice processes
// inherit the test's environment).
class Secrets : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("XDG_CONFIG_HOME")) saved_xdg_ = old;
    ::setenv("XDG_CONFIG_HOME", (tmp_.path() / "xdg").c_str(), 1);
  }
  void TearDown() override {
    if (saved_xdg_) {
      ::setenv("XDG_CONFIG_HOME", saved_xdg_->c_str(), 1);
    } else {
      ::unsetenv("XDG_CONFIG_HOME");
    }
  }

  fs::path store_dir() const { return tmp_.path() / "xdg" / "sluice"; }
  fs::path store_file() const { return store_dir() / "secrets.json"; }
  RunResult sluice(const std::vector<std::string>& args, const std::string& input = "") {
    return run_sluice(args, tmp_.path(), tmp_.path(), input);
  }

  TempDir tmp_;
  std::optional<std::string> saved_xdg_;
};

TEST_F(Secrets, SetReadsTheValueFromAPipeAndListAndRmShowOnlyNames) {
  const std::string value = secrets_sentinel("value");
  RunResult set = sluice({"secrets", "set", "API_TOKEN"}, value + "\n");
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_THAT(set.out + set.err, Not(HasSubstr(value)));
  EXPECT_EQ(secrets_mode_of(store_dir()), 0700);
  EXPECT_EQ(secrets_mode_of(store_file()), 0600);
  // One trailing newline is not part of the value.
  auto stored = config::SecretsStore(store_dir()).load();
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->at("API_TOKEN"), value);

  ASSERT_EQ(sluice({"secrets", "set", "OTHER"}, "x").exit_code, 0);
  RunResult list = sluice({"secrets", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "API_TOKEN\nOTHER\n");
  RunResult json = sluice({"secrets", "list", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  bj::value listed = bj::parse(json.out);
  EXPECT_EQ(bj::serialize(listed.at("names")), R"(["API_TOKEN","OTHER"])");
  EXPECT_THAT(list.out + list.err + json.out + json.err, Not(HasSubstr(value)));

  RunResult rm = sluice({"secrets", "rm", "API_TOKEN"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  RunResult again = sluice({"secrets", "rm", "API_TOKEN"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("no secret named API_TOKEN"));
  EXPECT_EQ(sluice({"secrets", "list"}).out, "OTHER\n");
}

TEST_F(Secrets, SetTakesNoValueFromTheCommandLineNoBadNameAndNoEmptyValue) {
  const std::string value = secrets_sentinel("argv");
  RunResult on_argv = sluice({"secrets", "set", "TOKEN", value}, "from-stdin\n");
  EXPECT_EQ(on_argv.exit_code, 2);
  EXPECT_THAT(on_argv.err, HasSubstr("read from stdin"));
  EXPECT_THAT(on_argv.out + on_argv.err, Not(HasSubstr(value)));
  RunResult as_option = sluice({"secrets", "set", "TOKEN", "--value=" + value}, "x\n");
  EXPECT_EQ(as_option.exit_code, 2);
  EXPECT_THAT(as_option.out + as_option.err, Not(HasSubstr(value)));
  RunResult bad_name = sluice({"secrets", "set", "1-BAD"}, "x\n");
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_THAT(bad_name.err, HasSubstr("[A-Za-z_][A-Za-z0-9_]*"));
  RunResult empty = sluice({"secrets", "set", "TOKEN"}, "\n");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("empty"));
  EXPECT_FALSE(fs::exists(store_file()));
}

TEST_F(Secrets, ALooseFileOrDirectoryIsRefusedWithTheFixAndNotRepaired) {
  const std::string value = secrets_sentinel("loose");
  ASSERT_EQ(sluice({"secrets", "set", "TOKEN"}, value).exit_code, 0);
  ASSERT_EQ(::chmod(store_file().c_str(), 0644), 0);
  RunResult list = sluice({"secrets", "list"});
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_THAT(list.err, HasSubstr("chmod 600 " + store_file().string()));
  RunResult set = sluice({"secrets", "set", "OTHER"}, "x");
  EXPECT_EQ(set.exit_code, 1);
  EXPECT_THAT(set.err, HasSubstr("chmod 600 " + store_file().string()));
  EXPECT_EQ(secrets_mode_of(store_file()), 0644);
  // A command that reads the configuration says why its secrets are not used.
  const fs::path config = tmp_.write("cfg.json", R"({"mcpServers":{}})");
  RunResult servers = sluice({"servers", "--no-discover", "--config", config.string()});
  EXPECT_THAT(servers.err, HasSubstr("chmod 600 " + store_file().string()));
  EXPECT_THAT(list.out + list.err + set.out + set.err + servers.out + servers.err,
              Not(HasSubstr(value)));

  ASSERT_EQ(::chmod(store_file().c_str(), 0600), 0);
  ASSERT_EQ(::chmod(store_dir().c_str(), 0755), 0);
  RunResult dir = sluice({"secrets", "list"});
  EXPECT_EQ(dir.exit_code, 1);
  EXPECT_THAT(dir.err, HasSubstr("chmod 700 " + store_dir().string()));
  EXPECT_EQ(secrets_mode_of(store_dir()), 0755);
}

// A server entry that runs the fixture through sh, writing its environment to `dump` first.
bj::object dumping_entry(const fs::path& dump, const std::string& marker, bj::object env) {
  env["SLUICE_FIXTURE_MARKER"] = marker;
  return bj::object{
      {"command", "/bin/sh"},
      {"args", bj::array{"-c", "env > \"$0\"; exec \"$1\"", dump.string(), FIXTURE_SERVER}},
      {"env", std::move(env)}};
}

TEST_F(Secrets, AStoredSecretReachesOnlyTheServerThatNamesItAndNoneOfSluicesOutput) {
  const std::string value = secrets_sentinel("secret");
  const std::string leak = secrets_sentinel("leak");
  ASSERT_EQ(sluice({"secrets", "set", "SERVICE_KEY"}, value + "\n").exit_code, 0);
  const std::string marker = new_marker();
  const fs::path uses = tmp_.path() / "uses.env";
  const fs::path other = tmp_.path() / "other.env";
  bj::object servers{
      {"uses", dumping_entry(uses, marker, bj::object{{"API_KEY", "${SERVICE_KEY}"}})},
      {"other", dumping_entry(other, marker, bj::object{})}};
  const fs::path config =
      tmp_.write("cfg.json", bj::serialize(bj::object{{"mcpServers", servers},
                                                      {"autoStart", bj::array{"uses", "other"}}}));

  ::setenv("SLUICE_TEST_LEAK", leak.c_str(), 1);
  std::string health;
  std::string err;
  {
    Sluice s({"serve", "--log-stderr", "--no-discover", "--config", config.string(), "--log-level",
              "trace"},
             tmp_.path(), tmp_.path());
    ::unsetenv("SLUICE_TEST_LEAK");
    s.initialize();
    ASSERT_TRUE(wait_file(uses));
    ASSERT_TRUE(wait_file(other));
    auto call =
        s.call_tool("gateway.invoke", R"({"tool_id":"uses::echo","arguments":{"text":"hi"}})");
    EXPECT_FALSE(is_error(call)) << text_of(call);
    health = bj::serialize(s.call_tool("gateway.health", "{}"));
    expect_clean_exit(s);
    s.join_stderr();
    err = s.stderr_text();
  }
  EXPECT_TRUE(wait_no_marker(marker, kGuard).empty());
  EXPECT_THAT(slurp(uses), HasSubstr("\nAPI_KEY=" + value + "\n"));
  EXPECT_THAT(slurp(other), Not(HasSubstr(value)));
  EXPECT_THAT(slurp(uses) + slurp(other), Not(HasSubstr(leak)));
  EXPECT_THAT(slurp(uses) + slurp(other), Not(HasSubstr("SLUICE_TEST_LEAK")));
  EXPECT_THAT(err + health, Not(HasSubstr(value)));

  RunResult listed = sluice({"servers", "--json", "--no-discover", "--config", config.string()});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out + listed.err, Not(HasSubstr(value)));
  EXPECT_TRUE(wait_no_marker(marker, kGuard).empty());
}

TEST_F(Secrets, AnEntryThatSetsLdPreloadIsRefusedByNameAndItsCommandNeverRuns) {
  const std::string value = secrets_sentinel("preload");
  const fs::path ran = tmp_.path() / "RAN_WITH_LD_PRELOAD";
  bj::object evil{{"command", "/bin/sh"},
                  {"args", bj::array{"-c", "touch \"$0\"", ran.string()}},
                  {"env", bj::object{{"LD_PRELOAD", "/nonexistent/" + value + ".so"}}}};
  const std::string marker = new_marker();
  const fs::path config = tmp_.write(
      "cfg.json",
      bj::serialize(bj::object{
          {"mcpServers", bj::object{{"evil", evil}, {"fine", bj::parse(fixture_entry(marker))}}},
          {"autoStart", bj::array{"evil"}}}));
  const std::vector<std::string> files{"--no-discover", "--config", config.string()};

  std::vector<std::string> probe{"servers", "--json", "--probe"};
  probe.insert(probe.end(), files.begin(), files.end());
  RunResult probed = sluice(probe);
  ASSERT_EQ(probed.exit_code, 0) << probed.err;
  EXPECT_THAT(probed.err, HasSubstr("server evil"));
  EXPECT_THAT(probed.err, HasSubstr("LD_PRELOAD"));
  bj::value rows = bj::parse(probed.out).at("servers");
  const bj::object& row = rows.as_array()[0].as_object();
  EXPECT_EQ(row.at("name"), "evil");
  EXPECT_EQ(row.at("status"), "failed");
  EXPECT_THAT(std::string(row.at("last_error").as_string()), HasSubstr("LD_PRELOAD"));
  EXPECT_EQ(rows.as_array()[1].at("status"), "online");  // the probe did start the other one

  std::string err;
  {
    std::vector<std::string> serve{"serve", "--log-stderr", "--log-level", "debug"};
    serve.insert(serve.end(), files.begin(), files.end());
    Sluice s(serve, tmp_.path(), tmp_.path());
    s.initialize();
    auto connect = s.call_tool("gateway.connect_server", R"({"server_name":"evil"})");
    EXPECT_TRUE(is_error(connect));
    EXPECT_THAT(text_of(connect), HasSubstr("LD_PRELOAD"));
    expect_clean_exit(s);
    s.join_stderr();
    err = s.stderr_text();
  }
  EXPECT_FALSE(fs::exists(ran));
  EXPECT_THAT(err + probed.out + probed.err, Not(HasSubstr(value)));
  EXPECT_TRUE(wait_no_marker(marker, kGuard).empty());
}

}  // namespace
}  // namespace sluice::test
