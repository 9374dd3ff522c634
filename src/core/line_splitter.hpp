#pragma once
// Splits a byte stream into newline-terminated lines with a hard cap per line, enforced
// while reading: a line never buffers more than `max_line_bytes`. The rest of an over-long
// line is dropped and the line is reported as truncated with its full size counted.
// Used for stdio MCP frames (cap = message limit; a truncated frame is refused whole) and
// for child stderr (cap 64 KiB; the prefix is logged with "(truncated)").
// Single-threaded; owns its buffer; no I/O.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice::core {

struct Line {
  std::string_view text;        // without the newline; the kept prefix when truncated
  bool truncated = false;       // the line was longer than the cap
  std::size_t total_bytes = 0;  // full length of the line as sent
  // When the line was gathered over several reads, the splitter's buffer holding exactly
  // `text`: the receiver may move it out instead of copying a large line (the splitter
  // starts afresh after the call either way). Null when `text` points into the chunk.
  std::string* owned = nullptr;
};

class LineSplitter {
 public:
  // keep_on_overflow: how much of an over-long line is kept for the report: all of the cap
  // for stderr (logged with "(truncated)"), a small head for MCP frames (enough to find the
  // request id the oversized answer belongs to), the rest dropped as it arrives.
  LineSplitter(std::size_t max_line_bytes, std::size_t keep_on_overflow)
      : max_(max_line_bytes),
        keep_(keep_on_overflow < max_line_bytes ? keep_on_overflow : max_line_bytes) {}

  // Calls on_line(const Line&) for every complete line in `chunk`. A Line's text is valid
  // only during the call.
  template <class F>
  void feed(std::string_view chunk, F&& on_line) {
    while (!chunk.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data(), '\n', chunk.size()));
      std::size_t take = nl ? static_cast<std::size_t>(nl - chunk.data()) : chunk.size();
      if (!nl) {
        append(chunk.substr(0, take));
        return;
      }
      if (pending_ == 0 && !over_ && take <= max_) {
        on_line(Line{chunk.substr(0, take), false, take});  // fast path: no copy
      } else {
        append(chunk.substr(0, take));
        line_done();
        on_line(Line{buffer_, over_, pending_, over_ ? nullptr : &buffer_});
        reset();
      }
      chunk.remove_prefix(take + 1);
    }
  }

  // At end of stream: reports an unterminated last line, if any.
  template <class F>
  void finish(F&& on_line) {
    if (pending_ > 0) {
      line_done();
      on_line(Line{buffer_, over_, pending_, over_ ? nullptr : &buffer_});
    }
    reset();
  }

  std::size_t buffered_bytes() const { return buffer_.size(); }
  // The line being received (not ended yet) is already over the cap: what was kept of it
  // and its size so far. A reader that will not wait for such a line to end stops here.
  bool overflowing() const { return over_; }
  std::string_view kept() const { return buffer_; }
  std::size_t pending_bytes() const { return pending_; }

 private:
  void append(std::string_view part) {
    pending_ += part.size();
    if (over_) return;
    std::size_t room = max_ - buffer_.size();
    if (part.size() <= room) {
      reserve_for(buffer_.size() + part.size());
      buffer_.append(part);
      return;
    }
    over_ = true;
    buffer_.append(part.substr(0, room));
    if (buffer_.size() > keep_) {
      buffer_.resize(keep_);
      buffer_.shrink_to_fit();
    }
  }

  // A line past kLong is given room for as much as the last long line at once, instead of
  // doubling up to it (each doubling copies all of it): a peer's large messages tend to be of
  // like size. Room left well beyond a line that came out shorter is given back as it ends.
  static constexpr std::size_t kLong = 64 * 1024;
  void reserve_for(std::size_t needed) {
    if (needed <= buffer_.capacity() || needed <= kLong) return;
    std::size_t want = std::max(needed, std::min(last_long_ + last_long_ / 8, max_));
    if (want == needed) want = std::min(std::max(needed, 2 * buffer_.capacity()), max_);
    buffer_.reserve(want);
  }
  void line_done() {
    if (pending_ <= kLong || over_) return;
    last_long_ = pending_;
    if (buffer_.capacity() > 2 * buffer_.size() + kLong) buffer_.shrink_to_fit();
  }

  void reset() {
    buffer_.clear();
    if (buffer_.capacity() > 1024 * 1024) buffer_.shrink_to_fit();
    pending_ = 0;
    over_ = false;
  }

  std::size_t max_;
  std::size_t keep_;
  std::string buffer_;
  std::size_t pending_ = 0;
  bool over_ = false;
  std::size_t last_long_ = 0;  // the size of the last line longer than kLong
};

}  // namespace sluice::core
