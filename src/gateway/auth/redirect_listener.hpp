#pragma once
// The loopback end of an interactive authorization (RFC 8252 section 7.3): a listener on
// 127.0.0.1 (a configured port, or any free one) that waits for the browser's one
// GET <path>?code=...&state=... , answers it with a short HTML page, and hands the query
// parameters to the flow. Other requests (a favicon) get 404 and the wait goes on.
//
// Bounds: a request head over kMaxRedirectHead bytes is refused (400); the whole wait ends at
// its deadline (authorization_failed, value-free). Nothing of the request is logged.
//
// Ownership: the listener owns its acceptor and the connection it is reading; the destructor
// closes both at once. Threading: the io_context thread given to open(); wait() at most once
// at a time.
#include "gateway/auth/fetch.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway::auth {

inline constexpr std::size_t kMaxRedirectHead = 16u * 1024u;

using QueryParams = std::vector<std::pair<std::string, std::string>>;

class RedirectListener {
 public:
  // Binds 127.0.0.1:`port` (0: a free port the kernel picks) for requests to `path`.
  static AuthResult<std::unique_ptr<RedirectListener>> open(boost::asio::io_context& io,
                                                            std::uint16_t port,
                                                            std::string path = "/callback");
  ~RedirectListener();
  RedirectListener(const RedirectListener&) = delete;
  RedirectListener& operator=(const RedirectListener&) = delete;

  std::uint16_t port() const { return port_; }
  // http://127.0.0.1:<port><path>
  std::string redirect_uri() const;

  // The query parameters of the first GET to the path, once its page is sent.
  boost::asio::awaitable<AuthResult<QueryParams>> wait(std::chrono::milliseconds deadline);

 private:
  RedirectListener(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor acceptor,
                   std::string path);
  boost::asio::awaitable<std::optional<QueryParams>> serve(boost::asio::ip::tcp::socket& socket);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::string path_;
  std::uint16_t port_ = 0;
  std::unique_ptr<boost::asio::ip::tcp::socket> current_;  // the connection being read
};

}  // namespace sluice::gateway::auth
