// A Downstream over a real child in simulated time: a child that exits by itself is restarted
// when the backoff has passed in simulated time and not before, and one killed by a signal
// sluice did not send is held until an operator starts it.
#include "gateway/downstream/downstream.hpp"

#include "../run_until.hpp"
#include "core/clock.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace sluice::gateway {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A minimal MCP server in sh, of the 2025 era: answers the server/discover probe (id 1) with
// "method not found", initialize (id 2) and tools/list (id 3), then runs `tail` (what it does
// once online).
std::string downstream_lifecycle_server_script(const std::string& tail) {
  return "read -r line; "
         "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
         "\"message\":\"Method not found\"}}'; "
         "read -r line; "
         "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":"
         "\"2025-03-26\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"t\","
         "\"version\":\"1\"}}}'; "
         "read -r line; read -r line; "
         "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":"
         "\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}}'; " +
         tail;
}

class DownstreamLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice-ds-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    limits_.stdin_close_grace = 50ms;
  }
  void TearDown() override {
    if (downstream_) {
      bool done = false;
      asio::co_spawn(
          io_,
          [&]() -> asio::awaitable<void> {
            co_await downstream_->shutdown();
            done = true;
          },
          asio::detached);
      EXPECT_TRUE(run_advancing([&] { return done; }));
      downstream_.reset();
    }
    fs::remove_all(dir_);
  }
  void make(const std::string& tail) {
    config::ServerConfig server;
    server.name = "t";
    server.transport =
        config::StdioServer{"/bin/sh", {"-c", downstream_lifecycle_server_script(tail)}, {}, {}};
    server.source_file = (dir_ / ".mcp.json").string();
    downstream_ = std::make_unique<Downstream>(io_, server, limits_, policy_, DownstreamEvents{});
  }
  template <class Pred>
  bool run_until(Pred done) {
    return test::run_until(io_, done);
  }
  // The same, advancing simulated time 10 ms a turn: for the graces of a teardown.
  template <typename Pred>
  bool run_advancing(Pred done) {
    return run_until([&] {
      sim_.advance(10ms);
      return done();
    });
  }
  void run_for(std::chrono::milliseconds real) {
    io_.restart();
    io_.run_for(real);
  }
  std::optional<bool> ensure_started(bool explicit_request) {
    std::optional<bool> result;
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          result = co_await downstream_->ensure_started(explicit_request);
        },
        asio::detached);
    EXPECT_TRUE(run_until([&] { return result.has_value(); }));
    return result;
  }

  core::SimulatedTime sim_;
  fs::path dir_;
  core::Limits limits_;
  config::GatewayPolicy policy_;
  asio::io_context io_;
  std::unique_ptr<Downstream> downstream_;
};

TEST_F(DownstreamLifecycle, AChildThatExitsByItselfIsRestartedWhenTheBackoffHasPassed) {
  const fs::path flag = dir_ / "exit-now";
  make("while [ ! -e '" + flag.string() + "' ]; do sleep 0.01; done; exit 3");
  ASSERT_EQ(ensure_started(false), true);
  EXPECT_EQ(downstream_->generation(), 1u);
  ASSERT_EQ(downstream_->tools().size(), 1u);

  std::ofstream(flag).put('x');
  ASSERT_TRUE(run_until(
      [&] { return downstream_->phase() == Phase::restarting && downstream_->pid() == -1; }));
  fs::remove(flag);  // the next run stays up

  run_for(50ms);  // real time passes; simulated time stands still
  EXPECT_EQ(downstream_->phase(), Phase::restarting);
  EXPECT_EQ(downstream_->restarts(), 0u);
  sim_.advance(249ms);
  run_for(50ms);
  EXPECT_EQ(downstream_->restarts(), 0u) << "restarted before the 250 ms backoff passed";
  sim_.advance(1ms);
  ASSERT_TRUE(run_until([&] { return downstream_->phase() == Phase::online; }));
  EXPECT_EQ(downstream_->restarts(), 1u);
  EXPECT_EQ(downstream_->generation(), 2u);
  EXPECT_FALSE(downstream_->held());
}

TEST_F(DownstreamLifecycle, AKillSluiceDidNotSendHoldsTheServerUntilAnExplicitStart) {
  make("exec sleep 100");
  ASSERT_EQ(ensure_started(false), true);
  ASSERT_EQ(::kill(downstream_->pid(), SIGTERM), 0);
  ASSERT_TRUE(run_until([&] { return downstream_->held(); }));
  EXPECT_EQ(downstream_->phase(), Phase::failed);
  EXPECT_EQ(downstream_->external_signal(), SIGTERM);

  sim_.advance(60s);  // no backoff brings it back
  run_for(50ms);
  EXPECT_EQ(downstream_->phase(), Phase::failed);
  EXPECT_EQ(downstream_->restarts(), 0u);
  EXPECT_EQ(ensure_started(false), false) << "a call does not start a held server";

  EXPECT_EQ(ensure_started(true), true) << "an operator's connect does";
  EXPECT_EQ(downstream_->external_signal(), 0);
  EXPECT_FALSE(downstream_->held());
  EXPECT_EQ(downstream_->generation(), 2u);
}

TEST_F(DownstreamLifecycle, AStopTearsTheChildDownAndHoldsTheServerOffline) {
  make("exec sleep 100");
  ASSERT_EQ(ensure_started(false), true);
  pid_t pid = downstream_->pid();
  bool stopped = false;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        co_await downstream_->stop("stopped by the test");
        stopped = true;
      },
      asio::detached);
  ASSERT_TRUE(run_advancing([&] { return stopped; }));
  EXPECT_EQ(downstream_->phase(), Phase::offline);
  EXPECT_EQ(downstream_->last_error(), "stopped by the test");
  EXPECT_EQ(downstream_->pid(), -1);
  EXPECT_TRUE(::kill(pid, 0) != 0 && errno == ESRCH) << "the child was reaped";
  EXPECT_EQ(ensure_started(false), false);
  EXPECT_EQ(ensure_started(true), true);
}

}  // namespace
}  // namespace sluice::gateway
