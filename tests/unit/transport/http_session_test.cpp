// One Streamable HTTP session and the table of them, without a socket: how frames are routed
// to streams, the bounds of the replay buffers and of the finished streams kept, and how
// sessions are created, expired by the idle sweep (in simulated time) and retired.
#include "transport/http_session.hpp"
#include "transport/http_session_table.hpp"

#include "core/clock.hpp"
#include "core/limits.hpp"
#include "mcp/session.hpp"
#include "rpc/message.hpp"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace sluice::transport {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// A handler that serves nothing; `work` says whether it still holds work (a cancelled call
// whose downstream has not answered), which keeps a retired session.
class IdleHandler : public mcp::Handler {
 public:
  explicit IdleHandler(const bool& work) : work_(work) {}
  asio::awaitable<void> on_request(mcp::IncomingRequest&) override { co_return; }
  void on_notification(const rpc::Message&) override {}
  bool has_work() const override { return work_; }

 private:
  const bool& work_;
};

class HttpSessionTest : public ::testing::Test {
 protected:
  std::shared_ptr<HttpSession> make_session() {
    auto s = std::make_shared<HttpSession>(io_, 1, limits_, dropped_);
    s->attach(std::make_unique<IdleHandler>(work_));
    return s;
  }
  static std::string key(std::string_view raw_id) { return *rpc::id_key(raw_id); }

  asio::io_context io_;
  core::Limits limits_;
  std::uint64_t dropped_ = 0;
  bool work_ = false;
};

TEST_F(HttpSessionTest, AResponseGoesToTheStreamOfItsRequestAndFinishesIt) {
  auto session = make_session();
  auto stream = session->open_stream(key("7"), true);
  ASSERT_NE(stream, nullptr);
  session->send_response(R"({"jsonrpc":"2.0","id":7,"result":{}})", "7");
  EXPECT_TRUE(stream->finished);
  ASSERT_EQ(stream->events.size(), 1u);
  EXPECT_NE(stream->events.front().second.find(R"("id":7)"), std::string::npos);
  EXPECT_EQ(stream->events.front().second.rfind("id: " + session->event_id(*stream, 1), 0), 0u);
  EXPECT_TRUE(session->standalone()->events.empty());
}

TEST_F(HttpSessionTest, AJsonModeRequestGetsItsResponseAsTheBodyNotAsAnEvent) {
  auto session = make_session();
  auto stream = session->open_stream(key("\"a\""), false);
  session->send_response(R"({"jsonrpc":"2.0","id":"a","result":{}})", "\"a\"");
  EXPECT_TRUE(stream->finished);
  EXPECT_TRUE(stream->events.empty());
  EXPECT_EQ(stream->json_body, R"({"jsonrpc":"2.0","id":"a","result":{}})");
}

TEST_F(HttpSessionTest, ARequestEndedWithoutAnAnswerFinishesItsStreamUnanswered) {
  auto session = make_session();
  auto stream = session->open_stream(key("3"), true);
  session->request_finished("3");
  EXPECT_TRUE(stream->finished);
  EXPECT_TRUE(stream->unanswered);
  EXPECT_TRUE(stream->events.empty());
}

