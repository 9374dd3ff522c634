// invariants §1 and the ds_* rows of §4 against the real binary: every child sluice
// starts is gone after its owner's teardown, whatever it does, and restarts follow the
// named paths (auto-restart with backoff, never after a foreign kill).
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;

// After a teardown, every process it created must be gone within this bound (beyond the
// graces: 0.5 s after closing stdin, 2 s after SIGTERM).
constexpr auto kTeardownBound = 5s;

std::size_t count_entries(const std::string& dir) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(d);
  }
  return n;
}

std::size_t fd_count(pid_t pid) { return count_entries("/proc/" + std::to_string(pid) + "/fd"); }
std::size_t thread_count(pid_t pid) {
  return count_entries("/proc/" + std::to_string(pid) + "/task");
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

bj::value server_row(Sluice& s, std::size_t i = 0) {
  return s.call_tool("gateway.health", "{}").at("structuredContent").at("servers").at(i);
}

// Polls health (each poll a full request/answer) until `pred` holds, within the guard.
template <class Pred>
bj::value wait_row(Sluice& s, Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  for (;;) {
    bj::value row = server_row(s);
    if (pred(row) || std::chrono::steady_clock::now() > deadline) return row;
  }
}

class Restarts : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& fixture_args = {}) {
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{"fx":)" +
                                           fixture_entry(marker_, fixture_args) + "}}");
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string(),
                                 "--restart-backoff-ms", "20", "--max-auto-restarts", "2"},
        dir_.path(), dir_.path());
    sluice_->initialize();
    auto c = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
    ASSERT_FALSE(is_error(c)) << text_of(c);
  }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kTeardownBound).empty());
  }
  bj::value crash() { return sluice_->call_tool("gateway.invoke", R"({"tool_id":"fx::crash"})"); }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(Restarts, AServerThatExitsIsRestartedAndTheCallIsNotReplayed) {
  start();
  auto r = crash();
  EXPECT_TRUE(is_error(r));
  EXPECT_NE(text_of(r).find("server fx"), std::string::npos) << text_of(r);
  auto row = wait_row(*sluice_, [](const bj::value& v) { return v.at("status") == "online"; });
  EXPECT_EQ(row.at("status"), "online");
  EXPECT_EQ(row.at("restarts"), 1);
  EXPECT_EQ(row.at("generation"), 2);
  auto echo = sluice_->call_tool("gateway.invoke",
                                 R"({"tool_id":"fx::echo","arguments":{"text":"again"}})");
  EXPECT_EQ(text_of(echo), "again");
  // Had the crashing call been replayed into the new process, it would have died again.
  EXPECT_EQ(server_row(*sluice_).at("restarts"), 1);
}

TEST_F(Restarts, AServerThatKeepsExitingIsLeftFailedAfterTheCap) {
  start();
  for (int i = 0; i < 2; ++i) {
    crash();
    auto row = wait_row(*sluice_, [](const bj::value& v) { return v.at("status") == "online"; });
    ASSERT_EQ(row.at("status"), "online") << i;
  }
  crash();
  auto row = wait_row(*sluice_, [](const bj::value& v) {
    return v.as_object().contains("held");
  });
  EXPECT_EQ(row.at("status"), "failed");
  EXPECT_EQ(row.at("held"), true);
  auto refused = sluice_->call_tool("gateway.invoke",
                                    R"({"tool_id":"fx::echo","arguments":{"text":"x"}})");
  EXPECT_TRUE(is_error(refused));
  EXPECT_NE(text_of(refused).find("gateway.restart_server"), std::string::npos);
  auto c = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  EXPECT_FALSE(is_error(c)) << text_of(c);
}

TEST_F(Restarts, AServerKilledByAForeignSignalIsNotRestartedSilently) {
  start();
  auto row = server_row(*sluice_);
  pid_t pid = static_cast<pid_t>(row.at("pid").as_int64());
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  row = wait_row(*sluice_, [](const bj::value& v) {
    return v.as_object().contains("external_signal");
  });
  EXPECT_EQ(row.at("status"), "failed");
  EXPECT_EQ(row.at("external_signal"), SIGKILL);
  EXPECT_EQ(row.at("restarts"), 0);
  auto refused = sluice_->call_tool("gateway.invoke",
                                    R"({"tool_id":"fx::echo","arguments":{"text":"x"}})");
  EXPECT_TRUE(is_error(refused));
  auto c = sluice_->call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  EXPECT_FALSE(is_error(c)) << text_of(c);
  row = server_row(*sluice_);
  EXPECT_EQ(row.at("status"), "online");
  EXPECT_FALSE(row.as_object().contains("external_signal"));
}

