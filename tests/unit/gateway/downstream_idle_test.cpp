// Idle shutdown (ds_idle_stop) of a Downstream over a real child, in simulated time: a server
// idle for its timeout is stopped to idle_stopped and not before; a pending call, a
// subscription or recent activity keeps it up; the default timeout skips autoStart servers; a
// server started only to be indexed uses the short index bound until its first call; and the
// next call starts a stopped server again, transparently.
#include "gateway/downstream/downstream.hpp"

#include "../run_until.hpp"
#include "core/clock.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace sluice::gateway {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A minimal MCP server in sh, of the 2025 era: answers the server/discover probe with "method
// not found", then initialize and tools/list, then answers every
// tools/call with an empty result, except while `hold` exists (then it never answers). It
// exits when its stdin closes (the orderly teardown).
std::string server_script(const fs::path& hold) {
  return "read -r line; "
         "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
         "\"message\":\"Method not found\"}}'; "
         "read -r line; "
         "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":"
         "\"2025-03-26\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"t\","
         "\"version\":\"1\"}}}'; "
         "read -r line; read -r line; "
         "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":"
         "\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}}'; "
         "while read -r line; do case \"$line\" in *tools/call*) "
         "id=$(printf '%s' \"$line\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p'); "
         "[ -e '" +
         hold.string() +
         "' ] || printf '%s\\n' \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":$id,"
         "\\\"result\\\":{\\\"content\\\":[]}}\";; esac; done";
}

struct ServerSetup {
  std::optional<std::chrono::milliseconds> idle_timeout;  // the entry's idleTimeoutMs
  bool auto_start = false;
};

class DownstreamIdle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sluice-idle-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    limits_.stdin_close_grace = 50ms;
    policy_.idle_timeout = 600000ms;
    policy_.index_idle = 30000ms;
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
      EXPECT_TRUE(run_until([&] {
        sim_.advance(10ms);
        return done;
      }));
      downstream_.reset();
      run_for(20ms);  // the calls the shutdown ended are answered
    }
    fs::remove_all(dir_);
  }

  // Builds the server and starts it.
  void start(ServerSetup setup) {
    config::ServerConfig server;
    server.name = "t";
    server.transport = config::StdioServer{"/bin/sh", {"-c", server_script(hold())}, {}, {}};
    server.source_file = (dir_ / ".mcp.json").string();
    server.idle_timeout = setup.idle_timeout;
    server.auto_start = setup.auto_start;
    DownstreamEvents events;
    events.lifecycle = [this](std::string_view kind, std::string_view, std::uint64_t) {
      lifecycle_.emplace_back(kind);
    };
    events.holds_server = [this] { return subscribed_; };
    downstream_ = std::make_unique<Downstream>(io_, server, limits_, policy_, std::move(events));
    ASSERT_EQ(ensure_started(), true);
  }

  fs::path hold() const { return dir_ / "hold"; }

  bool run_until(const std::function<bool()>& done) { return test::run_until(io_, done); }
  void run_for(std::chrono::milliseconds real) {
    io_.restart();
    io_.run_for(real);
  }
  // `simulated` passes, 50 ms at a time, the loop running after each step.
  void pass(std::chrono::milliseconds simulated) {
    for (auto left = simulated; left > 0ms; left -= 50ms) {
      sim_.advance(std::min(left, std::chrono::milliseconds(50)));
      run_for(3ms);
    }
  }
  std::optional<bool> ensure_started() {
    std::optional<bool> result;
    asio::co_spawn(
        io_, [&]() -> asio::awaitable<void> { result = co_await downstream_->ensure_started(); },
        asio::detached);
    EXPECT_TRUE(run_until([&] { return result.has_value(); }));
    return result;
  }
  // Sends one tools/call; `status` is set when it is answered (or ends).
  void call(std::optional<mcp::Reply::Status>& status) {
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          mcp::Reply reply = co_await downstream_->call_tool("echo", "{}", 60s, nullptr, "");
          status = reply.status;
        },
        asio::detached);
  }
  // A call that was answered.
  void answered_call() {
    std::optional<mcp::Reply::Status> status;
    call(status);
    ASSERT_TRUE(run_until([&] { return status.has_value(); }));
    EXPECT_EQ(*status, mcp::Reply::Status::result);
  }
  bool idle_stopped() {
    return run_until([&] {
      sim_.advance(10ms);  // the teardown's graces, should the child linger
      return downstream_->phase() == Phase::idle_stopped && downstream_->pid() == -1;
    });
  }

  core::SimulatedTime sim_;
  fs::path dir_;
  core::Limits limits_;
  config::GatewayPolicy policy_;
  asio::io_context io_;
  std::unique_ptr<Downstream> downstream_;
  std::vector<std::string> lifecycle_;
  std::optional<mcp::Reply::Status> unanswered_;  // a call left pending by a test
  bool subscribed_ = false;
};

TEST_F(DownstreamIdle, AnIdleServerIsStoppedAfterItsTimeoutAndNotBefore) {
  start({.idle_timeout = 1000ms});
  const pid_t pid = downstream_->pid();
  ASSERT_GT(pid, 0);
  pass(950ms);
  EXPECT_EQ(downstream_->phase(), Phase::online) << "stopped before its idle timeout";
  EXPECT_FALSE(downstream_->idle_stopped_at().has_value());
  pass(100ms);
  ASSERT_TRUE(idle_stopped());
  EXPECT_TRUE(::kill(pid, 0) != 0 && errno == ESRCH) << "the child was reaped";
  EXPECT_TRUE(downstream_->tools_known()) << "its tool list stays known";
  EXPECT_EQ(downstream_->tools().size(), 1u);
  EXPECT_TRUE(downstream_->idle_stopped_at().has_value());
  EXPECT_FALSE(downstream_->held());
  EXPECT_EQ(lifecycle_, std::vector<std::string>{"idle_stop"});
}

