// The persistent audit log through the real binary: calls and governance actions of
// `sluice serve` (stdio and HTTP) and `sluice call` are JSON lines in a 0600 file with who,
// what, outcome, duration, generation and time, and never an argument or a result; the file
// is rotated at its size keeping N files; a file sluice may not use leaves it serving, with
// health saying why; and a file that takes no more costs dropped records, never calls.
#include "harness.hpp"
#include "http_fixture.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr const char* kArgSentinel = "AUDIT-ARG-SENTINEL-5c1e";

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<bj::object> records_in(const fs::path& p) {
  std::vector<bj::object> out;
  std::istringstream in(read_all(p));
  for (std::string line; std::getline(in, line);) {
    boost::system::error_code ec;
    bj::value v = bj::parse(line, ec);
    EXPECT_FALSE(ec) << "not a JSON line in " << p << ": " << line;
    if (!ec) out.push_back(v.as_object());
  }
  return out;
}

const bj::object* find_record(const std::vector<bj::object>& records, std::string_view kind,
                              std::string_view tool = "") {
  for (const auto& r : records) {
    if (r.at("kind").as_string() != kind) continue;
    if (!tool.empty() && (!r.contains("tool") || r.at("tool").as_string() != tool)) continue;
    return &r;
  }
  return nullptr;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string echo_args(const std::string& text) {
  return R"({"tool_id":"fx::echo","arguments":{"text":")" + text + R"("}})";
}

class PersistentAudit : public ::testing::Test {
 protected:
  // sluice serve over stdio with the fixture as `fx`; `sluice_settings` is the top-level
  // "sluice" object.
  void start(const std::string& sluice_settings = "{}", std::vector<std::string> flags = {}) {
    cfg_ = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker_) +
                                           R"(},"sluice":)" + sluice_settings + "}");
    std::vector<std::string> args{"serve", "--no-discover", "--config", cfg_.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    sluice_ = std::make_unique<Sluice>(args, dir_.path(), dir_.path());
    sluice_->initialize();
  }
  void stop() {
    expect_clean_exit(*sluice_);
    sluice_->join_stderr();
    EXPECT_EQ(sluice_->stderr_text().find(kArgSentinel), std::string::npos);
    sluice_.reset();
  }
  void TearDown() override {
    if (sluice_) stop();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  // Asks health until `pred` holds of its audit_log (the writer reports after each batch, on
  // its own thread: there is no event to wait on), at most the guard; the last answer.
  bj::object audit_health_when(const std::function<bool(const bj::object&)>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + kGuard;
    bj::object health = audit_health();
    while (!pred(health) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
      health = audit_health();
    }
    return health;
  }
  bj::object audit_health() {
    return sluice_->call_tool("gateway.health", "{}")
        .at("structuredContent")
        .at("audit_log")
        .as_object();
  }
  // The default file: the state directory under the test's own HOME.
  fs::path default_file() const { return dir_.path() / ".local/state/sluice/audit.jsonl"; }

  TempDir dir_;
  std::string marker_ = new_marker();
  fs::path cfg_;
  std::unique_ptr<Sluice> sluice_;
};

TEST_F(PersistentAudit, ACallAndARestartAreRecordedWithTheirFieldsAndNeverTheirValues) {
  start();
  auto call = sluice_->call_tool("gateway.invoke", echo_args(kArgSentinel));
  ASSERT_FALSE(is_error(call)) << text_of(call);
  EXPECT_THAT(text_of(call), HasSubstr(kArgSentinel)) << "the result carries the sentinel";
  auto restart = sluice_->call_tool("gateway.restart_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(restart)) << text_of(restart);
  bj::object health = audit_health();
  EXPECT_EQ(health.at("active"), true) << bj::serialize(health);
  EXPECT_EQ(health.at("path").as_string(), default_file().string());
  stop();

  const fs::path file = default_file();
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(mode_of(file), 0600);
  const std::string text = read_all(file);
  EXPECT_EQ(text.find(kArgSentinel), std::string::npos) << "an argument or result leaked:\n"
                                                        << text;
  auto records = records_in(file);
  const bj::object* c = find_record(records, "call", "echo");
  ASSERT_NE(c, nullptr) << text;
  EXPECT_EQ(c->at("client"), "stdio");
  EXPECT_EQ(c->at("server"), "fx");
  EXPECT_EQ(c->at("outcome"), "completed");
  EXPECT_EQ(c->at("generation"), 1);
  EXPECT_GE(c->at("duration_ms").as_int64(), 0);
  EXPECT_GT(c->at("unix_ms").as_int64(), 1700000000000);
  EXPECT_EQ(c->at("time").as_string().back(), 'Z');
  const bj::object* r = find_record(records, "restart");
  ASSERT_NE(r, nullptr) << text;
  EXPECT_EQ(r->at("client"), "operator");
  EXPECT_EQ(r->at("server"), "fx");
  EXPECT_EQ(r->at("generation"), 2) << "the new generation";
}

TEST_F(PersistentAudit, SluiceCallWritesItsRecordToTheConfiguredFile) {
  const fs::path file = dir_.path() / "logs" / "calls.jsonl";
  cfg_ = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker_) +
                                         R"(},"sluice":{"audit":{"file":")" + file.string() +
                                         R"("}}})");
  RunResult run = run_sluice(
      {"call", "fx::echo", "--args", std::string(R"({"text":")") + kArgSentinel + R"("})",
       "--no-discover", "--config", cfg_.string()},
      dir_.path(), dir_.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(kArgSentinel));
  ASSERT_TRUE(fs::exists(file)) << run.err;
  EXPECT_EQ(mode_of(file), 0600);
  EXPECT_EQ(read_all(file).find(kArgSentinel), std::string::npos);
  auto records = records_in(file);
  const bj::object* c = find_record(records, "call", "echo");
  ASSERT_NE(c, nullptr) << read_all(file);
  EXPECT_EQ(c->at("client"), "cli");
  EXPECT_EQ(c->at("outcome"), "completed");
  EXPECT_FALSE(fs::exists(default_file())) << "the configured file replaces the default";
}

