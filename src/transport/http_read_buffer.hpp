#pragma once
// The read buffer of an HTTP connection, sized for what it reads. Beast's reads take as much
// as the buffer's free room, at least 512 bytes and at most 64 KiB, and a buffer grows only
// when a read asks for more room than it has: a buffer sized for a head would read a body of
// a megabyte 512 bytes at a time, each read with its own wake-up and deadline timer. A body
// on its way gets room as its bytes arrive, up to reads of 64 KiB, given back once its
// message is read, so that an idle kept-alive connection holds a small buffer. Used by both
// the server's connections and the client's.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/optional/optional.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace sluice::transport {

// Beast's largest single read of a message (http::async_read_some's own bound).
inline constexpr std::size_t kBodyReadBytes = 64 * 1024;
// The room of a body's first read, and what a buffer may keep between messages.
inline constexpr std::size_t kFirstBodyRoom = 4 * 1024;
inline constexpr std::size_t kIdleReadBufferBytes = 4 * 1024;

// Free room for a read of `bytes`, what is buffered kept.
inline void make_room(boost::beast::flat_buffer& buffer, std::size_t bytes) {
  if (buffer.capacity() - buffer.size() < bytes) buffer.reserve(buffer.size() + bytes);
}

// Room for the next read of a body of which `received` bytes have arrived and `remaining`
// are still to come (none: a chunked body, or one that ends with the connection): as much as
// has arrived (at least kFirstBodyRoom), at most what is to come and kBodyReadBytes. The
// reads of a body that does arrive double up to 64 KiB; a head that only claims a large body
// gets no more than a small buffer.
inline void make_room_for_body(boost::beast::flat_buffer& buffer, std::size_t received,
                               const boost::optional<std::uint64_t>& remaining) {
  std::size_t want = std::min(std::max(received, kFirstBodyRoom), kBodyReadBytes);
  if (remaining) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, *remaining));
  make_room(buffer, want);
}

// The body's room given back once its message is read; what is buffered (the start of a
// pipelined next message) is kept.
inline void release_body_room(boost::beast::flat_buffer& buffer) {
  if (buffer.capacity() > kIdleReadBufferBytes) buffer.shrink_to_fit();
}

}  // namespace sluice::transport
