#include "cli/status_socket.hpp"

#include "../run_until.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

namespace sluice::cli {
namespace {
namespace fs = std::filesystem;
using sluice::test::run_until;

// A client of the status socket over a non-blocking descriptor, so that the test's own thread
// can run the loop while it waits.
class Client {
 public:
  explicit Client(const fs::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    SocketAddress address(path);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, address.text().c_str(), sizeof addr.sun_path - 1);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  void send(std::string_view text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  // Reads what is there; true once the server has closed (EOF or reset).
  bool drain() {
    char buf[65536];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        received_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) return true;
      return errno != EAGAIN && errno != EWOULDBLOCK;
    }
  }
  const std::string& received() const { return received_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

class StatusSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/sluice-socket-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir_ = name;
    options_.path = dir_ / "42.sock";
  }
  void TearDown() override {
    socket_.reset();
    fs::remove_all(dir_);
  }

  void open(std::string answer = R"({"pid":42})") {
    auto opened =
        StatusSocket::open(io_, options_, [answer = std::move(answer)] { return answer; });
    ASSERT_TRUE(opened) << opened.error().message;
    socket_ = std::move(*opened);
    socket_->start();
  }

  // Runs the loop until the client has been closed by the server.
  bool closed_by_server(Client& client) {
    return run_until(
        io_, [&] { return client.drain(); }, std::chrono::seconds(10));
  }

  fs::path dir_;
  boost::asio::io_context io_;
  StatusSocket::Options options_;
  std::unique_ptr<StatusSocket> socket_;
};

TEST_F(StatusSocketTest, AnswersTheStatusLineWithTheDocumentThenCloses) {
  open();
  Client client(options_.path);
  ASSERT_TRUE(client.connected());
  client.send("status\n");
  ASSERT_TRUE(closed_by_server(client));
  EXPECT_EQ(client.received(), "{\"pid\":42}\n");
  EXPECT_EQ(socket_->counters().answered, 1u);
}

TEST_F(StatusSocketTest, TheSocketFileIsOnlyTheOwnersWhateverTheUmask) {
  const mode_t old = ::umask(0);
  open();
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::lstat(options_.path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(StatusSocketTest, APeerOfAnotherUserIsClosedUnanswered) {
  options_.allowed_uid = ::geteuid() + 1;  // this process plays the other user
  open();
  Client client(options_.path);
  client.send("status\n");
  ASSERT_TRUE(closed_by_server(client));
  EXPECT_EQ(client.received(), "");
  EXPECT_EQ(socket_->counters().refused_user, 1u);
  EXPECT_EQ(socket_->counters().answered, 0u);
}

TEST_F(StatusSocketTest, ARequestOtherThanStatusIsClosedUnanswered) {
  open();
  Client wrong(options_.path);
  wrong.send("health\n");
  Client long_line(options_.path);
  long_line.send("status please, and everything else\n");
  ASSERT_TRUE(closed_by_server(wrong));
  ASSERT_TRUE(closed_by_server(long_line));
  EXPECT_EQ(wrong.received(), "");
  EXPECT_EQ(long_line.received(), "");
  EXPECT_EQ(socket_->counters().bad_requests, 2u);
}

TEST_F(StatusSocketTest, AClientThatNeverSendsIsClosedAtTheBound) {
  options_.connection_bound = std::chrono::milliseconds(200);
  open();
  Client silent(options_.path);
  ASSERT_TRUE(closed_by_server(silent));
  // The bound closes the socket first; its exchange then ends and counts it.
  EXPECT_TRUE(run_until(io_, [&] { return socket_->counters().timed_out == 1; }));
  EXPECT_EQ(socket_->counters().bad_requests, 0u);
}

TEST_F(StatusSocketTest, OneConnectionOverTheCapIsClosedAtOnce) {
  options_.max_connections = 2;
  open();
  Client a(options_.path), b(options_.path), c(options_.path);
  ASSERT_TRUE(closed_by_server(c));
  EXPECT_EQ(socket_->counters().refused_busy, 1u);
  EXPECT_FALSE(a.drain());
  EXPECT_FALSE(b.drain());
  // The first two are still served.
  a.send("status\n");
  ASSERT_TRUE(closed_by_server(a));
  EXPECT_EQ(a.received(), "{\"pid\":42}\n");
}

TEST_F(StatusSocketTest, AClientThatNeverReadsDoesNotDelayTheNext) {
  // An answer far larger than a socket buffer: the first client's write cannot complete.
  const std::string big = "\"" + std::string(8u << 20, 'x') + "\"";
  open(big);
  Client stuck(options_.path);
  stuck.send("status\n");
  Client next(options_.path);
  next.send("status\n");
  ASSERT_TRUE(closed_by_server(next));
  EXPECT_EQ(next.received().size(), big.size() + 1);
  EXPECT_EQ(socket_->counters().answered, 1u);
}

TEST_F(StatusSocketTest, AfterCloseNothingIsAcceptedAndTheDestructorRemovesTheFile) {
  open();
  Client open_one(options_.path);
  socket_->close();
  ASSERT_TRUE(closed_by_server(open_one));
  Client late(options_.path);
  EXPECT_FALSE(late.connected());
  EXPECT_TRUE(fs::exists(options_.path));
  socket_.reset();
  EXPECT_FALSE(fs::exists(options_.path));
}

TEST_F(StatusSocketTest, APathTooLongForSunPathIsReachedThroughItsFolder) {
  fs::path deep = dir_ / std::string(60, 'd') / std::string(60, 'e');
  fs::create_directories(deep);
  options_.path = deep / "42.sock";
  ASSERT_GE(options_.path.string().size(), sizeof(sockaddr_un::sun_path));
  open();
  Client client(options_.path);
  ASSERT_TRUE(client.connected());
  client.send("status\n");
  ASSERT_TRUE(closed_by_server(client));
  EXPECT_EQ(client.received(), "{\"pid\":42}\n");
}

}  // namespace
}  // namespace sluice::cli
