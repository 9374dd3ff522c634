// FdStream over real pipes on one io_context, with a real mcp::Session behind it: messages
// are taken whole at their newline, a line over the message limit is refused while reading
// (the client's stream survives it, a downstream's ends at the limit), writes leave whole and
// in order, a peer that stops reading is cut off at the write-queue cap, and the end of the
// stream is told once. The test holds the far end of both pipes.
#include "transport/fd_stream.hpp"

#include "../run_until.hpp"
#include "core/limits.hpp"
#include "mcp/session.hpp"
#include "rpc/message.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice::transport {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Long enough for anything that should happen; a broken rule fails after it instead of hanging.
constexpr auto kGuard = 5s;
constexpr std::size_t kMessageCap = 96;

// One end of a pipe, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Records what the session passes on, in order: a notification by its params, a refused
// frame by its reason, a request by its method (answered with an empty result).
class RecordingHandler : public mcp::Handler {
 public:
  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    if (before_answer) before_answer();
    events.push_back("request " + std::string(request.message().method()));
    request.respond_result("{}");
    co_return;
  }
  void on_notification(const rpc::Message& message) override {
    events.push_back(std::string(message.params()));
  }
  void on_bad_frame(std::string_view reason) override {
    events.push_back("bad: " + std::string(reason));
  }
  std::vector<std::string> events;
  std::function<void()> before_answer;  // runs as each request comes, before its answer
};

// A notification whose params name it: {"i":<i>}.
std::string note(int i) { return rpc::make_notification("n", "{\"i\":" + std::to_string(i) + "}"); }
std::string params(int i) { return "{\"i\":" + std::to_string(i) + "}"; }

// A request (id 7) far over the message cap, its id within the first bytes.
std::string overlong_request() {
  return R"({"jsonrpc":"2.0","id":7,"method":"m","params":{"pad":")" +
         std::string(4 * kMessageCap, 'x') + "\"}}";
}

class FdStreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // As the binary does: a write to a pipe nobody reads fails with EPIPE instead of killing.
    std::signal(SIGPIPE, SIG_IGN);
  }

  FdStreamTest() { limits_.max_message_bytes = kMessageCap; }

  ~FdStreamTest() override {
    if (session_) session_->detach();
    if (stream_) stream_->close();
    if (started_)
      (void)test::run_until(
          io_, [&] { return closed_count_ > 0; }, kGuard);
    stream_.reset();
    io_.restart();
    io_.poll();
  }

  // Two pipes: the test writes `to_stream_` (the stream reads the other end) and reads
  // `from_stream_` (non-blocking; the stream writes the other end).
  void make_stream(OverlongLine overlong = OverlongLine::refuse) {
    int in[2];
    int out[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    to_stream_.reset(in[1]);
    from_stream_.reset(out[0]);
    ASSERT_EQ(::fcntl(from_stream_.get(), F_SETFL, O_NONBLOCK), 0);
    stream_ = FdStream::create(io_, in[0], out[1], limits_, overlong);
  }

  // The session behind the stream: the client's role (refused frames are answered) or a
  // downstream's (they are not).
  void start(rpc::Strictness strictness = rpc::Strictness::client) {
    session_ = mcp::Session::create(
        io_, mcp::SessionOptions{.label = "test", .strictness = strictness, .limits = &limits_});
    session_->attach(stream_.get(), &handler_);
    stream_->start(session_, [this] { ++closed_count_; });
    started_ = true;
  }

  void write_input(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::write(to_stream_.get(), bytes.data(), bytes.size());
      ASSERT_GT(n, 0) << "write to the stream's input failed";
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  // Bytes written to the stream's input and not read by it yet.
  int unread_input() const {
    int n = -1;
    if (::ioctl(to_stream_.get(), FIONREAD, &n) != 0) return -1;
    return n;
  }
  // Whether the stream still holds its input open (a write to it does not fail with EPIPE).
  // Writes one byte (a zero-length write to a pipe does not look at the reader).
  bool input_held_open() { return ::write(to_stream_.get(), " ", 1) == 1; }

  // Reads what the stream wrote so far; notes the end of its output.
  void drain_output() {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(from_stream_.get(), buf, sizeof buf);
      if (n > 0) {
        output_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) output_ended_ = true;
      return;
    }
  }
  // The complete lines the stream wrote so far.
  std::vector<std::string> output_lines() {
    drain_output();
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t nl; (nl = output_.find('\n', start)) != std::string::npos; start = nl + 1) {
      lines.push_back(output_.substr(start, nl - start));
    }
    return lines;
  }

  template <class Pred>
  bool run_until(Pred done) {
    return test::run_until(io_, done, kGuard);
  }
  // Runs whatever is ready now.
  void settle() {
    io_.restart();
    io_.poll();
  }

  asio::io_context io_;
  core::Limits limits_;
  RecordingHandler handler_;
  Fd to_stream_;
  Fd from_stream_;
  std::shared_ptr<mcp::Session> session_;
  std::shared_ptr<FdStream> stream_;
  bool started_ = false;
  int closed_count_ = 0;
  std::string output_;
  bool output_ended_ = false;
};

