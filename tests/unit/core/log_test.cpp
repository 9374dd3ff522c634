// The log's targets (core/log.hpp): a file rotated by size, and two targets of which one
// cannot write. The log is process-wide: each test points it where it needs and back at stderr.
#include "core/log.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sluice::core {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string log_read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class LogTargets : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice-log-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  void TearDown() override {
    log::configure(log::Level::info, {.to_stderr = true});
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Waits (bounded) for the log's thread to have written `text` to `file`.
  static bool wait_written(const fs::path& file, const std::string& text) {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (log_read_text(file).find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);  // another thread's file write: no event to wait on
    }
    return true;
  }

  fs::path dir_;
};

TEST_F(LogTargets, AFileIsRotatedBySizeKeepingItsNewestPartsWhole) {
  const fs::path file = dir_ / "x.log";
  const std::uint64_t before = log::dropped();
  ASSERT_EQ(log::configure(log::Level::info, {.file = file.string(), .max_bytes = 1024, .keep = 2}),
            "");
  for (int i = 0; i < 60; ++i) log::info("line {:03} {}", i, std::string(40, 'e'));
  ASSERT_TRUE(wait_written(file, "line 059"));
  EXPECT_FALSE(fs::exists(dir_ / "x.log.3"));
  std::string all;
  for (const char* part : {"x.log.2", "x.log.1", "x.log"}) {
    ASSERT_TRUE(fs::exists(dir_ / part)) << part;
    EXPECT_LE(fs::file_size(dir_ / part), 1024u) << part;
    std::string text = log_read_text(dir_ / part);
    EXPECT_TRUE(text.ends_with("\n")) << part << ": lines are never split across parts";
    all += text;
  }
  // The newest lines, in order, none lost between the parts.
  std::istringstream lines(all);
  int previous = -1;
  for (std::string line; std::getline(lines, line);) {
    int n = std::stoi(line.substr(line.find("line ") + 5, 3));
    if (previous >= 0) {
      EXPECT_EQ(n, previous + 1);
    }
    previous = n;
  }
  EXPECT_EQ(previous, 59);
  EXPECT_EQ(log::dropped(), before);
}

TEST_F(LogTargets, ATargetThatCannotWriteDropsItsLinesWithoutHoldingBackTheOther) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  int saved = ::dup(2);
  ::dup2(pipe_fds[1], 2);  // the log's stderr target: this pipe
  ::close(pipe_fds[1]);
  std::string error = log::configure(log::Level::info, {.file = "/dev/full", .to_stderr = true});
  ::dup2(saved, 2);
  ::close(saved);
  ASSERT_EQ(error, "");
  const std::uint64_t before = log::dropped();
  log::warn("one for both targets");
  std::string seen;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (seen.find("one for both targets\n") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n > 0) seen.append(buf, static_cast<std::size_t>(n));
  }
  EXPECT_NE(seen.find(" warn: one for both targets\n"), std::string::npos) << seen;
  EXPECT_EQ(log::dropped(), before + 1) << "the full disk's drop is counted";
  log::configure(log::Level::info, {.to_stderr = true});
  ::close(pipe_fds[0]);
}

}  // namespace
}  // namespace sluice::core
