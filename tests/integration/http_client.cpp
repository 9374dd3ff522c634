#include "http_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <stdexcept>

namespace sluice::test {

namespace {

// One `field: value` line of an SSE event applied to `ev`; false for a field SSE ignores.
bool apply_sse_field(const std::string& line, SseEvent& ev, bool& data_seen) {
  auto colon = line.find(':');
  std::string field = line.substr(0, colon);
  std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.erase(0, 1);
  if (field == "id") {
    ev.id = value;
  } else if (field == "event") {
    ev.event = value;
  } else if (field == "data") {
    if (data_seen) ev.data += "\n";
    ev.data += value;
    data_seen = true;
  } else {
    return false;
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

int ms_until(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<long>(0, left.count()));
}

constexpr std::size_t kMaxReceived = 256u << 20;  // a runaway server fails the read, not us

}  // namespace

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  std::string want = lower(name);
  for (const auto& [k, v] : headers) {
    if (lower(k) == want) return v;
  }
  return std::nullopt;
}

HttpConnection::HttpConnection(int port, const std::string& source_ip) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  if (!source_ip.empty()) {
    sockaddr_in src{};
    src.sin_family = AF_INET;
    src.sin_port = 0;
    if (::inet_pton(AF_INET, source_ip.c_str(), &src.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
      ::close(fd_);
      throw std::runtime_error("bind to the source address failed");
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect to 127.0.0.1 failed");
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void HttpConnection::limit_receive_buffer(int bytes) {
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

HttpConnection::~HttpConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool HttpConnection::send(std::string_view bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

bool HttpConnection::fill(std::chrono::steady_clock::time_point deadline) {
  if (eof_) return false;
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, ms_until(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    if (raw_.size() + decoded_.size() > kMaxReceived) return false;
    raw_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
}

std::optional<HttpResponse> HttpConnection::read_head(std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  for (;;) {
    auto end = raw_.find("\r\n\r\n");
    while (end == std::string::npos) {
      if (!fill(deadline)) return std::nullopt;
      end = raw_.find("\r\n\r\n");
    }
    HttpResponse r;
    r.head = raw_.substr(0, end + 4);
    raw_.erase(0, end + 4);
    std::size_t line_end = r.head.find("\r\n");
    std::string status_line = r.head.substr(0, line_end);
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return std::nullopt;
    r.status = std::atoi(status_line.c_str() + 9);
    std::size_t pos = line_end + 2;
    while (pos < end) {
      std::size_t eol = r.head.find("\r\n", pos);
      std::string line = r.head.substr(pos, eol - pos);
      pos = eol + 2;
      auto colon = line.find(':');
      if (colon == std::string::npos) return std::nullopt;
      r.headers.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    if (r.status >= 100 && r.status < 200) continue;  // interim response: the real one follows
    decoded_.clear();
    bad_framing_ = false;
    body_done_ = false;
    chunk_ = ChunkState::kSize;
    left_ = 0;
    auto te = r.header("Transfer-Encoding");
    auto cl = r.header("Content-Length");
    if (r.status == 204 || r.status == 304) {
      mode_ = BodyMode::kNone;
    } else if (te && lower(*te).find("chunked") != std::string::npos) {
      mode_ = BodyMode::kChunked;
    } else if (cl) {
      mode_ = BodyMode::kLength;
      left_ = static_cast<std::size_t>(std::strtoull(cl->c_str(), nullptr, 10));
    } else {
      mode_ = BodyMode::kUntilClose;
    }
    if (mode_ == BodyMode::kNone || (mode_ == BodyMode::kLength && left_ == 0)) {
      body_done_ = true;
    }
    decode();
    return r;
  }
}

void HttpConnection::decode() {
  if (body_done_ || bad_framing_) return;
  switch (mode_) {
    case BodyMode::kNone:
      body_done_ = true;
      return;
    case BodyMode::kUntilClose:
      decoded_ += raw_;
      raw_.clear();
      if (eof_) body_done_ = true;
      return;
    case BodyMode::kLength: {
      std::size_t n = std::min(left_, raw_.size());
      decoded_.append(raw_, 0, n);
      raw_.erase(0, n);
      left_ -= n;
      if (left_ == 0) body_done_ = true;
      return;
    }
    case BodyMode::kChunked:
      for (;;) {
        if (chunk_ == ChunkState::kSize) {
          auto eol = raw_.find("\r\n");
          if (eol == std::string::npos) return;
          std::string size_line = raw_.substr(0, eol);
          raw_.erase(0, eol + 2);
          char* end = nullptr;
          left_ = static_cast<std::size_t>(std::strtoull(size_line.c_str(), &end, 16));
          if (end == size_line.c_str()) {
            bad_framing_ = true;
            return;
          }
          chunk_ = left_ == 0 ? ChunkState::kTrailer : ChunkState::kData;
        } else if (chunk_ == ChunkState::kData) {
          std::size_t n = std::min(left_, raw_.size());
          decoded_.append(raw_, 0, n);
          raw_.erase(0, n);
          left_ -= n;
          if (left_ > 0) return;
          chunk_ = ChunkState::kDataEnd;
        } else if (chunk_ == ChunkState::kDataEnd) {
          if (raw_.size() < 2) return;
          if (raw_.compare(0, 2, "\r\n") != 0) {
            bad_framing_ = true;
            return;
          }
          raw_.erase(0, 2);
          chunk_ = ChunkState::kSize;
        } else {  // trailer lines, then the empty line that ends the message
          auto eol = raw_.find("\r\n");
          if (eol == std::string::npos) return;
          raw_.erase(0, eol + 2);
          if (eol == 0) {
            body_done_ = true;
            return;
          }
        }
      }
  }
}

std::optional<std::string> HttpConnection::read_body(std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  decode();
  while (!body_done_) {
    if (bad_framing_) return std::nullopt;
    bool more = fill(deadline);
    decode();
    if (!more && !body_done_) return std::nullopt;
  }
  std::string out = std::move(decoded_);
  decoded_.clear();
  return out;
}

std::optional<SseEvent> HttpConnection::read_event(std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  for (;;) {
    decode();
    // Parse whole lines from decoded_ until a blank line ends an event that had a field.
    SseEvent ev;
    bool any_field = false;
    bool data_seen = false;
    std::size_t pos = 0;
    for (;;) {
      auto nl = decoded_.find('\n', pos);
      if (nl == std::string::npos) break;
      std::string line = decoded_.substr(pos, nl - pos);
      pos = nl + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) {
        if (any_field) {
          decoded_.erase(0, pos);
          return ev;
        }
        decoded_.erase(0, pos);  // a comment-only or empty block: skip it
        pos = 0;
        continue;
      }
      if (line[0] == ':') continue;
      if (!apply_sse_field(line, ev, data_seen)) continue;
      any_field = true;
    }
    if (body_done_ || bad_framing_) return std::nullopt;
    bool more = fill(deadline);
    decode();
    if (!more && !body_done_) return std::nullopt;
  }
}

std::optional<HttpResponse> HttpConnection::read_response(std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  auto r = read_head(guard);
  if (!r) return std::nullopt;
  auto body = read_body(std::chrono::milliseconds(ms_until(deadline)));
  if (!body) return std::nullopt;
  r->body = std::move(*body);
  return r;
}

bool HttpConnection::wait_closed(std::chrono::milliseconds guard) {
  auto deadline = std::chrono::steady_clock::now() + guard;
  while (!eof_) {
    raw_.clear();
    if (!fill(deadline) && !eof_) return false;
  }
  return true;
}

int HttpConnection::local_port() const {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  return ntohs(addr.sin_port);
}

bool HttpConnection::closed_now() {
  if (eof_) return true;
  fill(std::chrono::steady_clock::now());
  return eof_;
}

std::string http_request(const std::string& method, const std::string& target,
                         const Headers& headers, const std::string& body) {
  std::string out = method + " " + target + " HTTP/1.1\r\n";
  bool has_length = false;
  for (const auto& [k, v] : headers) {
    out.append(k).append(": ").append(v).append("\r\n");
    auto lk = lower(k);
    if (lk == "content-length" || lk == "transfer-encoding") has_length = true;
  }
  if (!has_length && !body.empty()) {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  out += "\r\n";
  out += body;
  return out;
}

std::optional<HttpResponse> http_exchange(int port, const std::string& raw_request,
                                          const std::string& source_ip,
                                          std::chrono::milliseconds guard) {
  HttpConnection c(port, source_ip);
  // A server may answer and close before reading all of a large body; the answer counts.
  c.send(raw_request);
  return c.read_response(guard);
}

std::vector<SseEvent> parse_sse(const std::string& body) {
  std::vector<SseEvent> out;
  SseEvent ev;
  bool any_field = false, data_seen = false;
  std::size_t pos = 0;
  while (pos < body.size()) {
    auto nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();
    std::string line = body.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (any_field) out.push_back(ev);
      ev = SseEvent{};
      any_field = data_seen = false;
      continue;
    }
    if (line[0] == ':') continue;
    if (!apply_sse_field(line, ev, data_seen)) continue;
    any_field = true;
  }
  return out;
}

bool visible_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

long vm_rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

}  // namespace sluice::test
