#pragma once
// A running gateway's status socket: a unix stream socket in the run folder
// (gateway_registry.hpp) that answers `sluice status` from a second terminal, on the
// gateway's own event loop and without ever blocking it.
//
// One connection is one exchange: the client sends the line `status`, the socket answers with
// one document (the answer function's text and a newline) and closes. It is bounded: a request
// longer than a few bytes is refused, at most `max_connections` are open at once (one more is
// closed at once, unanswered), and each connection has `connection_bound` in all, so a client
// that never sends, or never reads the answer, costs a socket and a buffer until then and never
// delays the loop. Only the same user may ask: the socket file is 0600 in a 0700 folder, and
// every accepted connection's peer (SO_PEERCRED) must be `allowed_uid`, else it is closed
// unanswered and counted.
//
// Ownership: the StatusSocket owns its listening socket, its connections and the socket file,
// which its destructor removes. Threading: the io_context thread it was opened with; close()
// and the destructor there too (the destructor after the loop has ended is fine).
#include "core/error.hpp"

#include <boost/asio/io_context.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace sluice::cli {

// The address a unix socket at `path` is bound or reached at: the path itself when it fits in
// sun_path, else /proc/self/fd/<its folder, held open>/<name>. Owns that folder's descriptor.
class SocketAddress {
 public:
  explicit SocketAddress(const std::filesystem::path& path);
  ~SocketAddress();
  SocketAddress(const SocketAddress&) = delete;
  SocketAddress& operator=(const SocketAddress&) = delete;
  // Empty when neither form fits (the folder could not be opened).
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int dir_fd_ = -1;
};

class StatusSocket {
 public:
  struct Options {
    std::filesystem::path path;
    uid_t allowed_uid = ::geteuid();  // the only user whose connections are answered
    std::size_t max_connections = 4;
    std::chrono::milliseconds connection_bound{5000};
  };
  // What the socket has done, for tests and logs.
  struct Counters {
    std::uint64_t answered = 0;
    std::uint64_t refused_user = 0;  // a peer of another user (or whose identity is unknown)
    std::uint64_t refused_busy = 0;  // max_connections were open
    std::uint64_t bad_requests = 0;  // not the line `status`, or longer than that
    std::uint64_t timed_out = 0;     // connection_bound passed
  };
  using Answer = std::function<std::string()>;

  // Binds `options.path` (a stale socket file there is replaced), sets it 0600 and listens.
  static core::Result<std::unique_ptr<StatusSocket>> open(boost::asio::io_context& io,
                                                          Options options, Answer answer);
  ~StatusSocket();
  StatusSocket(const StatusSocket&) = delete;
  StatusSocket& operator=(const StatusSocket&) = delete;

  // Starts accepting.
  void start();
  // Stops accepting and closes every open connection; the loop then has nothing of it left.
  void close();
  const Counters& counters() const;

  struct Impl;  // private to status_socket.cpp

 private:
  explicit StatusSocket(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // Shared with the coroutines of the connections, which may resume after close().
  std::shared_ptr<Impl> impl_;
};

}  // namespace sluice::cli
