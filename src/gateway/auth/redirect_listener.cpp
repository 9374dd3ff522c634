#include "gateway/auth/redirect_listener.hpp"

#include "core/clock.hpp"

#include <fmt/format.h>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <optional>
#include <string_view>

namespace sluice::gateway::auth {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
namespace {

constexpr std::string_view kDonePage =
    "<!doctype html><meta charset=\"utf-8\"><title>sluice</title>"
    "<p>sluice received the authorization response. You can close this window.</p>";

std::string response(int status, std::string_view reason, std::string_view body) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n"
      "Cache-Control: no-store\r\nConnection: close\r\n\r\n{}",
      status, reason, body.size(), body);
}

// The request target of "GET <target> HTTP/1.1", or nullopt for another method or form.
std::optional<std::string_view> get_target(std::string_view head) {
  if (!head.starts_with("GET ")) return std::nullopt;
  const std::size_t end = head.find(' ', 4);
  if (end == std::string_view::npos) return std::nullopt;
  return head.substr(4, end - 4);
}

}  // namespace

AuthResult<std::unique_ptr<RedirectListener>> RedirectListener::open(asio::io_context& io,
                                                                     std::uint16_t port,
                                                                     std::string path) {
  boost::system::error_code ec;
  tcp::acceptor acceptor(io);
  const tcp::endpoint at(asio::ip::make_address_v4("127.0.0.1"), port);
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return auth_error(
        AuthFailure::authorization_failed,
        fmt::format("the redirect listener cannot listen on 127.0.0.1 port {}", port));
  }
  return std::unique_ptr<RedirectListener>(
      new RedirectListener(io, std::move(acceptor), std::move(path)));
}

RedirectListener::RedirectListener(asio::io_context& io, tcp::acceptor acceptor, std::string path)
    : io_(io), acceptor_(std::move(acceptor)), path_(std::move(path)) {
  boost::system::error_code ec;
  port_ = acceptor_.local_endpoint(ec).port();
}

RedirectListener::~RedirectListener() {
  boost::system::error_code ec;
  if (current_) current_->close(ec);
  acceptor_.close(ec);
}

std::string RedirectListener::redirect_uri() const {
  return fmt::format("http://127.0.0.1:{}{}", port_, path_);
}

asio::awaitable<AuthResult<QueryParams>> RedirectListener::wait(
    std::chrono::milliseconds deadline) {
  core::Timer timer(io_, deadline);
  bool expired = false;
  timer.async_wait([this, &expired](boost::system::error_code ec) {
    if (ec) return;
    expired = true;
    boost::system::error_code ignored;
    acceptor_.cancel(ignored);
    if (current_) current_->close(ignored);
  });
  while (!expired) {
    current_ = std::make_unique<tcp::socket>(io_);
    boost::system::error_code ec;
    co_await acceptor_.async_accept(*current_, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    std::optional<QueryParams> params = co_await serve(*current_);
    current_.reset();
    if (params) {
      timer.cancel();
      co_return std::move(*params);
    }
  }
  timer.cancel();
  current_.reset();
  co_return auth_error(AuthFailure::authorization_failed,
                       "no authorization response reached the redirect listener in time");
}

asio::awaitable<std::optional<QueryParams>> RedirectListener::serve(tcp::socket& socket) {
  asio::streambuf buffer(kMaxRedirectHead);
  boost::system::error_code ec;
  co_await asio::async_read_until(socket, buffer, "\r\n\r\n",
                                  asio::redirect_error(asio::use_awaitable, ec));
  std::string reply;
  std::optional<QueryParams> out;
  if (ec) {
    if (ec != asio::error::not_found) co_return std::nullopt;  // closed or cancelled
    reply = response(400, "Bad Request", "request head too large");
  } else {
    std::string_view head(static_cast<const char*>(buffer.data().data()), buffer.size());
    std::optional<std::string_view> target = get_target(head);
    auto parsed =
        target ? boost::urls::parse_origin_form(*target) : boost::urls::parse_origin_form("/");
    if (target && parsed && parsed->encoded_path() == path_) {
      out.emplace();
      for (const auto& p : parsed->params()) out->emplace_back(p.key, p.value);
      reply = response(200, "OK", kDonePage);
    } else {
      reply = response(404, "Not Found", "not found");
    }
  }
  co_await asio::async_write(socket, asio::buffer(reply),
                             asio::redirect_error(asio::use_awaitable, ec));
  socket.shutdown(tcp::socket::shutdown_both, ec);
  co_return out;
}

}  // namespace sluice::gateway::auth
