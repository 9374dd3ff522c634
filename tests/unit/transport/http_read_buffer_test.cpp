// The read buffer of an HTTP connection sized for what it reads: room that grows as a body's
// bytes arrive, given back after its message, and what that room does to Beast's reads of a
// megabyte body (counted through a stream that forwards to a real socket).
#include "transport/http_read_buffer.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::transport {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Socket = asio::local::stream_protocol::socket;

std::string_view readable(const beast::flat_buffer& buffer) {
  return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

TEST(HttpReadBuffer, ABodyGetsRoomAsItsBytesArriveUpToOneLargeRead) {
  constexpr std::uint64_t kClaimed = std::uint64_t{16} << 20;
  beast::flat_buffer claimed;  // a head that says 16 MiB, none of it arrived yet
  make_room_for_body(claimed, 0, kClaimed);
  EXPECT_GE(claimed.capacity() - claimed.size(), kFirstBodyRoom);
  EXPECT_LT(claimed.capacity(), 2 * kFirstBodyRoom);

  beast::flat_buffer arriving;  // 20 KiB of it arrived: room for as much again
  make_room_for_body(arriving, 20 * 1024, kClaimed);
  EXPECT_GE(arriving.capacity() - arriving.size(), 20u * 1024);
  EXPECT_LT(arriving.capacity(), kBodyReadBytes);

  beast::flat_buffer flowing;  // a megabyte arrived: reads of 64 KiB, no more
  make_room_for_body(flowing, std::size_t{1} << 20, kClaimed);
  EXPECT_GE(flowing.capacity() - flowing.size(), kBodyReadBytes);
  EXPECT_LT(flowing.capacity(), 2 * kBodyReadBytes);

  beast::flat_buffer ending;  // 3,000 bytes still to come: no more room than that
  make_room_for_body(ending, std::size_t{1} << 20, std::uint64_t{3000});
  EXPECT_GE(ending.capacity() - ending.size(), 3000u);
  EXPECT_LT(ending.capacity(), kFirstBodyRoom);

  beast::flat_buffer chunked;  // no length: a chunked body
  make_room_for_body(chunked, std::size_t{1} << 20, boost::none);
  EXPECT_GE(chunked.capacity() - chunked.size(), kBodyReadBytes);
}

TEST(HttpReadBuffer, RoomKeepsWhatIsBufferedAndIsNotMadeTwice) {
  beast::flat_buffer buffer;
  const std::string start = "POST /mcp HTTP/1.1\r\n";
  buffer.commit(asio::buffer_copy(buffer.prepare(start.size()), asio::buffer(start)));
  make_room_for_body(buffer, kBodyReadBytes, boost::none);
  EXPECT_EQ(readable(buffer), start);
  const std::size_t capacity = buffer.capacity();
  make_room_for_body(buffer, kBodyReadBytes, boost::none);
  EXPECT_EQ(buffer.capacity(), capacity);
}

TEST(HttpReadBuffer, TheRoomGoesBackAfterTheMessageButWhatIsBufferedStays) {
  beast::flat_buffer buffer;
  make_room_for_body(buffer, kBodyReadBytes, boost::none);
  const std::string next = "GET /mcp HTTP/1.1\r\n";  // a pipelined next request
  buffer.commit(asio::buffer_copy(buffer.prepare(next.size()), asio::buffer(next)));
  release_body_room(buffer);
  EXPECT_LE(buffer.capacity(), kIdleReadBufferBytes);
  EXPECT_EQ(readable(buffer), next);

  beast::flat_buffer head_sized;
  head_sized.reserve(1024);
  release_body_room(head_sized);
  EXPECT_EQ(head_sized.capacity(), 1024u);  // a buffer a head needs is kept as it is
}

// A stream that forwards its reads to a socket and counts them.
class CountingStream {
 public:
  using executor_type = Socket::executor_type;
  explicit CountingStream(Socket& socket) : socket_(socket) {}
  executor_type get_executor() { return socket_.get_executor(); }
  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    ++reads;
    return socket_.async_read_some(buffers, std::forward<Token>(token));
  }
  std::size_t reads = 0;

 private:
  Socket& socket_;
};

// Reads one request of `body_bytes` through Beast as the front end does: the head first, then
// the body a read at a time, with or without the body's room. Returns the reads the body took.
std::size_t reads_of_a_body(std::size_t body_bytes, bool with_room) {
  asio::io_context io;
  Socket client(io), server(io);
  asio::local::connect_pair(client, server);
  const std::string request =
      "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body_bytes) +
      "\r\n\r\n" + std::string(body_bytes, 'x');
  CountingStream stream(server);
  std::size_t body_reads = 0;
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await asio::async_write(client, asio::buffer(request), asio::use_awaitable);
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        beast::flat_buffer buffer;
        http::request_parser<http::string_body> parser;
        parser.body_limit(body_bytes + 1);
        co_await http::async_read_header(stream, buffer, parser, asio::use_awaitable);
        const std::size_t head_reads = stream.reads;
        while (!parser.is_done()) {
          if (with_room) {
            make_room_for_body(buffer, parser.get().body().size(),
                               parser.content_length_remaining());
          }
          co_await http::async_read_some(stream, buffer, parser, asio::use_awaitable);
        }
        body_reads = stream.reads - head_reads;
        done = parser.get().body().size() == body_bytes;
      },
      asio::detached);
  io.run_for(std::chrono::seconds(30));
  EXPECT_TRUE(done);
  return body_reads;
}

TEST(HttpReadBuffer, AMegabyteBodyIsReadInFewLargeReadsWithItsRoom) {
  constexpr std::size_t kMegabyte = std::size_t{1} << 20;
  const std::size_t with_room = reads_of_a_body(kMegabyte, true);
  const std::size_t without = reads_of_a_body(kMegabyte, false);
  // 4, 4, 8, 16 and 32 KiB, then reads of 64 KiB: 20 at best; a socket may hand over less.
  EXPECT_LE(with_room, 64u) << "without the room: " << without;
  EXPECT_GT(without, 4 * with_room);  // what the room is for: about 2,000 reads of 512 bytes
}

}  // namespace
}  // namespace sluice::transport