TEST_F(PersistentAudit, TheFileIsRotatedAtItsSizeAndKeepsTheConfiguredNumberOfFiles) {
  const fs::path file = dir_.path() / "audit" / "a.jsonl";
  start(R"({"audit":{"maxBytes":4096,"keep":2}})", {"--audit-log", file.string()});
  // Each call record is about 200 bytes: 80 calls fill four files of 4 KiB.
  for (int i = 0; i < 80; ++i) {
    auto call = sluice_->call_tool("gateway.invoke", echo_args("r" + std::to_string(i)));
    ASSERT_FALSE(is_error(call)) << text_of(call);
  }
  bj::object health =
      audit_health_when([](const bj::object& h) { return h.at("written").as_int64() >= 80; });
  EXPECT_GE(health.at("rotations").as_int64(), 3) << bj::serialize(health);
  stop();
  for (const fs::path& p : {file, fs::path(file.string() + ".1"), fs::path(file.string() + ".2")}) {
    ASSERT_TRUE(fs::exists(p)) << p;
    EXPECT_LE(fs::file_size(p), 4096u) << p;
    EXPECT_EQ(mode_of(p), 0600) << p;
    EXPECT_FALSE(records_in(p).empty()) << p;
  }
  EXPECT_FALSE(fs::exists(file.string() + ".3")) << "only two rotated files are kept";
  // The newest records are in the live file, the older ones in .1.
  auto newest = records_in(file);
  auto older = records_in(file.string() + ".1");
  EXPECT_LT(older.back().at("unix_ms").as_int64(), newest.back().at("unix_ms").as_int64() + 1);
}

TEST_F(PersistentAudit, AFileOpenToOthersLeavesSluiceServingAndHealthSaysWhatToRun) {
  const fs::path file = default_file();
  fs::create_directories(file.parent_path());
  { std::ofstream(file) << "kept\n"; }
  ::chmod(file.c_str(), 0644);
  start();
  auto call = sluice_->call_tool("gateway.invoke", echo_args("still-serving"));
  ASSERT_FALSE(is_error(call)) << text_of(call);
  EXPECT_EQ(text_of(call), "still-serving");
  bj::object health = audit_health();
  EXPECT_EQ(health.at("active"), false);
  EXPECT_THAT(std::string(health.at("problem").as_string()),
              HasSubstr("chmod 600 " + file.string()));
  stop();
  EXPECT_EQ(read_all(file), "kept\n") << "a refused file is left alone";
}