TEST_F(Restarts, DescendantsThatLeftTheGroupGoWithTheirServer) {
  start({"--mode=grandchild-setsid"});
  auto before = processes_with_marker(marker_);
  ASSERT_GE(before.size(), 2u) << "the server and its setsid grandchild";
  crash();
  auto deadline = std::chrono::steady_clock::now() + kTeardownBound;
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    gone = std::none_of(before.begin(), before.end(), alive);
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the first generation's processes outlived its teardown";
}

TEST(Signals, ASignalInheritedAsIgnoredStaysIgnored) {
  TempDir dir;
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGHUP, &ignore, &previous);  // as nohup does; the child inherits it
  Sluice s({"serve", "--no-discover"}, dir.path(), dir.path());
  ::sigaction(SIGHUP, &previous, nullptr);
  s.initialize();
  s.signal(SIGHUP);
  // Still serving after the SIGHUP (a ping round trip is ordered after its delivery).
  EXPECT_TRUE(s.request("ping", "").at("result").is_object());
  EXPECT_FALSE(s.wait_exit(200ms).has_value());
  s.signal(SIGTERM);
  EXPECT_EQ(s.wait_exit(), 0);
}

std::uint64_t bytes_read(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/io");
  std::string key;
  std::uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

std::uint64_t peak_rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

TEST(StderrFlood, AGibibyteOfStderrKeepsMemoryBoundedAndOtherServersAnswering) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = dir.write(".mcp.json", R"({"mcpServers":{"flood":)" +
                                        fixture_entry(marker, {"--mode=flood-stderr"}) +
                                        R"(,"fx":)" + fixture_entry(marker) +
                                        R"(},"autoStart":["flood","fx"]})");
  {
    Sluice s({"serve", "--no-discover", "--config", cfg.string()}, dir.path(), dir.path());
    s.initialize();
    constexpr std::uint64_t kGiB = 1ull << 30;
    std::uint64_t calls = 0;
    auto deadline = std::chrono::steady_clock::now() + 120s;
    while (bytes_read(s.pid()) < kGiB && std::chrono::steady_clock::now() < deadline) {
      auto r = s.call_tool("gateway.invoke",
                           R"({"tool_id":"fx::echo","arguments":{"text":"still here"}})");
      ASSERT_EQ(text_of(r), "still here");
      ++calls;
    }
    EXPECT_GE(bytes_read(s.pid()), kGiB) << "the flood did not reach 1 GiB within the guard";
    EXPECT_GT(calls, 0u);
    std::uint64_t peak = peak_rss_kib(s.pid());
#if defined(__SANITIZE_ADDRESS__)
    // ASan's shadow memory and quarantine dominate RSS there; the bound is asserted by the
    // normal build, where sluice's own memory is what is measured.
    (void)peak;
#else
    EXPECT_LT(peak, 64u * 1024u) << "peak RSS " << peak << " KiB";
#endif
    RecordProperty("peak_rss_kib", std::to_string(peak));
    RecordProperty("calls_during_flood", std::to_string(calls));
    std::printf("stderr flood: %llu bytes read, peak RSS %llu KiB, %llu calls answered\n",
                static_cast<unsigned long long>(bytes_read(s.pid())),
                static_cast<unsigned long long>(peak), static_cast<unsigned long long>(calls));
    s.close_stdin();
    EXPECT_EQ(s.wait_exit(), 0);
  }
  EXPECT_TRUE(wait_no_marker(marker, kTeardownBound).empty());
}

// The hostile table (invariant P6): every owner of a child x every behaviour.
enum class Owner { auto_start_then_eof, connect_then_sigterm, connect_then_sigint,
                   connect_then_sighup, failed_handshake, one_shot_call };

struct Row {
  Owner owner;
  const char* behaviour;
};

void PrintTo(const Row& row, std::ostream* os) {
  *os << "owner " << static_cast<int>(row.owner) << ", " << row.behaviour;
}

class HostileTable : public ::testing::TestWithParam<Row> {};

