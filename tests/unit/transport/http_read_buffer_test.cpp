// The read buffer of an HTTP connection sized for what it reads: room for large reads while a
// body is on its way, given back after its message, and what that room does to Beast's reads
// of a megabyte body (counted through a stream that forwards to a real socket).
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

TEST(HttpReadBuffer, ABodyOnItsWayGetsRoomForItsRestUpToOneLargeRead) {
  beast::flat_buffer small;
  make_room_for_body(small, std::uint64_t{3000});
  EXPECT_GE(small.capacity() - small.size(), 3000u);
  EXPECT_LT(small.capacity(), kBodyReadBytes);

  beast::flat_buffer large;
  make_room_for_body(large, std::uint64_t{16} << 20);
  EXPECT_GE(large.capacity() - large.size(), kBodyReadBytes);

  beast::flat_buffer chunked;  // no length: a chunked body
  make_room_for_body(chunked, boost::none);
  EXPECT_GE(chunked.capacity() - chunked.size(), kBodyReadBytes);
}

TEST(HttpReadBuffer, RoomKeepsWhatIsBufferedAndIsNotMadeTwice) {
  beast::flat_buffer buffer;
  const std::string start = "POST /mcp HTTP/1.1\r\n";
  buffer.commit(asio::buffer_copy(buffer.prepare(start.size()), asio::buffer(start)));
  make_room_for_body(buffer, boost::none);
  EXPECT_EQ(readable(buffer), start);
  const std::size_t capacity = buffer.capacity();
  make_room_for_body(buffer, boost::none);
  EXPECT_EQ(buffer.capacity(), capacity);
}

TEST(HttpReadBuffer, TheRoomGoesBackAfterTheMessageButWhatIsBufferedStays) {
  beast::flat_buffer buffer;
  make_room_for_body(buffer, boost::none);
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
// the body, with or without the body's room. Returns the reads the body took.
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
        if (with_room) make_room_for_body(buffer, parser.content_length_remaining());
        co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
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
  // 16 reads of 64 KiB at best; a socket may hand over less at a time.
  EXPECT_LE(with_room, 64u) << "without the room: " << without;
  EXPECT_GT(without, 4 * with_room);  // what the room is for: about 2,000 reads of 512 bytes
}

}  // namespace
}  // namespace sluice::transport