// ---- Reading: one message per newline -------------------------------------------------------

TEST_F(FdStreamTest, AMessageSplitAcrossReadsIsDeliveredWholeAtItsNewline) {
  make_stream();
  start();
  const std::string first = note(1);
  write_input(first.substr(0, 20));
  ASSERT_TRUE(run_until([&] { return unread_input() == 0; }));  // the stream read the half
  settle();
  write_input(first.substr(20) + "\n" + note(2) + "\n");
  ASSERT_TRUE(run_until([&] { return handler_.events.size() >= 2; }));
  settle();
  EXPECT_EQ(handler_.events, (std::vector<std::string>{params(1), params(2)}));
  EXPECT_EQ(session_->counters().bad_frames, 0u);
  EXPECT_EQ(closed_count_, 0);
}

TEST_F(FdStreamTest, ManyMessagesInOneReadAreDeliveredOneByOneInOrder) {
  make_stream();
  start();
  std::string batch;
  for (int i = 0; i < 50; ++i) batch += note(i) + "\n";
  write_input(batch);
  ASSERT_TRUE(run_until([&] { return handler_.events.size() >= 50; }));
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) expected.push_back(params(i));
  EXPECT_EQ(handler_.events, expected);
}

TEST_F(FdStreamTest, AnUnterminatedLastLineIsDeliveredAtTheEndOfInput) {
  make_stream();
  start();
  write_input(note(1) + "\n" + note(2));  // no newline after the last one
  to_stream_.reset();
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  EXPECT_EQ(handler_.events, (std::vector<std::string>{params(1), params(2)}));
}

TEST_F(FdStreamTest, TheEndOfInputTellsTheSessionAndRunsOnClosedOnce) {
  make_stream();
  start();
  write_input(note(1) + "\n");
  ASSERT_TRUE(run_until([&] { return !handler_.events.empty(); }));
  EXPECT_EQ(closed_count_, 0);
  EXPECT_FALSE(session_->closed());
  to_stream_.reset();
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  EXPECT_TRUE(session_->closed());
  EXPECT_FALSE(stream_->protocol_violation());
  // Closing it afterwards ends nothing a second time.
  stream_->close();
  settle();
  EXPECT_EQ(closed_count_, 1);
}

TEST_F(FdStreamTest, OnClosedRunsOnceWhenTheOutputFailsAndTheInputEndsTogether) {
  make_stream();
  start();
  from_stream_.reset();  // the peer is gone: the next write fails with EPIPE
  to_stream_.reset();    // and its end of the input with it
  stream_->send(note(1));
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  // Let the other side's failure arrive too: nothing of the stream's is pending any more
  // (its reader and its write each hold a reference while they run).
  ASSERT_TRUE(run_until([&] { return stream_.use_count() == 1; }));
  EXPECT_EQ(closed_count_, 1);
  EXPECT_TRUE(session_->closed());
}