TEST_P(HostileTable, NoProcessFdOrThreadOutlivesTheTeardown) {
  const Row row = GetParam();
  TempDir dir;
  std::string marker = new_marker();
  std::vector<std::string> args{std::string("--mode=") + row.behaviour};
  // A handshake that fails for every behaviour: the fixture offers no revision sluice speaks.
  if (row.owner == Owner::failed_handshake) args.push_back("--protocol-versions=1999-01-01");
  std::string auto_start = row.owner == Owner::auto_start_then_eof ? R"(,"autoStart":["fx"])" : "";
  auto cfg = dir.write(".mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker, args) + "}" +
                                        auto_start + "}");
  if (row.owner == Owner::one_shot_call) {
    // `sluice call`: the whole gateway is the owner; its exit is the teardown.
    auto r = run_sluice({"call", "fx::echo", "--args", R"({"text":"x"})", "--no-discover",
                         "--config", cfg.string(), "--initialize-timeout-ms", "1000"},
                        dir.path(), dir.path());
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code;
    EXPECT_TRUE(wait_no_marker(marker, kTeardownBound).empty());
    return;
  }
  Sluice s({"serve", "--no-discover", "--config", cfg.string(), "--initialize-timeout-ms",
            "1000", "--log-level", "warn"},
           dir.path(), dir.path());
  s.initialize();
  // A search of no server waits for the catalog cache's load: the cache's files are open
  // (they are the gateway's, not a child's) before the fds are counted.
  s.call_tool("gateway.catalog_search", R"({"filters":{"server":"no-such-server"}})");
  std::size_t fds_before = fd_count(s.pid());
  // The loop's thread, the log's writer thread (core/log.hpp) and the catalog store's worker
  // (store/catalog_store.hpp); no thread per child.
  std::size_t threads_before = thread_count(s.pid());
  if (row.owner == Owner::auto_start_then_eof) {
    wait_row(s, [](const bj::value& v) {
      return v.at("status") != "starting" && v.at("status") != "lazy";
    });
  } else {
    s.call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  }
  if (row.owner == Owner::failed_handshake) {
    // The owner is the failed start itself; sluice keeps serving.
    EXPECT_EQ(server_row(s).at("status"), "failed");
    EXPECT_TRUE(wait_no_marker(marker, kTeardownBound).empty());
    EXPECT_EQ(fd_count(s.pid()), fds_before);
    EXPECT_EQ(thread_count(s.pid()), threads_before);
    EXPECT_TRUE(s.request("ping", "").at("result").is_object());
    s.close_stdin();
    EXPECT_EQ(s.wait_exit(), 0);
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  switch (row.owner) {
    case Owner::auto_start_then_eof: s.close_stdin(); break;
    case Owner::connect_then_sigterm: s.signal(SIGTERM); break;
    case Owner::connect_then_sigint: s.signal(SIGINT); break;
    default: s.signal(SIGHUP); break;
  }
  EXPECT_EQ(s.wait_exit(), 0);
  auto teardown_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - t0);
  RecordProperty("teardown_ms", std::to_string(teardown_ms.count()));
  std::printf("teardown %s: %lld ms\n", row.behaviour,
              static_cast<long long>(teardown_ms.count()));
  EXPECT_TRUE(wait_no_marker(marker, kTeardownBound).empty());
}

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  for (Owner o : {Owner::auto_start_then_eof, Owner::connect_then_sigterm,
                  Owner::connect_then_sigint, Owner::connect_then_sighup,
                  Owner::failed_handshake, Owner::one_shot_call}) {
    for (const char* b : {"grandchild-holds-pipes", "exit-at-once", "flood-stdout",
                          "flood-stderr", "grandchild-setsid", "ignore-sigterm",
                          "never-initialize", "garbage"}) {
      rows.push_back({o, b});
    }
  }
  return rows;
}

std::string row_name(const ::testing::TestParamInfo<Row>& info) {
  static const char* owners[] = {"AutoStartThenEof", "ConnectThenSigterm", "ConnectThenSigint",
                                 "ConnectThenSighup", "FailedHandshake", "OneShotCall"};
  std::string b;
  bool upper = true;
  for (const char* c = info.param.behaviour; *c; ++c) {
    if (*c == '-') {
      upper = true;
      continue;
    }
    b += upper ? static_cast<char>(std::toupper(*c)) : *c;
    upper = false;
  }
  return std::string(owners[static_cast<int>(info.param.owner)]) + "_" + b;
}

INSTANTIATE_TEST_SUITE_P(P6, HostileTable, ::testing::ValuesIn(all_rows()), row_name);

}  // namespace
}  // namespace sluice::test
