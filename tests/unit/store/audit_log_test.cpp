// The persistent audit log's writer and file: the queue is bounded and what it turns away is
// counted while the sink is stuck, destruction drains what is queued and leaves a stuck sink
// behind after its bound, and the file is made 0600, refused when open to others, rotated by
// size keeping N files, followed when another process rotates it, and given up on (counted)
// when a FIFO takes no more.
#include "store/audit_log.hpp"

#include "store_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sluice::store::test {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr auto kGuard = 20s;

// What a recording sink saw, shared with the test (the log owns the sink).
struct Seen {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> batches;
  std::size_t lines = 0;
  bool entered = false;  // a write is under way
  bool release = true;   // writes may finish

  bool wait(const std::function<bool()>& ready) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, kGuard, ready);
  }
  void set_release(bool value) {
    {
      std::lock_guard lock(mutex);
      release = value;
    }
    changed.notify_all();
  }
};

// A sink that records every batch and, while `release` is false, holds the writer in write().
class RecordingSink final : public AuditSink {
 public:
  explicit RecordingSink(std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {}
  std::string open() override { return ""; }
  std::size_t write(std::string_view lines, std::size_t count) override {
    std::unique_lock lock(seen_->mutex);
    seen_->entered = true;
    seen_->changed.notify_all();
    seen_->changed.wait(lock, [&] { return seen_->release; });
    seen_->batches.emplace_back(lines);
    seen_->lines += count;
    seen_->entered = false;
    seen_->changed.notify_all();
    return count;
  }
  std::string problem() const override { return ""; }

 private:
  std::shared_ptr<Seen> seen_;
};

AuditLogOptions immediate(std::size_t queue_bytes = kAuditQueueBytes) {
  AuditLogOptions o;
  o.queue_bytes = queue_bytes;
  o.coalesce = 0ms;
  return o;
}

// Waits (bounded) until the log's status says `pred`: the writer updates it after its sink
// returns, so there is no event of the sink's to block on.
bool wait_status(const AuditLog& log, const std::function<bool(const AuditLogStatus&)>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (!pred(log.status())) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::string line_of(char c, std::size_t bytes) { return std::string(bytes - 1, c) + "\n"; }

TEST(AuditLog, AFullQueueDropsAndCountsTheRecordsWhileTheSinkIsStuck) {
  auto seen = std::make_shared<Seen>();
  seen->release = false;
  AuditLog log(std::make_unique<RecordingSink>(seen), "test", immediate(100));
  log.append(line_of('a', 10));
  ASSERT_TRUE(seen->wait([&] { return seen->entered; })) << "the writer took the first line";
  for (int i = 0; i < 10; ++i) log.append(line_of('b', 10));  // exactly the queue's 100 bytes
  for (int i = 0; i < 3; ++i) log.append(line_of('c', 10));   // no room: dropped
  EXPECT_EQ(log.status().dropped, 3u);
  seen->set_release(true);
  ASSERT_TRUE(wait_status(log, [](const AuditLogStatus& s) { return s.written == 11; }));
  AuditLogStatus status = log.status();
  EXPECT_TRUE(status.active);
  EXPECT_EQ(status.written, 11u);
  EXPECT_EQ(status.dropped, 3u);
  EXPECT_EQ(status.write_errors, 0u);
}

TEST(AuditLog, DestructionWritesWhatIsQueuedEvenWhileTheWriterIsGathering) {
  auto seen = std::make_shared<Seen>();
  {
    AuditLogOptions o;
    o.coalesce = 1h;  // only the stop can end the gathering
    AuditLog log(std::make_unique<RecordingSink>(seen), "test", o);
    for (int i = 0; i < 5; ++i) log.append(line_of('x', 20));
  }
  std::lock_guard lock(seen->mutex);
  EXPECT_EQ(seen->lines, 5u);
  std::string all;
  for (const auto& b : seen->batches) all += b;
  EXPECT_EQ(all.size(), 100u);
}

TEST(AuditLog, AWriterStuckInItsSinkIsLeftBehindAfterTheDrainBound) {
  auto seen = std::make_shared<Seen>();
  seen->release = false;
  auto started = std::chrono::steady_clock::now();
  {
    AuditLogOptions o = immediate();
    o.drain_bound = 50ms;
    AuditLog log(std::make_unique<RecordingSink>(seen), "test", o);
    log.append(line_of('a', 10));
    ASSERT_TRUE(seen->wait([&] { return seen->entered; }));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s) << "the destructor did not wait on";
  seen->set_release(true);  // the detached writer finishes and frees what it owns
  EXPECT_TRUE(seen->wait([&] { return !seen->entered && seen->lines == 1; }));
}

// A sink whose open fails, as a refused file's does.
class RefusedSink final : public AuditSink {
 public:
  std::string open() override { return "refused for the test"; }
  std::size_t write(std::string_view, std::size_t) override { return 0; }
  std::string problem() const override { return ""; }
};

TEST(AuditLog, ASinkThatCannotOpenLeavesTheLogInactiveWithItsReason) {
  AuditLog log(std::make_unique<RefusedSink>(), "the-path", immediate());
  ASSERT_TRUE(wait_status(log, [](const AuditLogStatus& s) { return !s.problem.empty(); }));
  EXPECT_FALSE(log.accepting());
  log.append(line_of('a', 10));
  AuditLogStatus status = log.status();
  EXPECT_FALSE(status.active);
  EXPECT_EQ(status.path, "the-path");
  EXPECT_EQ(status.problem, "refused for the test");
  EXPECT_EQ(status.written, 0u);
}

// ---- The file -------------------------------------------------------------------------------

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string lines(char first, std::size_t count, std::size_t bytes) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += line_of(static_cast<char>(first + i), bytes);
  return out;
}

TEST(AuditFile, IsCreated0600WhateverTheUmaskInADirectoryMade0700) {
  TempDir dir;
  const auto path = dir.path() / "state" / "audit.jsonl";
  mode_t old = ::umask(0);
  auto sink = open_audit_file({path, 1u << 20, 5});
  std::string problem = sink->open();
  ::umask(old);
  ASSERT_EQ(problem, "");
  EXPECT_EQ(mode_of(path), 0600);
  EXPECT_EQ(mode_of(path.parent_path()), 0700);
  EXPECT_EQ(sink->write(lines('a', 2, 10), 2), 2u);
  EXPECT_EQ(read_all(path), lines('a', 2, 10));
}

TEST(AuditFile, AFileOpenToOthersIsRefusedWithTheChmodToRunAndLeftAlone) {
  TempDir dir;
  const auto path = dir.path() / "audit.jsonl";
  { std::ofstream(path) << "old\n"; }
  ::chmod(path.c_str(), 0644);
  auto sink = open_audit_file({path, 1u << 20, 5});
  std::string problem = sink->open();
  EXPECT_THAT(problem, HasSubstr("mode 0644"));
  EXPECT_THAT(problem, HasSubstr("chmod 600 " + path.string()));
  EXPECT_EQ(read_all(path), "old\n");
  EXPECT_EQ(mode_of(path), 0644);
}

TEST(AuditFile, ASymbolicLinkIsRefused) {
  TempDir dir;
  const auto target = dir.path() / "elsewhere";
  { std::ofstream(target) << ""; }
  ::chmod(target.c_str(), 0600);
  const auto path = dir.path() / "audit.jsonl";
  std::filesystem::create_symlink(target, path);
  auto sink = open_audit_file({path, 1u << 20, 5});
  EXPECT_THAT(sink->open(), HasSubstr("symbolic link"));
}

TEST(AuditFile, IsRotatedBeforeALineWouldPassItsSizeAndKeepsNFiles) {
  TempDir dir;
  const auto path = dir.path() / "audit.jsonl";
  auto sink = open_audit_file({path, 100, 2});  // two 40-byte lines a file
  ASSERT_EQ(sink->open(), "");
  EXPECT_EQ(sink->write(lines('a', 7, 40), 7), 7u);
  EXPECT_EQ(read_all(path), line_of('g', 40));
  EXPECT_EQ(read_all(path.string() + ".1"), line_of('e', 40) + line_of('f', 40));
  EXPECT_EQ(read_all(path.string() + ".2"), line_of('c', 40) + line_of('d', 40));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".3"));
  EXPECT_EQ(sink->rotations(), 3u);
  EXPECT_EQ(mode_of(path), 0600);
}