TEST_F(FdStreamTest, AnInputThatIsARegularFileIsReadToItsEnd) {
  char path[] = "/tmp/sluice-fd-stream-XXXXXX";
  int file = ::mkstemp(path);
  ASSERT_GE(file, 0);
  ::unlink(path);
  const std::string content = note(1) + "\n" + note(2) + "\n" + note(3);
  ASSERT_EQ(::write(file, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  ASSERT_EQ(::lseek(file, 0, SEEK_SET), 0);
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  from_stream_.reset(out[0]);
  ASSERT_EQ(::fcntl(from_stream_.get(), F_SETFL, O_NONBLOCK), 0);
  stream_ = FdStream::create(io_, file, out[1], limits_);
  start();
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  EXPECT_EQ(handler_.events, (std::vector<std::string>{params(1), params(2), params(3)}));
  EXPECT_EQ(closed_count_, 1);
  // The stream owns the file: destroying it closes the fd.
  session_->detach();
  stream_.reset();
  errno = 0;
  EXPECT_EQ(::fcntl(file, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
}

// ---- Reading: a line over the message limit --------------------------------------------------

TEST_F(FdStreamTest, AnOverlongLineFromTheClientIsRefusedAndTheConnectionSurvives) {
  make_stream(OverlongLine::refuse);
  start(rpc::Strictness::client);
  write_input(overlong_request() + "\n" + note(2) + "\n");
  ASSERT_TRUE(run_until([&] { return handler_.events.size() >= 2; }));
  EXPECT_EQ(handler_.events, (std::vector<std::string>{"bad: message too large", params(2)}));
  EXPECT_EQ(session_->counters().oversized_frames, 1u);
  EXPECT_EQ(session_->counters().bad_frames, 0u);  // refused by size, never parsed
  EXPECT_FALSE(stream_->protocol_violation());
  EXPECT_TRUE(stream_->output_open());
  EXPECT_EQ(closed_count_, 0);
  // The session had the head: the refusal answers the request's id.
  ASSERT_TRUE(run_until([&] { return !output_lines().empty(); }));
  EXPECT_EQ(output_lines().front(),
            rpc::make_error("7", rpc::code::kInvalidRequest, "Invalid request: message too large"));
}

TEST_F(FdStreamTest, AnOverlongLineFromTheClientIsReportedOnlyWhenItEnds) {
  make_stream(OverlongLine::refuse);
  start(rpc::Strictness::client);
  const std::string line = overlong_request();
  write_input(line.substr(0, 3 * kMessageCap));  // past the cap, not ended
  ASSERT_TRUE(run_until([&] { return unread_input() == 0; }));
  settle();
  EXPECT_TRUE(handler_.events.empty());  // dropped as it arrives, not told yet
  EXPECT_EQ(closed_count_, 0);
  write_input(line.substr(3 * kMessageCap) + "\n" + note(2) + "\n");
  ASSERT_TRUE(run_until([&] { return handler_.events.size() >= 2; }));
  EXPECT_EQ(handler_.events, (std::vector<std::string>{"bad: message too large", params(2)}));
  EXPECT_EQ(closed_count_, 0);
}

TEST_F(FdStreamTest, AnOverlongLineFromADownstreamEndsTheStreamWithoutWaitingForItsEnd) {
  make_stream(OverlongLine::end_stream);
  start(rpc::Strictness::peer);
  write_input(overlong_request().substr(0, 2 * kMessageCap));  // and never a newline
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  EXPECT_TRUE(stream_->protocol_violation());
  EXPECT_TRUE(session_->closed());
  EXPECT_EQ(handler_.events, (std::vector<std::string>{"bad: message too large"}));
  EXPECT_EQ(session_->counters().oversized_frames, 1u);
  // The input stays open and unread, so that the peer blocks instead of dying of SIGPIPE...
  const int before = unread_input();
  ASSERT_TRUE(input_held_open());
  settle();
  EXPECT_EQ(unread_input(), before + 1);
  // ...until close().
  stream_->close();
  EXPECT_FALSE(input_held_open());
  EXPECT_EQ(errno, EPIPE);
  EXPECT_EQ(closed_count_, 1);
}

TEST_F(FdStreamTest, NothingAfterAnOverlongLineFromADownstreamIsTaken) {
  make_stream(OverlongLine::end_stream);
  start(rpc::Strictness::peer);
  write_input(overlong_request() + "\n" + note(2) + "\n" + note(3) + "\n");
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  EXPECT_TRUE(stream_->protocol_violation());
  EXPECT_EQ(handler_.events, (std::vector<std::string>{"bad: message too large"}));
  EXPECT_EQ(session_->counters().frames_in, 0u);
}

TEST_F(FdStreamTest, AnOverlongAnswerFromADownstreamFailsItsRequestAsTooLarge) {
  make_stream(OverlongLine::end_stream);
  start(rpc::Strictness::peer);
  auto reply = std::make_shared<std::optional<mcp::Reply>>();
  std::uint64_t id = 0;
  asio::co_spawn(io_, session_->request("tools/call", "{}", 60s, nullptr, &id),
                 [reply](std::exception_ptr e, mcp::Reply r) {
                   if (!e) *reply = std::move(r);
                 });
  ASSERT_TRUE(run_until([&] { return !output_lines().empty(); }));
  EXPECT_EQ(output_lines().front(), rpc::make_request(std::to_string(id), "tools/call", "{}"));
  // The answer, over the cap and not ended: its id is in the head the session is given.
  write_input(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":{"pad":")" +
              std::string(2 * kMessageCap, 'x'));
  ASSERT_TRUE(run_until([&] { return reply->has_value(); }));
  EXPECT_EQ((*reply)->status, mcp::Reply::Status::error);  // not closed: the head was seen first
  ASSERT_TRUE((*reply)->message.has_value());
  EXPECT_NE((*reply)->message->error().find("response too large"), std::string_view::npos);
  EXPECT_TRUE(stream_->protocol_violation());
}

// ---- Writing -------------------------------------------------------------------------------

TEST_F(FdStreamTest, ManySendsBeforeTheLoopRunsArriveAsCompleteLinesInOrder) {
  limits_.max_write_queue_bytes = 4u * 1024u * 1024u;
  make_stream();
  start();
  // Far more than a pipe holds, so that writes are partial and the queue grows meanwhile.
  std::vector<std::string> sent;
  for (int i = 0; i < 4000; ++i) {
    const std::string pad(static_cast<std::size_t>(i % 97), 'y');
    sent.push_back(
        rpc::make_notification("n", "{\"i\":" + std::to_string(i) + ",\"pad\":\"" + pad + "\"}"));
    stream_->send(sent.back());
  }
  ASSERT_TRUE(run_until([&] { return output_lines().size() >= sent.size(); }));
  EXPECT_EQ(output_lines(), sent);
  ASSERT_TRUE(run_until([&] { return stream_->queued_bytes() == 0; }));
  EXPECT_EQ(closed_count_, 0);
}

TEST_F(FdStreamTest, SendsWhileAWriteIsInFlightFollowItWholeAndInOrder) {
  limits_.max_write_queue_bytes = 4u * 1024u * 1024u;
  make_stream();
  ASSERT_GE(::fcntl(from_stream_.get(), F_SETPIPE_SZ, 4096), 4096);
  start();
  const std::string big = std::string(20000, 'a');
  stream_->send(big);  // fills the pipe: the write is in flight until the test reads
  settle();
  ASSERT_GT(stream_->queued_bytes(), 0u);
  stream_->send("b");
  settle();
  stream_->send("c");
  ASSERT_TRUE(run_until([&] { return output_lines().size() >= 3; }));
  EXPECT_EQ(output_lines(), (std::vector<std::string>{big, "b", "c"}));
}

// ---- Batches: what the lines of one read send leaves together -------------------------------

TEST_F(FdStreamTest, FramesSentDuringABatchLeaveTogetherWhenItCloses) {
  make_stream();
  start();
  {
    WriteBatch batch;
    stream_->send(note(1));
    {
      WriteBatch inner;
      stream_->send(note(2));
    }
    drain_output();
    EXPECT_EQ(output_, "");  // held until the outermost batch closes
  }
  // Written as the batch closes, not by a later turn of the loop.
  EXPECT_EQ(output_lines(), (std::vector<std::string>{note(1), note(2)}));
  stream_->send(note(3));  // outside a batch: written as it is sent
  EXPECT_EQ(output_lines().size(), 3u);
}

TEST_F(FdStreamTest, TheAnswersToTheLinesOfOneReadLeaveWhenAllAreDelivered) {
  make_stream();
  start();
  std::vector<int> answered_bytes_seen;
  handler_.before_answer = [&] {
    int n = -1;
    ::ioctl(from_stream_.get(), FIONREAD, &n);
    answered_bytes_seen.push_back(n);
  };
  write_input(R"({"jsonrpc":"2.0","id":1,"method":"a"})"
              "\n"
              R"({"jsonrpc":"2.0","id":2,"method":"b"})"
              "\n");
  ASSERT_TRUE(run_until([&] { return output_lines().size() == 2; }));
  // Both came in one read: the first answer was held while the second request was served.
  EXPECT_EQ(answered_bytes_seen, (std::vector<int>{0, 0}));
}

TEST_F(FdStreamTest, FramesHeldByABatchStillLeaveWhenTheStreamClosesDuringIt) {
  make_stream();
  start();
  {
    WriteBatch batch;
    stream_->send(note(1));
    stream_->close();
  }
  EXPECT_EQ(output_lines(), (std::vector<std::string>{note(1)}));
  EXPECT_TRUE(output_ended_);
}

TEST_F(FdStreamTest, CloseOutputDuringABatchWritesTheHeldFramesThenEnds) {
  make_stream();
  start();
  {
    WriteBatch batch;
    stream_->send(note(1));
    stream_->close_output();
    drain_output();
    EXPECT_FALSE(output_ended_);
  }
  EXPECT_EQ(output_lines(), (std::vector<std::string>{note(1)}));
  EXPECT_TRUE(output_ended_);
}

// ---- Pipes: enlarged once they carry a large message --------------------------------------

// The size this process may give a pipe when it asks for 1 MiB (as the stream does: at most
// pipe-max-size), seen on a pipe of its own; 0 when the kernel refuses (a user past its
// allowance of pipe pages).
int grown_pipe_bytes() {
  int max = 1 << 20;
  if (FILE* f = std::fopen("/proc/sys/fs/pipe-max-size", "r")) {
    if (std::fscanf(f, "%d", &max) != 1 || max <= 0) max = 1 << 20;
    std::fclose(f);
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return 0;
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);
  return std::max(0, ::fcntl(write_end.get(), F_SETPIPE_SZ, std::min(1 << 20, max)));
}

TEST_F(FdStreamTest, APipeThatCarriesALargeMessageIsEnlargedAndOneWithSmallOnesIsNot) {
  limits_.max_message_bytes = 4u << 20;
  make_stream();
  start();
  const int default_bytes = ::fcntl(from_stream_.get(), F_GETPIPE_SZ);
  ASSERT_GT(default_bytes, 0);
  const int grown = grown_pipe_bytes();
  if (grown <= default_bytes)
    GTEST_SKIP() << "pipes cannot be enlarged here (pipe-max-size or "
                    "the user's pipe pages)";
  // Small messages both ways: both pipes keep their size.
  stream_->send(note(1));
  write_input(note(2) + "\n");
  ASSERT_TRUE(run_until([&] { return !handler_.events.empty() && !output_lines().empty(); }));
  EXPECT_EQ(::fcntl(from_stream_.get(), F_GETPIPE_SZ), default_bytes);
  EXPECT_EQ(::fcntl(to_stream_.get(), F_GETPIPE_SZ), default_bytes);
  // A large one out: the output pipe grows; it arrives whole.
  const std::string big_out =
      rpc::make_notification("n", R"({"pad":")" + std::string(300'000, 'o') + "\"}");
  stream_->send(big_out);
  ASSERT_TRUE(run_until([&] { return output_lines().size() >= 2; }));
  EXPECT_EQ(output_lines()[1], big_out);
  EXPECT_EQ(::fcntl(from_stream_.get(), F_GETPIPE_SZ), grown);
  EXPECT_EQ(::fcntl(to_stream_.get(), F_GETPIPE_SZ), default_bytes);
  // A large one in (written by a thread: it does not fit the pipe at once): the input grows.
  const std::string big_in = R"({"pad":")" + std::string(300'000, 'i') + "\"}";
  std::thread writer([&] { write_input(rpc::make_notification("n", big_in) + "\n"); });
  const bool delivered = run_until([&] { return handler_.events.size() >= 2; });
  writer.join();
  ASSERT_TRUE(delivered);
  EXPECT_EQ(handler_.events[1], big_in);
  EXPECT_EQ(::fcntl(to_stream_.get(), F_GETPIPE_SZ), grown);
}

TEST_F(FdStreamTest, APeerThatNeverReadsIsCutOffWhenTheQueuePassesItsCap) {
  limits_.max_write_queue_bytes = 16384;
  make_stream();
  ASSERT_GE(::fcntl(from_stream_.get(), F_SETPIPE_SZ, 4096), 4096);
  start();
  // The peer never reads: a first frame fills its pipe and stays queued.
  stream_->send(std::string(8000, 'a'));
  settle();
  ASSERT_EQ(stream_->queued_bytes(), 8001u);
  // Up to the cap is queued...
  stream_->send(std::string(16384 - 8001, 'b'));
  settle();
  EXPECT_EQ(closed_count_, 0);
  EXPECT_TRUE(stream_->output_open());
  EXPECT_EQ(stream_->queued_bytes(), 16385u);  // (the cap counts frames, not their newlines)
  // ...one byte past it is a stuck peer: the stream is closed and the session told.
  stream_->send("c");
  EXPECT_EQ(closed_count_, 1);
  EXPECT_TRUE(session_->closed());
  EXPECT_FALSE(stream_->output_open());
  EXPECT_FALSE(input_held_open());                                       // both sides
  ASSERT_TRUE(run_until([&] { return stream_->queued_bytes() == 0; }));  // pending writes dropped
  // What reached the peer is what was in its pipe: no whole line of the dropped frames.
  drain_output();
  EXPECT_TRUE(output_ended_);
  EXPECT_EQ(output_.find('\n'), std::string::npos);
  EXPECT_EQ(output_.find('b'), std::string::npos);
  EXPECT_EQ(closed_count_, 1);
}

TEST_F(FdStreamTest, APeerThatGoesAwayEndsTheStreamOnTheNextWrite) {
  make_stream();
  start();
  from_stream_.reset();
  stream_->send(note(1));
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0; }));
  EXPECT_TRUE(session_->closed());
  EXPECT_FALSE(stream_->output_open());
  EXPECT_FALSE(input_held_open());
}

