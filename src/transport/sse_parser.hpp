#pragma once
// An incremental parser of a text/event-stream body (the WHATWG EventSource format): bytes go
// in as they are read, in pieces of any size, and each event comes out as soon as the blank
// line that ends it has arrived. Private to src/transport/ (the HTTP client and its tests).
//
// What it reads: the fields `event`, `data` (several lines joined with '\n'), `id` (one with a
// NUL is ignored) and `retry` (digits only, else ignored); lines starting with ':' are
// comments; unknown fields are ignored; lines end with LF, CRLF or CR, also when a CR and its
// LF arrive in different pieces; one leading byte order mark is skipped. A block with no data
// line is delivered only when it set an id or a retry (with empty data), so that the caller
// sees what to resume from and how long to wait; an unfinished block at the end of the stream
// is never delivered.
//
// Bounds: the bytes of one event (its fields and the line being read) are capped while
// reading; past the cap feed() fails and the parser is spent. Ownership and threading: a
// plain value used by one thread; it keeps only the unfinished line and event.
#include "transport/http_client.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::transport {

class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Parses `bytes`, calling `sink` for every event they complete. False once an event went
  // over the cap (nothing more is parsed).
  bool feed(std::string_view bytes, const SseSink& sink);

 private:
  // One complete line (without its end), possibly assembled across pieces.
  void line(std::string_view text, const SseSink& sink);
  void field(std::string_view name, std::string_view value);
  void dispatch(const SseSink& sink);
  std::size_t event_bytes() const;

  std::size_t max_event_bytes_;
  bool started_ = false;    // the first bytes were seen (a BOM may be split)
  std::string bom_prefix_;  // the part of a leading BOM seen so far
  bool after_cr_ = false;   // the last piece ended with CR: a leading LF ends nothing
  bool spent_ = false;
  std::string partial_;  // the unfinished line
  SseEvent pending_;     // the block read so far
  bool has_data_ = false;
  bool has_control_ = false;  // an id or a retry in this block
};

}  // namespace sluice::transport
