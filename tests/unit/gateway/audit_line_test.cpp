// The audit ring's persistent lines: one JSON object per record with who, what, outcome,
// duration, generation and a wall-clock time; names escaped, nothing else carried; and every
// record the ring takes reaches the attached log as one line.
#include "gateway/audit.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>

namespace sluice::gateway {
namespace {
namespace bj = boost::json;
using namespace std::chrono_literals;

bj::object parsed(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  return bj::parse(line).as_object();
}

TEST(AuditLine, CarriesWhoWhatOutcomeDurationGenerationAndTheTime) {
  std::string line;
  append_audit_line(line, 1764620400123, {"call", "stdio", "fx", "echo", "completed", 12, 3});
  bj::object o = parsed(line);
  EXPECT_EQ(o.at("time"), "2025-12-01T20:20:00.123Z");
  EXPECT_EQ(o.at("unix_ms"), 1764620400123);
  EXPECT_EQ(o.at("pid"), ::getpid());
  EXPECT_EQ(o.at("kind"), "call");
  EXPECT_EQ(o.at("client"), "stdio");
  EXPECT_EQ(o.at("server"), "fx");
  EXPECT_EQ(o.at("tool"), "echo");
  EXPECT_EQ(o.at("outcome"), "completed");
  EXPECT_EQ(o.at("duration_ms"), 12);
  EXPECT_EQ(o.at("generation"), 3);
  EXPECT_EQ(o.size(), 10u) << "nothing but those fields";
}

TEST(AuditLine, EachLineCarriesItsOwnSecondAndMillisecond) {
  // The date is formatted once a second: lines within a second, across a second, across a
  // day and back again each carry their own time.
  const std::pair<std::int64_t, const char*> times[] = {
      {1764620400123, "2025-12-01T20:20:00.123Z"}, {1764620400999, "2025-12-01T20:20:00.999Z"},
      {1764620401000, "2025-12-01T20:20:01.000Z"}, {1764633599007, "2025-12-01T23:59:59.007Z"},
      {1764633600042, "2025-12-02T00:00:00.042Z"}, {1764620400123, "2025-12-01T20:20:00.123Z"},
      {1764620401001, "2025-12-01T20:20:01.001Z"}};
  for (const auto& [ms, text] : times) {
    std::string line;
    append_audit_line(line, ms, {"call", "stdio", "fx", "echo", "completed", 1, 1});
    bj::object o = parsed(line);
    EXPECT_EQ(o.at("time"), text) << ms;
    EXPECT_EQ(o.at("unix_ms"), ms);
  }
}

TEST(AuditLine, LeavesOutAnUnknownDurationAndAMissingTool) {
  std::string line;
  append_audit_line(line, 0, {"restart", "operator", "fx", "", "ok", -1, 2});
  bj::object o = parsed(line);
  EXPECT_FALSE(o.contains("tool"));
  EXPECT_FALSE(o.contains("duration_ms"));
  EXPECT_EQ(o.at("time"), "1970-01-01T00:00:00.000Z");
}

TEST(AuditLine, EscapesQuotesBackslashesAndControlCharactersInNames) {
  std::string line;
  const std::string tool =
      "a\"b\\c\nd\x01\x7f"
      "\xc3\xa9";
  append_audit_line(line, 0, {"call", "http#1", "fx", tool, "errored", 1, 1});
  EXPECT_EQ(parsed(line).at("tool").as_string(), tool);
  // An escape first, last, alone, or next to another; and none at all.
  for (std::string name : {"\"lead", "tail\\", "\n", "\"\"", "x\x1fy", "plain"}) {
    line.clear();
    append_audit_line(line, 0, {"call", "stdio", "fx", name, "ok", 1, 1});
    EXPECT_EQ(parsed(line).at("tool").as_string(), name) << line;
  }
}

// A sink that hands each batch to the test.
struct Lines {
  std::mutex mutex;
  std::condition_variable changed;
  std::string text;
};

class LinesSink final : public store::AuditSink {
 public:
  explicit LinesSink(std::shared_ptr<Lines> lines) : lines_(std::move(lines)) {}
  std::string open() override { return ""; }
  std::size_t write(std::string_view text, std::size_t count) override {
    std::lock_guard lock(lines_->mutex);
    lines_->text.append(text);
    lines_->changed.notify_all();
    return count;
  }
  std::string problem() const override { return ""; }

 private:
  std::shared_ptr<Lines> lines_;
};

TEST(AuditRing, EveryRecordAlsoReachesTheLogAsOneLine) {
  auto lines = std::make_shared<Lines>();
  store::AuditLogOptions options;
  options.coalesce = 0ms;
  store::AuditLog log(std::make_unique<LinesSink>(lines), "test", options);
  AuditRing ring(1, &log);  // the ring keeps one event; the log every one
  ring.record({"call", "stdio", "fx", "echo", "completed", 5, 1});
  ring.record({"refusal", "stdio", "fx", "echo", "denied by policy", -1, 1});
  std::unique_lock lock(lines->mutex);
  ASSERT_TRUE(lines->changed.wait_for(
      lock, 20s, [&] { return std::count(lines->text.begin(), lines->text.end(), '\n') == 2; }));
  const std::size_t cut = lines->text.find('\n') + 1;
  EXPECT_EQ(parsed(lines->text.substr(0, cut)).at("kind"), "call");
  EXPECT_EQ(parsed(lines->text.substr(cut)).at("outcome"), "denied by policy");
  EXPECT_EQ(ring.size(), 1u);
}

}  // namespace
}  // namespace sluice::gateway