TEST_F(FdStreamTest, CloseOutputLetsQueuedWritesFinishThenThePeerSeesEofAndReadingContinues) {
  make_stream();
  ASSERT_GE(::fcntl(from_stream_.get(), F_SETPIPE_SZ, 4096), 4096);
  start();
  const std::string big = std::string(10000, 'a');
  stream_->send(big);
  stream_->send("b");
  stream_->close_output();
  ASSERT_TRUE(run_until([&] {
    drain_output();
    return output_ended_;
  }));
  EXPECT_EQ(output_lines(), (std::vector<std::string>{big, "b"}));
  EXPECT_FALSE(stream_->output_open());
  // Reading goes on.
  write_input(note(3) + "\n");
  ASSERT_TRUE(run_until([&] { return !handler_.events.empty(); }));
  EXPECT_EQ(handler_.events, (std::vector<std::string>{params(3)}));
  EXPECT_EQ(closed_count_, 0);
}

TEST_F(FdStreamTest, CloseOutputWithNothingQueuedClosesAtOnce) {
  make_stream();
  start();
  stream_->close_output();
  EXPECT_FALSE(stream_->output_open());
  drain_output();
  EXPECT_TRUE(output_ended_);
  stream_->send(note(1));  // dropped: the output is closed
  EXPECT_EQ(stream_->queued_bytes(), 0u);
  EXPECT_EQ(closed_count_, 0);
}

TEST_F(FdStreamTest, CloseDropsPendingWritesAndClosesBothSides) {
  make_stream();
  ASSERT_GE(::fcntl(from_stream_.get(), F_SETPIPE_SZ, 4096), 4096);
  start();
  stream_->send(std::string(10000, 'a'));
  stream_->send("b");
  settle();
  ASSERT_GT(stream_->queued_bytes(), 0u);
  stream_->close();
  EXPECT_FALSE(stream_->output_open());
  EXPECT_FALSE(input_held_open());
  ASSERT_TRUE(run_until([&] { return closed_count_ > 0 && stream_->queued_bytes() == 0; }));
  drain_output();
  EXPECT_TRUE(output_ended_);
  EXPECT_EQ(output_.find('\n'), std::string::npos);  // neither frame arrived whole
  EXPECT_TRUE(session_->closed());
  EXPECT_EQ(closed_count_, 1);
}

TEST_F(FdStreamTest, DestroyingAStreamThatNeverStartedClosesBothFds) {
  make_stream();
  stream_.reset();
  EXPECT_FALSE(input_held_open());
  drain_output();
  EXPECT_TRUE(output_ended_);
}

}  // namespace
}  // namespace sluice::transport
