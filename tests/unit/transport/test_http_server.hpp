#pragma once
// A scripted HTTP/1.1 server for the HTTP client's unit tests: it listens on a loopback port
// of the test's own io_context and hands every accepted connection (after the TLS handshake,
// when it serves TLS) to the test's handler, which reads requests and writes whatever bytes
// the test needs, well-formed or not.
//
// Ownership: the server owns its acceptor and connections; its destructor closes them all.
// The handler is kept by the server and every connection's coroutine holds the server's state,
// so a coroutine that resumes after the server is gone only sees closed sockets.
// Threading: the io_context's thread.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::test {

struct TestRequest {
  std::string method;
  std::string target;
  std::string head;  // the request line and fields as received
  std::string body;
};

class TestConnection {
 public:
  TestConnection(boost::asio::ip::tcp::socket socket, std::size_t number);

  // Reads one request (its head, then a Content-Length body); nullopt at EOF or an error.
  boost::asio::awaitable<std::optional<TestRequest>> read_request();
  // Writes all of `bytes`; false when the peer is gone.
  boost::asio::awaitable<bool> write(std::string_view bytes);
  // Waits `how_long` of real (or simulated) time.
  boost::asio::awaitable<void> pause(std::chrono::milliseconds how_long);
  void close();

  std::size_t number() const { return number_; }  // 1 for the first accepted connection
  std::size_t bytes_written() const { return written_; }

 private:
  friend class TestHttpServer;
  boost::asio::ip::tcp::socket socket_;
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
  std::string pending_;
  std::size_t number_;
  std::size_t written_ = 0;
};

// A complete response with a Content-Length body.
std::string http_response(int status, std::string_view body, std::string_view fields = "");

struct TestTls {
  std::string cert_file;
  std::string key_file;
  bool tls11_only = false;  // offers TLS 1.1 and nothing else
};

class TestHttpServer {
 public:
  using Handler = std::function<boost::asio::awaitable<void>(TestConnection&)>;

  // Listens on `address` (an IP literal) port 0. Throws when it cannot.
  TestHttpServer(boost::asio::io_context& io, Handler handler,
                 const std::string& address = "127.0.0.1", std::optional<TestTls> tls = {},
                 int backlog = boost::asio::socket_base::max_listen_connections,
                 bool accepting = true);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  std::uint16_t port() const;
  // "http://127.0.0.1:<port><path>" (https when it serves TLS; `host` instead of the address).
  std::string url(std::string_view path = "/", std::string_view host = "") const;
  std::size_t accepted() const;
  // Connections whose handler has returned.
  std::size_t finished() const;
  // The SNI name of the last TLS handshake ("" when the client sent none).
  const std::string& last_server_name() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace sluice::test
