#include "transport/fd_stream.hpp"

#include "core/log.hpp"
#include "core/spawn.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <vector>

namespace sluice::transport {
namespace {

constexpr std::size_t kFrameHeadKept = 4096;  // enough to find the id of an oversized frame

// A message above a pipe's default buffer (64 KiB on Linux) crosses it in 16 rounds per MiB of
// the writer filling it and the reader waking to empty it. A pipe that carried one is given
// 1 MiB, once: pipes that only ever carry small messages keep the default. Best effort: an
// unprivileged process may ask for at most /proc/sys/fs/pipe-max-size, and the kernel refuses
// a user past its allowance of pipe pages (the pipe then keeps its size).
constexpr std::size_t kGrowPipeAbove = 64 * 1024;

int grown_pipe_bytes() {
  static const int bytes = [] {
    int max = 1 << 20;
    if (FILE* f = std::fopen("/proc/sys/fs/pipe-max-size", "re")) {
      if (std::fscanf(f, "%d", &max) != 1 || max <= 0) max = 1 << 20;
      std::fclose(f);
    }
    return std::min(1 << 20, max);
  }();
  return bytes;
}

void grow_pipe(int fd, bool& tried) {
  if (tried || fd < 0) return;
  tried = true;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  if (fcntl(fd, F_GETPIPE_SZ) < grown_pipe_bytes())
    (void)fcntl(fd, F_SETPIPE_SZ, grown_pipe_bytes());
}

bool pollable(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// The open WriteBatches of this thread, and the streams they hold frames for.
thread_local int batch_depth = 0;
thread_local std::vector<std::shared_ptr<FdStream>> held_streams;

}  // namespace

WriteBatch::WriteBatch() noexcept { ++batch_depth; }

WriteBatch::~WriteBatch() {
  if (--batch_depth > 0) return;
  // A write may end a stream, whose owner may then send elsewhere: taken as a list of its own,
  // whose memory goes back to the thread's list after (no allocation per batch).
  while (!held_streams.empty()) {
    std::vector<std::shared_ptr<FdStream>> streams;
    streams.swap(held_streams);
    for (auto& stream : streams) {
      stream->held_ = false;
      stream->write_held();
    }
    streams.clear();
    if (held_streams.empty()) held_streams.swap(streams);
  }
}

std::shared_ptr<FdStream> FdStream::create(asio::io_context& io, int in_fd, int out_fd,
                                           const core::Limits& limits, OverlongLine overlong) {
  return std::shared_ptr<FdStream>(new FdStream(io, in_fd, out_fd, limits, overlong));
}

FdStream::FdStream(asio::io_context& io, int in_fd, int out_fd, const core::Limits& limits,
                   OverlongLine overlong)
    : io_(io),
      limits_(limits),
      input_(io),
      output_(io),
      splitter_(limits.max_message_bytes, kFrameHeadKept),
      overlong_(overlong) {
  if (in_fd >= 0) {
    if (pollable(in_fd)) {
      input_.assign(in_fd);
    } else {
      raw_in_fd_ = in_fd;
    }
  }
  if (out_fd >= 0) {
    output_.assign(out_fd);
    // A held batch is written at once (write_held): the fd must take what it can and say
    // would_block, not block. (Asio makes it non-blocking at its first wait anyway.)
    boost::system::error_code ec;
    output_.non_blocking(true, ec);
  }
}

FdStream::~FdStream() {
  if (raw_in_fd_ >= 0) ::close(raw_in_fd_);
}

void FdStream::start(std::shared_ptr<mcp::Session> session, std::function<void()> on_closed) {
  session_ = std::move(session);
  on_closed_ = std::move(on_closed);
  // Should the loop die of an exception, the stream ends as it would at EOF (the session
  // fails its pending requests, the owner is told), instead of going silent.
  core::spawn(io_, read_loop(), "a stream's reader",
              [self = shared_from_this()] { self->finish(true); });
}

asio::awaitable<void> FdStream::read_loop() {
  auto self = shared_from_this();
  std::array<char, 65536> buf;
  const bool end_at_limit = overlong_ == OverlongLine::end_stream;
  auto deliver = [this, end_at_limit](const core::Line& line) {
    if (!session_ || violation_) return;  // nothing after a violation is taken
    if (line.total_bytes > kGrowPipeAbove && input_.is_open()) {
      grow_pipe(input_.native_handle(), input_grown_);
    }
    if (line.truncated) {
      session_->on_oversized_frame(line.text, line.total_bytes);
      violation_ = end_at_limit;
    } else if (line.owned != nullptr) {
      session_->on_frame(std::move(*line.owned));  // a long line: no copy
    } else {
      session_->on_frame(std::string(line.text));
    }
  };
  for (;;) {
    std::size_t n = 0;
    if (raw_in_fd_ >= 0) {
      ssize_t r = ::read(raw_in_fd_, buf.data(), buf.size());
      if (r <= 0) break;
      n = static_cast<std::size_t>(r);
    } else {
      if (!input_.is_open()) break;
      boost::system::error_code ec;
      n = co_await input_.async_read_some(asio::buffer(buf),
                                          asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
    }
    {
      WriteBatch batch;
      splitter_.feed(std::string_view(buf.data(), n), deliver);
    }
    if (end_at_limit && !violation_ && splitter_.overflowing()) {
      // Past the limit with no end in sight: the peer is not waited for (its line may never
      // end). The answer it belongs to, when its id is in the head, fails as too large.
      violation_ = true;
      if (session_) session_->on_oversized_frame(splitter_.kept(), splitter_.pending_bytes());
    }
    if (violation_) {
      finish(false);  // the input stays open and unread until close()
      co_return;
    }
    if (raw_in_fd_ >= 0) co_await asio::post(io_, asio::use_awaitable);  // stay fair
  }
  splitter_.finish(deliver);
  finish(false);
}

void FdStream::send(std::string frame) {
  if (finished_ || !output_.is_open()) return;
  if (queued_bytes() + frame.size() > limits_.max_write_queue_bytes) {
    core::log::warn("{}: the peer is not reading; {} bytes queued; closing the stream",
                    session_ ? session_->label() : std::string("stream"), queued_bytes());
    finish(true);
    return;
  }
  if (frame.size() > kGrowPipeAbove) grow_pipe(output_.native_handle(), output_grown_);
  if (queued_.empty()) {
    queued_ = std::move(frame);  // the frame's own buffer is written: no copy of a large one
  } else {
    queued_ += frame;
  }
  queued_ += '\n';
  if (write_in_flight_ || held_) return;
  if (batch_depth > 0) {
    held_ = true;
    held_streams.push_back(shared_from_this());
    return;
  }
  start_write();
}

void FdStream::write_held() {
  if (write_in_flight_ || queued_.empty() || !output_.is_open()) return;
  boost::system::error_code ec;
  const std::size_t written = asio::write(output_, asio::buffer(queued_), ec);
  if (written == queued_.size()) {
    queued_.clear();
    if (close_output_after_write_) output_.close(ec);
    return;
  }
  start_write(written);  // the rest waits for room; an error is reported by its completion
}

void FdStream::start_write(std::size_t written) {
  if (queued_.empty() || !output_.is_open()) {
    if (close_output_after_write_ && output_.is_open()) {
      boost::system::error_code ec;
      output_.close(ec);
    }
    return;
  }
  writing_.swap(queued_);
  queued_.clear();
  write_in_flight_ = true;
  asio::async_write(output_, asio::buffer(writing_.data() + written, writing_.size() - written),
                    [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                      self->write_in_flight_ = false;
                      self->writing_.clear();
                      if (ec) {
                        // EPIPE: the peer went away; treat as a disconnect.
                        self->finish(true);
                        return;
                      }
                      self->start_write();
                    });
}

void FdStream::close_output() {
  if (write_in_flight_ || !queued_.empty()) {
    close_output_after_write_ = true;
    return;
  }
  boost::system::error_code ec;
  output_.close(ec);
}

void FdStream::close() {
  boost::system::error_code ec;
  if (held_ && !write_in_flight_ && !queued_.empty() && output_.is_open()) {
    // Frames held for the batch's end go as far as the fd takes them now, as they would
    // have had they been written when sent.
    (void)asio::write(output_, asio::buffer(queued_), ec);
  }
  input_.close(ec);
  output_.close(ec);
  if (raw_in_fd_ >= 0) {
    ::close(raw_in_fd_);
    raw_in_fd_ = -1;
  }
  queued_.clear();
}

void FdStream::finish(bool error) {
  if (finished_) return;
  finished_ = true;
  if (error) close();
  if (session_) session_->on_closed();
  if (on_closed_) {
    auto cb = std::move(on_closed_);
    on_closed_ = nullptr;
    cb();
  }
}

}  // namespace sluice::transport
