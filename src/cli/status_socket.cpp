#include "cli/status_socket.hpp"

#include "core/clock.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <map>

namespace sluice::cli {
namespace asio = boost::asio;
using Local = asio::local::stream_protocol;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kRequest = "status\n";
// A pause after a failed accept (out of descriptors, say), so the loop does not spin on it.
constexpr std::chrono::milliseconds kAcceptPause{50};

// Whether the peer of `socket` runs as `uid` (SO_PEERCRED: the credentials it had at connect).
bool peer_is(Local::socket& socket, uid_t uid) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return false;
  }
  return len == sizeof cred && cred.uid == uid;
}

}  // namespace

SocketAddress::SocketAddress(const std::filesystem::path& path) {
  const std::string full = path.string();
  if (full.size() < sizeof(sockaddr_un::sun_path)) {
    text_ = full;
    return;
  }
  dir_fd_ = ::open(path.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) return;
  std::string via = "/proc/self/fd/" + std::to_string(dir_fd_) + "/" + path.filename().string();
  if (via.size() < sizeof(sockaddr_un::sun_path)) text_ = std::move(via);
}

SocketAddress::~SocketAddress() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

// One open connection: its socket and its bound.
struct StatusLink {
  explicit StatusLink(Local::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}
  Local::socket socket;
  core::Timer timer;
  bool expired = false;
};

struct StatusSocket::Impl {
  Impl(asio::io_context& io, Options o, Answer a)
      : io(io), options(std::move(o)), answer(std::move(a)), acceptor(io), pause(io) {}

  asio::io_context& io;
  Options options;
  Answer answer;
  Local::acceptor acceptor;
  core::Timer pause;
  std::map<std::uint64_t, std::shared_ptr<StatusLink>> links;
  std::uint64_t next_link = 0;
  bool closed = false;
  Counters counters;
};

namespace {

void end_link(StatusSocket::Impl& impl, std::uint64_t id) {
  auto it = impl.links.find(id);
  if (it == impl.links.end()) return;
  boost::system::error_code ec;
  it->second->timer.cancel();
  it->second->socket.close(ec);
  impl.links.erase(it);
}

// One exchange: the request line, the answer, the close; the bound closes it early.
asio::awaitable<void> serve_link(std::shared_ptr<StatusSocket::Impl> impl, std::uint64_t id,
                                 std::shared_ptr<StatusLink> link) {
  link->timer.expires_after(impl->options.connection_bound);
  link->timer.async_wait([link](boost::system::error_code ec) {
    if (ec) return;
    link->expired = true;
    link->socket.close(ec);
  });
  asio::streambuf request(kRequest.size());
  auto [read_error, n] = co_await asio::async_read_until(link->socket, request, '\n', kAwait);
  const bool asked =
      !read_error && n == kRequest.size() &&
      std::string_view(static_cast<const char*>(request.data().data()), n) == kRequest;
  if (asked && !impl->closed) {
    const std::string document = impl->answer() + "\n";
    auto [write_error, written] =
        co_await asio::async_write(link->socket, asio::buffer(document), kAwait);
    if (!write_error) ++impl->counters.answered;
  } else if (!link->expired && !impl->closed) {
    ++impl->counters.bad_requests;
  }
  if (link->expired) ++impl->counters.timed_out;
  end_link(*impl, id);
}

asio::awaitable<void> accept_loop(std::shared_ptr<StatusSocket::Impl> impl) {
  while (!impl->closed) {
    auto [ec, socket] = co_await impl->acceptor.async_accept(kAwait);
    if (impl->closed) co_return;
    if (ec) {
      impl->pause.expires_after(kAcceptPause);
      co_await impl->pause.async_wait(kAwait);
      continue;
    }
    boost::system::error_code ignored;
    if (!peer_is(socket, impl->options.allowed_uid)) {
      ++impl->counters.refused_user;
      core::log::warn("status socket: refused a connection from another user");
      socket.close(ignored);
      continue;
    }
    if (impl->links.size() >= impl->options.max_connections) {
      ++impl->counters.refused_busy;
      socket.close(ignored);
      continue;
    }
    const std::uint64_t id = impl->next_link++;
    auto link = std::make_shared<StatusLink>(std::move(socket));
    impl->links.emplace(id, link);
    core::spawn(impl->io, serve_link(impl, id, link), "a status socket connection",
                [impl, id] { end_link(*impl, id); });
  }
}

}  // namespace

core::Result<std::unique_ptr<StatusSocket>> StatusSocket::open(asio::io_context& io,
                                                               Options options, Answer answer) {
  auto impl = std::make_shared<Impl>(io, std::move(options), std::move(answer));
  const std::filesystem::path& path = impl->options.path;
  SocketAddress address(path);
  if (address.text().empty()) {
    return core::make_error("the status socket's path " + path.string() + " is too long");
  }
  ::unlink(address.text().c_str());  // named by this process's pid: a dead one's leftover
  boost::system::error_code ec;
  impl->acceptor.open(Local(), ec);
  if (!ec) impl->acceptor.bind(Local::endpoint(address.text()), ec);
  // The folder is 0700 already; the file itself is narrowed before anyone can be accepted.
  if (!ec && ::chmod(address.text().c_str(), 0600) != 0) {
    ec = boost::system::error_code(errno, boost::system::system_category());
  }
  if (!ec) impl->acceptor.listen(8, ec);
  if (ec) {
    ::unlink(address.text().c_str());
    return core::make_error("cannot listen on the status socket " + path.string());
  }
  return std::unique_ptr<StatusSocket>(new StatusSocket(std::move(impl)));
}

StatusSocket::~StatusSocket() {
  close();
  ::unlink(impl_->options.path.c_str());
}

void StatusSocket::start() {
  core::spawn(impl_->io, accept_loop(impl_), "the status socket's listener");
}

void StatusSocket::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  impl_->pause.cancel();
  while (!impl_->links.empty()) end_link(*impl_, impl_->links.begin()->first);
}

const StatusSocket::Counters& StatusSocket::counters() const { return impl_->counters; }

}  // namespace sluice::cli