TEST_F(HttpSessionTest, FramesRelatedToACallGoToItsStreamAndTheRestToTheStandaloneStream) {
  auto session = make_session();
  auto call = session->open_stream(key("1"), true);
  auto json_call = session->open_stream(key("2"), false);
  session->send_related(R"({"jsonrpc":"2.0","method":"notifications/progress"})", "1");
  session->send_related(R"({"jsonrpc":"2.0","method":"notifications/message"})", "2");
  session->send(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  session->send_response(R"({"jsonrpc":"2.0","id":9,"result":{}})", "9");  // no such stream
  EXPECT_EQ(call->events.size(), 1u);
  EXPECT_TRUE(json_call->events.empty());  // a JSON-mode request has no stream to carry it
  EXPECT_EQ(session->standalone()->events.size(), 3u);
}

TEST_F(HttpSessionTest, AnIdStillInUseCannotOpenASecondStream) {
  auto session = make_session();
  ASSERT_NE(session->open_stream(key("1"), true), nullptr);
  EXPECT_EQ(session->open_stream(key("1"), true), nullptr);
  session->send_response(R"({"jsonrpc":"2.0","id":1,"result":{}})", "1");
  EXPECT_NE(session->open_stream(key("1"), true), nullptr);  // answered: the id is free again
}

TEST_F(HttpSessionTest, TheReplayBufferKeepsTheNewestEventsUpToItsCountAndCountsTheUnreadDropped) {
  limits_.sse_replay_events = 3;
  auto session = make_session();
  SseStream& standalone = *session->standalone();
  for (int i = 0; i < 5; ++i) session->send(R"({"jsonrpc":"2.0","method":"n"})");
  ASSERT_EQ(standalone.events.size(), 3u);
  EXPECT_EQ(standalone.events.front().first, 3u);
  EXPECT_EQ(standalone.events.back().first, 5u);
  EXPECT_EQ(dropped_, 2u);
  // Events a connection was already handed are dropped without being counted.
  standalone.written = standalone.next_seq - 1;
  session->send(R"({"jsonrpc":"2.0","method":"n"})");
  EXPECT_EQ(standalone.events.size(), 3u);
  EXPECT_EQ(dropped_, 2u);
}

TEST_F(HttpSessionTest, TheReplayBufferKeepsToItsByteBoundButAlwaysKeepsTheNewestEvent) {
  limits_.sse_replay_bytes = 200;
  auto session = make_session();
  SseStream& standalone = *session->standalone();
  const std::string big =
      R"({"jsonrpc":"2.0","method":"n","params":{"p":")" + std::string(300, 'x') + R"("}})";
  session->send(R"({"jsonrpc":"2.0","method":"small"})");
  session->send(big);
  ASSERT_EQ(standalone.events.size(), 1u);  // alone over the bound, and still kept
  EXPECT_EQ(standalone.events.front().first, 2u);
  EXPECT_EQ(standalone.bytes, standalone.events.front().second.size());
  EXPECT_EQ(dropped_, 1u);
  session->send(R"({"jsonrpc":"2.0","method":"small"})");
  ASSERT_EQ(standalone.events.size(), 1u);
  EXPECT_LE(standalone.bytes, limits_.sse_replay_bytes);
}

TEST_F(HttpSessionTest, OnlyTheNewestFinishedStreamsAreKeptAndNeverOneBeingWritten) {
  limits_.sse_retained_streams = 2;
  auto session = make_session();
  core::Timer waker(io_);
  int writer = 0;
  std::vector<std::uint64_t> numbers;
  for (int i = 1; i <= 4; ++i) {
    auto s = session->open_stream(key(std::to_string(i)), true);
    numbers.push_back(s->number);
    if (i == 1) s->attach(&writer, &waker);  // a connection still writes the first
    // Opening the fourth applies the bound to the three finished before it.
    session->send_response(R"({"jsonrpc":"2.0","id":0,"result":{}})", std::to_string(i));
  }
  EXPECT_NE(session->stream(numbers[0]), nullptr);  // being written: kept
  EXPECT_EQ(session->stream(numbers[1]), nullptr);  // the oldest idle finished one: gone
  EXPECT_NE(session->stream(numbers[2]), nullptr);
  EXPECT_NE(session->stream(numbers[3]), nullptr);
  EXPECT_NE(session->stream(0), nullptr);  // the standalone stream always stays
}

TEST_F(HttpSessionTest, EndingTheSessionFinishesEveryStreamAndWakesItsWriter) {
  auto session = make_session();
  auto call = session->open_stream(key("1"), true);
  core::Timer waker(io_, std::chrono::hours(1));
  bool woken = false;
  waker.async_wait(
      [&](boost::system::error_code ec) { woken = ec == asio::error::operation_aborted; });
  int writer = 0;
  call->attach(&writer, &waker);
  EXPECT_FALSE(session->idle());  // a stream is attached to a connection
  session->end();
  io_.run_for(50ms);
  EXPECT_TRUE(woken);
  EXPECT_TRUE(call->finished);
  EXPECT_TRUE(session->standalone()->finished);
}

class SessionTableTest : public ::testing::Test {
 protected:
  SessionTable make_table() {
    return SessionTable(io_, limits_, [this](std::shared_ptr<mcp::Session>) {
      return std::make_unique<IdleHandler>(work_);
    });
  }

  core::SimulatedTime sim_;
  asio::io_context io_;
  core::Limits limits_;
  bool work_ = false;
};

TEST_F(SessionTableTest, ASessionIsFoundByItsIdUntilItIsEnded) {
  SessionTable table = make_table();
  SessionTable::Opened opened = table.open();
  ASSERT_NE(opened.session, nullptr);
  EXPECT_EQ(opened.id.size(), 32u);
  EXPECT_EQ(table.find(opened.id), opened.session);
  EXPECT_EQ(table.find("0123456789abcdef0123456789abcdef"), nullptr);
  EXPECT_TRUE(table.end(opened.id, false));
  EXPECT_EQ(table.find(opened.id), nullptr);
  EXPECT_FALSE(table.end(opened.id, false));
  EXPECT_EQ(table.counters().created, 1u);
  EXPECT_EQ(table.counters().deleted, 1u);
}

TEST_F(SessionTableTest, AnIdleSessionExpiresOnlyOnceItsIdleTimeHasPassed) {
  limits_.http_session_idle = 10min;
  SessionTable table = make_table();
  SessionTable::Opened opened = table.open();
  sim_.advance(10min);
  EXPECT_EQ(table.sweep(core::Clock::now()), 0u);  // exactly the idle time: not yet
  sim_.advance(1s);
  EXPECT_EQ(table.sweep(core::Clock::now()), 1u);
  EXPECT_EQ(table.find(opened.id), nullptr);
  EXPECT_EQ(table.counters().expired, 1u);
  EXPECT_TRUE(opened.session->standalone()->finished);
}

TEST_F(SessionTableTest, ActivityRestartsTheIdleTime) {
  limits_.http_session_idle = 10min;
  SessionTable table = make_table();
  SessionTable::Opened opened = table.open();
  sim_.advance(9min);
  opened.session->touch();
  sim_.advance(9min);
  EXPECT_EQ(table.sweep(core::Clock::now()), 0u);
  EXPECT_NE(table.find(opened.id), nullptr);
}

TEST_F(SessionTableTest, ASessionWithAnOpenStreamDoesNotExpire) {
  limits_.http_session_idle = 10min;
  SessionTable table = make_table();
  SessionTable::Opened opened = table.open();
  core::Timer waker(io_);
  int writer = 0;
  opened.session->standalone()->attach(&writer, &waker);
  sim_.advance(1h);
  EXPECT_EQ(table.sweep(core::Clock::now()), 0u);
  opened.session->standalone()->detach(&writer);
  EXPECT_EQ(table.sweep(core::Clock::now()), 1u);
}

TEST_F(SessionTableTest, AtTheCapIdleSessionsAreSweptFirstAndOnlyThenIsOneRefused) {
  limits_.http_max_sessions = 2;
  limits_.http_session_idle = 10min;
  SessionTable table = make_table();
  SessionTable::Opened first = table.open();
  sim_.advance(11min);  // the first is idle past its time
  SessionTable::Opened second = table.open();
  SessionTable::Opened third = table.open();  // at the cap: the sweep frees the first
  ASSERT_NE(third.session, nullptr);
  EXPECT_EQ(table.find(first.id), nullptr);
  EXPECT_EQ(table.size(), 2u);
  SessionTable::Opened fourth = table.open();  // none idle: refused
  EXPECT_EQ(fourth.session, nullptr);
  EXPECT_TRUE(fourth.at_capacity);
  EXPECT_EQ(table.counters().refused, 1u);
  EXPECT_EQ(table.counters().expired, 1u);
}

TEST_F(SessionTableTest, ASessionEndedWithWorkStillRunningIsRetiredUntilTheWorkEnds) {
  SessionTable table = make_table();
  SessionTable::Opened opened = table.open();
  std::weak_ptr<HttpSession> watch = opened.session;
  opened.session.reset();
  work_ = true;
  table.end_all();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.retired(), 1u);
  table.release_retired();
  EXPECT_FALSE(watch.expired());  // its handler is still borrowed by the work
  work_ = false;
  table.release_retired();
  EXPECT_EQ(table.retired(), 0u);
  EXPECT_TRUE(watch.expired());
}

TEST_F(SessionTableTest, ASessionEndedWithNothingRunningIsDestroyedAtOnce) {
  SessionTable table = make_table();
  SessionTable::Opened opened = table.open();
  std::weak_ptr<HttpSession> watch = opened.session;
  opened.session.reset();
  table.end(opened.id, false);
  EXPECT_EQ(table.retired(), 0u);
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace sluice::transport
