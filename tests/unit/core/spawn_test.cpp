// core::spawn, the one boundary every detached coroutine of sluice runs behind, and the
// source scan that keeps it the only way coroutines are started.
#include "core/spawn.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sluice::core {
namespace {
namespace asio = boost::asio;

asio::awaitable<void> throws_after_a_turn(asio::io_context& io, std::string secret) {
  co_await asio::post(io, asio::use_awaitable);
  throw std::runtime_error(secret);
}

asio::awaitable<void> counts(asio::io_context& io, int& n) {
  co_await asio::post(io, asio::use_awaitable);
  ++n;
}

TEST(Spawn, AnExceptionThatEndsACoroutineIsCountedCleanedUpAndTheLoopGoesOn) {
  asio::io_context io;
  const std::uint64_t before = coroutine_failures();
  int cleanups = 0;
  int finished = 0;
  spawn(io, throws_after_a_turn(io, "SENTINEL-spawn"), "a test coroutine", [&] { ++cleanups; });
  spawn(io, counts(io, finished), "a test coroutine");
  EXPECT_NO_THROW(io.run());
  EXPECT_EQ(coroutine_failures(), before + 1);
  EXPECT_EQ(cleanups, 1);
  EXPECT_EQ(finished, 1) << "the other coroutine on the loop still ran";
  // The loop is still usable for new work.
  io.restart();
  spawn(io, counts(io, finished), "a test coroutine");
  io.run();
  EXPECT_EQ(finished, 2);
}

TEST(Spawn, ACoroutineThatEndsNormallyIsNotCountedAndNotCleanedUp) {
  asio::io_context io;
  const std::uint64_t before = coroutine_failures();
  int cleanups = 0;
  int finished = 0;
  spawn(io, counts(io, finished), "a test coroutine", [&] { ++cleanups; });
  io.run();
  EXPECT_EQ(finished, 1);
  EXPECT_EQ(cleanups, 0);
  EXPECT_EQ(coroutine_failures(), before);
}

TEST(Spawn, AFunctionReturningTheCoroutineIsKeptAliveForItsWholeLife) {
  asio::io_context io;
  int finished = 0;
  std::string captured = "kept";
  spawn(
      io,
      [&io, &finished, captured]() -> asio::awaitable<void> {
        co_await asio::post(io, asio::use_awaitable);
        if (captured == "kept") ++finished;
      },
      "a test coroutine");
  io.run();
  EXPECT_EQ(finished, 1);
}

TEST(Spawn, TheReportNamesTheExceptionTypeNeverItsText) {
  std::exception_ptr e = std::make_exception_ptr(std::invalid_argument("SENTINEL-text"));
  EXPECT_EQ(exception_type(e), "std::invalid_argument");
  EXPECT_EQ(exception_type(std::make_exception_ptr(42)), "an exception of unknown type");
}

// Every `co_spawn(` in src/ outside core/spawn.hpp is a coroutine started without the
// boundary. Comments are ignored.
std::vector<std::string> unguarded_spawns(const std::string& text) {
  std::vector<std::string> found;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string code = line.substr(0, line.find("//"));
    if (code.find("co_spawn(") != std::string::npos ||
        code.find("asio::detached") != std::string::npos) {
      found.push_back(line);
    }
  }
  return found;
}

TEST(Spawn, TheScanFindsADetachedCoSpawn) {
  EXPECT_EQ(unguarded_spawns("  asio::co_spawn(io_, run(), asio::detached);\n").size(), 1u);
  EXPECT_EQ(unguarded_spawns("  boost::asio::co_spawn(io, f(), token);\n").size(), 1u);
  EXPECT_TRUE(unguarded_spawns("  core::spawn(io_, run(), \"x\");  // not co_spawn(\n").empty());
}

TEST(Spawn, EveryCoroutineInTheSourcesStartsBehindTheBoundary) {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(SLUICE_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src));
  std::vector<std::string> offenders;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    if (entry.path() == src / "core" / "spawn.hpp") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& line : unguarded_spawns(text.str())) {
      offenders.push_back(fs::relative(entry.path(), src).string() + ": " + line);
    }
  }
  std::string list;
  for (const auto& o : offenders) list += "\n  " + o;
  EXPECT_TRUE(offenders.empty()) << "start coroutines with core::spawn:" << list;
}

}  // namespace
}  // namespace sluice::core