TEST_F(PersistentAudit, APathThatCannotBeMadeLeavesSluiceServingAndIsReported) {
  dir_.write("not-a-dir", "a file where a directory should be\n");
  start("{}", {"--audit-log", (dir_.path() / "not-a-dir" / "audit.jsonl").string()});
  auto call = sluice_->call_tool("gateway.invoke", echo_args("still-serving"));
  ASSERT_FALSE(is_error(call)) << text_of(call);
  bj::object health = audit_health();
  EXPECT_EQ(health.at("active"), false);
  EXPECT_THAT(std::string(health.at("problem").as_string()), HasSubstr("cannot"));
}

TEST_F(PersistentAudit, FileFalseTurnsTheLogOffAndHealthSaysSo) {
  start(R"({"audit":{"file":false}})");
  auto call = sluice_->call_tool("gateway.invoke", echo_args("x"));
  ASSERT_FALSE(is_error(call)) << text_of(call);
  bj::object health = audit_health();
  EXPECT_EQ(health.at("active"), false);
  EXPECT_THAT(std::string(health.at("problem").as_string()), HasSubstr("sluice.audit.file"));
  stop();
  EXPECT_FALSE(fs::exists(default_file()));
}

TEST_F(PersistentAudit, AFileThatTakesNoMoreCostsDroppedRecordsNeverCalls) {
  // A FIFO whose reader never reads: the pipe fills, then every write waits and fails.
  const fs::path fifo = dir_.path() / "audit.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  start("{}", {"--audit-log", fifo.string()});
  std::int64_t dropped = 0;
  int calls = 0;
  while (dropped == 0 && calls < 20000) {
    for (int i = 0; i < 100; ++i, ++calls) {
      auto call = sluice_->call_tool("gateway.invoke", echo_args("c"));
      ASSERT_FALSE(is_error(call)) << text_of(call);
    }
    dropped = audit_health().at("dropped").as_int64();
  }
  bj::object health =
      audit_health_when([](const bj::object& h) { return h.at("write_errors").as_int64() > 0; });
  EXPECT_GT(health.at("dropped").as_int64(), 0) << bj::serialize(health);
  EXPECT_EQ(health.at("active"), true);
  EXPECT_GT(health.at("write_errors").as_int64(), 0);
  ASSERT_TRUE(health.contains("problem")) << bj::serialize(health);
  EXPECT_THAT(std::string(health.at("problem").as_string()), HasSubstr("took no more lines"));
  auto metrics_call = sluice_->call_tool("gateway.invoke", echo_args("after"));
  EXPECT_EQ(text_of(metrics_call), "after") << "calls still complete";
  stop();  // exits 0 within its bounds though the FIFO is still full
  ::close(reader);
}

class AuditOverHttp : public HttpFrontEnd {};

TEST_F(AuditOverHttp, AnHttpSessionsCallIsRecordedWithItsClientLabel) {
  start();
  sentinels_.insert(kArgSentinel);
  auto sid = initialize();
  ASSERT_FALSE(sid.empty());
  auto call = post(invoke_echo("\"a1\"", kArgSentinel), headers(sid));
  ASSERT_EQ(call.status, 200) << call.all();
  auto metrics = exchange("GET", "/metrics", headers());
  EXPECT_THAT(metrics.body, HasSubstr("sluice_audit_log_active 1"));
  EXPECT_THAT(metrics.body, HasSubstr("sluice_audit_log_records_total{outcome=\"dropped\"} 0"));
  stop_and_expect_clean_exit();
  const fs::path file = dir_.path() / "state" / "audit.jsonl";
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(read_all(file).find(kArgSentinel), std::string::npos);
  auto records = records_in(file);
  const bj::object* c = find_record(records, "call", "echo");
  ASSERT_NE(c, nullptr) << read_all(file);
  EXPECT_THAT(std::string(c->at("client").as_string()), HasSubstr("http"));
}

}  // namespace
}  // namespace sluice::test
