#pragma once
// A deliberately small HTTP/1.1 client over plain POSIX sockets, for driving sluice's HTTP
// front end with requests a real library would refuse to produce: malformed, partial, slow.
// It writes exactly the bytes it is given and parses what comes back (Content-Length,
// chunked or read-until-close bodies; SSE events inside them). Loopback only. Every read
// is bounded by a guard and waits on socket readiness, never on a sleep.
//
// One HttpConnection owns one socket (closed at destruction); it is used from one thread.
#include "harness.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;
  Headers headers;
  std::string body;
  std::string head;  // the status line and header block, as received
  // The first header with that name (case-insensitive), or nullopt.
  std::optional<std::string> header(std::string_view name) const;
  // Everything received: head and (decoded) body.
  std::string all() const { return head + body; }
};

struct SseEvent {
  std::optional<std::string> id;
  std::string event;  // "" when the event had no `event:` field
  std::string data;   // the data lines joined with '\n'
};

class HttpConnection {
 public:
  // Connects to 127.0.0.1:port, from `source_ip` when given (any 127.x.y.z address is
  // loopback, which lets a test appear as a second client address). Throws on failure.
  explicit HttpConnection(int port, const std::string& source_ip = "");
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Caps the socket's receive buffer (SO_RCVBUF, which also stops the kernel growing it): a
  // large answer then fills the server's send buffer and leaves only as this side reads.
  void limit_receive_buffer(int bytes);
  // Writes all the bytes; false when the peer has closed or reset the connection.
  bool send(std::string_view bytes);
  // Reads the status line and headers; nullopt at EOF, on garbage or after the guard.
  std::optional<HttpResponse> read_head(std::chrono::milliseconds guard = kGuard);
  // After read_head: reads the whole body (per Content-Length, chunked, or until close).
  // nullopt after the guard or when the body is cut short.
  std::optional<std::string> read_body(std::chrono::milliseconds guard = kGuard);
  // After read_head of an event stream: the next SSE event; nullopt when the body ends or
  // after the guard.
  std::optional<SseEvent> read_event(std::chrono::milliseconds guard = kGuard);
  // read_head + read_body.
  std::optional<HttpResponse> read_response(std::chrono::milliseconds guard = kGuard);
  // Waits until the peer closes (EOF or reset), discarding anything it sends. True when
  // closed within the guard.
  bool wait_closed(std::chrono::milliseconds guard = kGuard);
  // True when the peer has closed the connection by now (non-blocking check).
  bool closed_now();
  // The local (client-side) port of the connection.
  int local_port() const;
  // True when the response body has fully arrived.
  bool body_done() const { return body_done_; }

 private:
  enum class BodyMode { kNone, kLength, kChunked, kUntilClose };
  // Reads once more from the socket into raw_; false at EOF, error or after the deadline.
  bool fill(std::chrono::steady_clock::time_point deadline);
  // Moves what raw_ holds of the body into decoded_, per the body mode.
  void decode();

  int fd_ = -1;
  bool eof_ = false;
  std::string raw_;      // received, not yet consumed
  std::string decoded_;  // body bytes decoded, not yet handed out
  BodyMode mode_ = BodyMode::kNone;
  enum class ChunkState { kSize, kData, kDataEnd, kTrailer };
  ChunkState chunk_ = ChunkState::kSize;
  std::size_t left_ = 0;  // kLength: bytes left; kChunked: bytes left in the current chunk
  bool body_done_ = true;
  bool bad_framing_ = false;
};

// A request written by hand: the request line, the headers in the order given, and the
// body; Content-Length is added for a non-empty body unless `headers` already carry one or
// a Transfer-Encoding.
std::string http_request(const std::string& method, const std::string& target,
                         const Headers& headers, const std::string& body = "");

// One request on a fresh connection, one response read back (nullopt when none arrived
// within the guard or the connection closed without one).
std::optional<HttpResponse> http_exchange(int port, const std::string& raw_request,
                                          const std::string& source_ip = "",
                                          std::chrono::milliseconds guard = kGuard);

// Parses every SSE event in a complete event-stream body.
std::vector<SseEvent> parse_sse(const std::string& body);

// True when every byte of `s` is visible ASCII (0x21-0x7e).
bool visible_ascii(std::string_view s);

// The VmRSS of a process in KiB, or -1 when it cannot be read.
long vm_rss_kib(pid_t pid);

}  // namespace sluice::test