TEST(AuditFile, ALineLargerThanTheSizeGoesIntoAFileOfItsOwn) {
  TempDir dir;
  const auto path = dir.path() / "audit.jsonl";
  auto sink = open_audit_file({path, 100, 3});
  ASSERT_EQ(sink->open(), "");
  EXPECT_EQ(sink->write(line_of('a', 10) + line_of('b', 300) + line_of('c', 10), 3), 3u);
  EXPECT_EQ(read_all(path), line_of('c', 10));
  EXPECT_EQ(read_all(path.string() + ".1"), line_of('b', 300));
  EXPECT_EQ(read_all(path.string() + ".2"), line_of('a', 10));
}

TEST(AuditFile, ARotationByAnotherWriterIsFollowed) {
  TempDir dir;
  const auto path = dir.path() / "audit.jsonl";
  auto first = open_audit_file({path, 100, 3});
  auto second = open_audit_file({path, 100, 3});
  ASSERT_EQ(first->open(), "");
  ASSERT_EQ(second->open(), "");
  EXPECT_EQ(first->write(lines('a', 3, 40), 3), 3u);  // a, b, rotated, c
  EXPECT_EQ(second->write(line_of('z', 40), 1), 1u);
  EXPECT_EQ(read_all(path), line_of('c', 40) + line_of('z', 40));
  EXPECT_EQ(read_all(path.string() + ".1"), line_of('a', 40) + line_of('b', 40));
}

TEST(AuditFile, AFifoNobodyDrainsFailsTheWriteAfterItsWaitAndSaysSo) {
  TempDir dir;
  const auto path = dir.path() / "audit.fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  auto sink = open_audit_file({path, 100, 2});  // a FIFO is never rotated
  ASSERT_EQ(sink->open(), "");
  const std::size_t count = 4096;  // 1 MiB, far more than a pipe holds
  auto started = std::chrono::steady_clock::now();
  std::size_t done = sink->write(line_of('a', 256), 1);
  EXPECT_EQ(done, 1u);
  std::string many;
  for (std::size_t i = 0; i < count; ++i) many += line_of('m', 256);
  done = sink->write(many, count);
  EXPECT_LT(done, count);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_THAT(sink->problem(), HasSubstr("took no more lines"));
  EXPECT_EQ(sink->rotations(), 0u);
  ::close(reader);
}

TEST(AuditFile, AFifoWithNoReaderIsRefusedAtOnce) {
  TempDir dir;
  const auto path = dir.path() / "audit.fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto sink = open_audit_file({path, 100, 2});
  EXPECT_THAT(sink->open(), HasSubstr("FIFO that no process reads"));
}

}  // namespace
}  // namespace sluice::store::test