TEST_F(DownstreamIdle, TheNextCallStartsAnIdleStoppedServerAgainTransparently) {
  start({.idle_timeout = 1000ms});
  pass(1100ms);
  ASSERT_TRUE(idle_stopped());
  EXPECT_EQ(downstream_->generation(), 1u);
  ASSERT_EQ(ensure_started(), true) << "idle_stopped is not held";
  EXPECT_EQ(downstream_->phase(), Phase::online);
  EXPECT_EQ(downstream_->generation(), 2u);
  answered_call();
  // The new generation is watched too.
  pass(1100ms);
  ASSERT_TRUE(idle_stopped());
  EXPECT_EQ(lifecycle_, (std::vector<std::string>{"idle_stop", "idle_stop"}));
}

TEST_F(DownstreamIdle, RecentActivityKeepsTheServerUpForAWholeTimeoutAfterIt) {
  start({.idle_timeout = 1000ms});
  pass(800ms);
  answered_call();
  pass(950ms);  // 950 ms after the call: not idle long enough
  EXPECT_EQ(downstream_->phase(), Phase::online) << "stopped less than a timeout after a call";
  pass(350ms);
  EXPECT_TRUE(idle_stopped());
}

TEST_F(DownstreamIdle, AnUnansweredCallKeepsTheServerUp) {
  start({.idle_timeout = 1000ms});
  std::ofstream(hold()).put('x');
  // A member: the call ends (closed) only in TearDown's shutdown, after this body.
  call(unanswered_);
  pass(5000ms);
  EXPECT_FALSE(unanswered_.has_value());
  EXPECT_EQ(downstream_->phase(), Phase::online) << "stopped with a request pending";
}

TEST_F(DownstreamIdle, WorkInFlightKeepsTheServerUpUntilItEnds) {
  start({.idle_timeout = 1000ms});
  // An admitted call (an abandoned one holding its slot counts too) is in the tool's counters.
  ToolAdmission& admission = downstream_->admission(downstream_->tools().front());
  admission.counters.in_flight = 1;
  // The work ends 200 ms after the tick (one every 250 ms) that last saw it: the timeout counts
  // from the next tick, the first that sees the server not busy, not from that last busy one.
  pass(5200ms);
  EXPECT_EQ(downstream_->phase(), Phase::online) << "stopped with work in flight";
  admission.counters.in_flight = 0;
  pass(950ms);
  EXPECT_EQ(downstream_->phase(), Phase::online) << "stopped right after the work ended";
  pass(350ms);
  EXPECT_TRUE(idle_stopped());
}

TEST_F(DownstreamIdle, ASubscriptionKeepsTheServerUp) {
  start({.idle_timeout = 1000ms});
  subscribed_ = true;
  pass(5000ms);
  EXPECT_EQ(downstream_->phase(), Phase::online) << "stopped while a client is subscribed";
  subscribed_ = false;
  pass(1350ms);
  EXPECT_TRUE(idle_stopped());
}

TEST_F(DownstreamIdle, TheDefaultTimeoutAppliesToServersStartedOnDemand) {
  policy_.idle_timeout = 1000ms;
  start({});
  EXPECT_EQ(downstream_->idle_timeout(), 1000ms);
  pass(1100ms);
  EXPECT_TRUE(idle_stopped());
}

TEST_F(DownstreamIdle, TheDefaultTimeoutDoesNotApplyToAnAutoStartServer) {
  policy_.idle_timeout = 1000ms;
  start({.idle_timeout = std::nullopt, .auto_start = true});
  EXPECT_EQ(downstream_->idle_timeout(), std::nullopt);
  pass(5000ms);
  EXPECT_EQ(downstream_->phase(), Phase::online) << "an autoStart server idle-stopped by default";
}

TEST_F(DownstreamIdle, AnAutoStartServerWithItsOwnTimeoutIsIdleStopped) {
  start({.idle_timeout = 1000ms, .auto_start = true});
  pass(1100ms);
  EXPECT_TRUE(idle_stopped());
}

TEST_F(DownstreamIdle, ZeroInTheEntryMeansNeverEvenWithADefault) {
  policy_.idle_timeout = 1000ms;
  start({.idle_timeout = 0ms});
  EXPECT_EQ(downstream_->idle_timeout(), std::nullopt);
  pass(5000ms);
  EXPECT_EQ(downstream_->phase(), Phase::online);
}

TEST_F(DownstreamIdle, AServerStartedOnlyToBeIndexedIsStoppedAfterTheIndexBound) {
  policy_.index_idle = 1000ms;
  start({});  // its own timeout is the default, ten minutes
  downstream_->mark_index_only();
  EXPECT_TRUE(downstream_->index_only());
  EXPECT_EQ(downstream_->idle_timeout(), 1000ms);
  pass(950ms);
  EXPECT_EQ(downstream_->phase(), Phase::online);
  pass(100ms);
  ASSERT_TRUE(idle_stopped());
  EXPECT_FALSE(downstream_->index_only()) << "the next start is not an index-only one";
}

TEST_F(DownstreamIdle, ACallClearsTheIndexOnlyMark) {
  policy_.index_idle = 1000ms;
  start({});
  downstream_->mark_index_only();
  answered_call();
  EXPECT_FALSE(downstream_->index_only());
  EXPECT_EQ(downstream_->idle_timeout(), 600000ms);
  pass(5000ms);
  EXPECT_EQ(downstream_->phase(), Phase::online) << "a used server kept the short index bound";
}

}  // namespace
}  // namespace sluice::gateway
