// The scripted HTTP server of the HTTP client's tests (see test_http_server.hpp).
#include "test_http_server.hpp"

#include "core/clock.hpp"
#include "core/spawn.hpp"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <openssl/ssl.h>

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_set>

namespace sluice::test {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {
constexpr auto kAwait = asio::use_awaitable;
}  // namespace

TestConnection::TestConnection(tcp::socket socket, std::size_t number)
    : socket_(std::move(socket)), number_(number) {}

asio::awaitable<std::optional<TestRequest>> TestConnection::read_request() {
  std::array<char, 4096> chunk{};
  auto read_more = [&]() -> asio::awaitable<bool> {
    error_code ec;
    std::size_t n = 0;
    if (tls_) {
      n = co_await tls_->async_read_some(asio::buffer(chunk), asio::redirect_error(kAwait, ec));
    } else {
      n = co_await socket_.async_read_some(asio::buffer(chunk), asio::redirect_error(kAwait, ec));
    }
    pending_.append(chunk.data(), n);
    co_return !ec || n > 0;
  };
  std::size_t end = 0;
  while ((end = pending_.find("\r\n\r\n")) == std::string::npos) {
    if (!co_await read_more()) co_return std::nullopt;
  }
  TestRequest request;
  request.head = pending_.substr(0, end + 2);
  pending_.erase(0, end + 4);
  const auto space = request.head.find(' ');
  request.method = request.head.substr(0, space);
  request.target = request.head.substr(space + 1, request.head.find(' ', space + 1) - space - 1);
  std::size_t length = 0;
  if (auto at = request.head.find("Content-Length: "); at != std::string::npos) {
    length = std::stoul(request.head.substr(at + 16));
  }
  while (pending_.size() < length) {
    if (!co_await read_more()) co_return std::nullopt;
  }
  request.body = pending_.substr(0, length);
  pending_.erase(0, length);
  co_return request;
}

asio::awaitable<bool> TestConnection::write(std::string_view bytes) {
  error_code ec;
  std::size_t n = 0;
  if (tls_) {
    n = co_await asio::async_write(*tls_, asio::buffer(bytes), asio::redirect_error(kAwait, ec));
  } else {
    n = co_await asio::async_write(socket_, asio::buffer(bytes), asio::redirect_error(kAwait, ec));
  }
  written_ += n;
  co_return !ec;
}

asio::awaitable<void> TestConnection::pause(std::chrono::milliseconds how_long) {
  core::Timer timer(socket_.get_executor(), how_long);
  error_code ec;
  co_await timer.async_wait(asio::redirect_error(kAwait, ec));
}

void TestConnection::close() {
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

std::string http_response(int status, std::string_view body, std::string_view fields) {
  return fmt::format("HTTP/1.1 {} X\r\nContent-Length: {}\r\n{}\r\n{}", status, body.size(), fields,
                     body);
}

struct TestHttpServer::State {
  State(asio::io_context& io, Handler handler)
      : io(io), acceptor(io), handler(std::move(handler)) {}

  // Static, with the state as a parameter: a coroutine starts after it is spawned, when the
  // server may already be gone.
  static asio::awaitable<void> accept_loop(std::shared_ptr<State> self) {
    while (self->acceptor.is_open()) {
      error_code ec;
      tcp::socket socket = co_await self->acceptor.async_accept(asio::redirect_error(kAwait, ec));
      if (ec) break;
      auto conn = std::make_shared<TestConnection>(std::move(socket), ++self->accepted);
      self->open.insert(conn.get());
      core::spawn(self->io, serve(self, conn), "a test HTTP connection");
    }
  }

  static asio::awaitable<void> serve(std::shared_ptr<State> self,
                                     std::shared_ptr<TestConnection> conn) {
    if (self->tls) {
      conn->tls_ = std::make_unique<ssl::stream<tcp::socket&>>(conn->socket_, *self->tls);
      error_code ec;
      co_await conn->tls_->async_handshake(ssl::stream_base::server,
                                           asio::redirect_error(kAwait, ec));
      const char* name = SSL_get_servername(conn->tls_->native_handle(), TLSEXT_NAMETYPE_host_name);
      self->last_server_name = name ? name : "";
      if (!ec && !self->closed) co_await self->handler(*conn);
    } else if (!self->closed) {
      co_await self->handler(*conn);
    }
    conn->close();
    self->open.erase(conn.get());
    ++self->finished;
  }

  asio::io_context& io;
  tcp::acceptor acceptor;
  Handler handler;
  std::optional<ssl::context> tls;
  std::unordered_set<TestConnection*> open;
  std::size_t accepted = 0;
  std::size_t finished = 0;
  std::string last_server_name;
  bool closed = false;
};

TestHttpServer::TestHttpServer(asio::io_context& io, Handler handler, const std::string& address,
                               std::optional<TestTls> tls, int backlog, bool accepting)
    : state_(std::make_shared<State>(io, std::move(handler))) {
  tcp::endpoint endpoint(asio::ip::make_address(address), 0);
  state_->acceptor.open(endpoint.protocol());
  if (endpoint.address().is_v6()) state_->acceptor.set_option(asio::ip::v6_only(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen(backlog);
  if (tls) {
    state_->tls.emplace(ssl::context::tls_server);
    SSL_CTX* ctx = state_->tls->native_handle();
    if (tls->tls11_only) {
      SSL_CTX_set_security_level(ctx, 0);
      SSL_CTX_set_min_proto_version(ctx, TLS1_1_VERSION);
      SSL_CTX_set_max_proto_version(ctx, TLS1_1_VERSION);
    }
    state_->tls->use_certificate_chain_file(tls->cert_file);
    state_->tls->use_private_key_file(tls->key_file, ssl::context::pem);
  }
  if (accepting) core::spawn(io, State::accept_loop(state_), "a test HTTP acceptor");
}

TestHttpServer::~TestHttpServer() {
  state_->closed = true;
  error_code ec;
  state_->acceptor.close(ec);
  for (TestConnection* conn : state_->open) conn->close();
}

std::uint16_t TestHttpServer::port() const { return state_->acceptor.local_endpoint().port(); }

std::string TestHttpServer::url(std::string_view path, std::string_view host) const {
  std::string where(host);
  if (where.empty()) {
    auto address = state_->acceptor.local_endpoint().address();
    where = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  }
  return fmt::format("{}://{}:{}{}", state_->tls ? "https" : "http", where, port(), path);
}

std::size_t TestHttpServer::accepted() const { return state_->accepted; }
std::size_t TestHttpServer::finished() const { return state_->finished; }
const std::string& TestHttpServer::last_server_name() const { return state_->last_server_name; }

}  // namespace sluice::test
