#pragma once
// Newline-delimited JSON-RPC over a pair of file descriptors: the client's stdin/stdout, or
// a child's stdout/stdin pipes. Reads are bounded by the message limit while reading; a line
// over it is handled per OverlongLine: dropped as it arrives and reported by size when it
// ends (the client: its connection survives), or a protocol violation (a downstream: the
// stream stops reading at the limit, without waiting for an end that may never come, and
// ends as closed). Writes are queued whole and coalesced, so two messages never interleave,
// and a peer that stops reading is cut off when the queue passes its cap. A pipe that carries
// a message larger than its buffer is enlarged once (grow_pipe in fd_stream.cpp), so that a
// large message crosses it in fewer rounds of the writer and the reader.
//
// The messages that the lines of one read produce (the answers of a batch a downstream wrote,
// the calls of a batch a client wrote) are written when the read's lines are all delivered
// (WriteBatch): one write per destination, made at once, with no completion to queue.
//
// Threading: the owning io_context thread only. Ownership: holds both fds (closed on
// close() or destruction); created by shared_ptr because its read loop keeps it alive.
#include "core/limits.hpp"
#include "core/line_splitter.hpp"
#include "mcp/session.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>

#include <functional>
#include <memory>
#include <string>

namespace sluice::transport {

namespace asio = boost::asio;

// What a line over the message limit does to the stream.
enum class OverlongLine {
  refuse,      // dropped as it arrives; the session is told its head and size at its end
  end_stream,  // at the limit: the session is told its head, reading stops, the stream ends
};

// While one is open on this thread, frames sent to any FdStream are held, and written when the
// outermost one closes (a stream already writing adds them to its next write as before).
class WriteBatch {
 public:
  WriteBatch() noexcept;
  ~WriteBatch();
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;
};

class FdStream : public mcp::Outbox, public std::enable_shared_from_this<FdStream> {
 public:
  // Takes ownership of both fds (they may be the same number only for distinct purposes:
  // in_fd is read, out_fd is written).
  static std::shared_ptr<FdStream> create(asio::io_context& io, int in_fd, int out_fd,
                                          const core::Limits& limits,
                                          OverlongLine overlong = OverlongLine::refuse);
  ~FdStream() override;

  // Starts reading; every frame goes to the session; at EOF or error the session is told
  // and on_closed runs once.
  void start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed);

  void send(std::string frame) override;
  // Closes the writing side (the peer sees EOF on its stdin); reading continues.
  void close_output();
  // Closes both sides; pending writes are dropped.
  void close();

  bool output_open() const { return output_.is_open(); }
  // With OverlongLine::end_stream: the stream ended because a line passed the limit. The
  // input fd stays open (unread) until close(), so the peer blocks instead of dying of
  // SIGPIPE before its owner ends it.
  bool protocol_violation() const { return violation_; }
  std::size_t queued_bytes() const { return queued_.size() + writing_.size(); }

 private:
  FdStream(asio::io_context& io, int in_fd, int out_fd, const core::Limits& limits,
           OverlongLine overlong);
  friend class WriteBatch;
  asio::awaitable<void> read_loop();
  // Writes what is queued without waiting: what the fd does not take is written by
  // start_write, from `written` on.
  void write_held();
  void start_write(std::size_t written = 0);
  void finish(bool error);

  asio::io_context& io_;
  const core::Limits& limits_;
  asio::posix::stream_descriptor input_;
  asio::posix::stream_descriptor output_;
  int raw_in_fd_ = -1;  // set when input is a regular file (not pollable): read directly
  core::LineSplitter splitter_;
  OverlongLine overlong_;
  bool violation_ = false;
  std::shared_ptr<mcp::Session> session_;
  std::function<void()> on_closed_;
  std::string queued_;
  std::string writing_;
  bool write_in_flight_ = false;
  bool held_ = false;  // in the open WriteBatch's list
  bool close_output_after_write_ = false;
  bool finished_ = false;
  bool input_grown_ = false;   // the input pipe's enlargement was tried
  bool output_grown_ = false;  // the output pipe's enlargement was tried
};

}  // namespace sluice::transport
