// The HTTP request path of the Streamable HTTP front end, without a network: the input's
// bytes go to a real transport::HttpServerImpl over one end of a socket pair (Beast's
// request parser with sluice's head, body and header caps, the framing refusals, the
// Host/Origin/bearer checks, the routes of /mcp, /health and /metrics, the sessions and
// their SSE streams), and what the server writes back is read from the other end.
//
// Input: a selector byte (whether a bearer token is required, an extra allowed host and
// origin, a small body cap), then the bytes of a first connection, then optionally a NUL
// byte and the bytes of a second connection, in which `{SID}` is replaced by the last
// Mcp-Session-Id the server gave on the first (so requests of a live session are reached).
// Each connection's bytes are sent whole, then its sending side is shut down.
//
// Properties: no crash, leak, UB or hang; no coroutine ends in an exception; the server ends
// every connection it was given; what it writes is a sequence of well-formed HTTP/1.x
// responses (only an SSE stream may be cut short); every session ends at stop.
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "fuzz_check.hpp"
#include "mcp/session.hpp"
#include "rpc/message.hpp"
#include "transport/http_server_impl.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <sys/socket.h>

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

using namespace sluice;
namespace asio = boost::asio;
namespace http = boost::beast::http;
using local = asio::local::stream_protocol;

constexpr std::string_view kToken = "fuzz-token";
constexpr std::string_view kSessionPlaceholder = "{SID}";
constexpr std::string_view kInitializeResult =
    R"({"protocolVersion":"2025-11-25","capabilities":{},)"
    R"("serverInfo":{"name":"fuzz","version":"1"}})";

// Answers every request at once: initialize with a result naming a revision, "fail" with
// an error, tools/call after a progress notification on the call's stream, the rest `{}`.
class Answering : public mcp::Handler {
 public:
  explicit Answering(std::shared_ptr<mcp::Session> session) : session_(std::move(session)) {}
  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    const std::string& method = request.message().method();
    if (method == "initialize") {
      request.respond_result(kInitializeResult);
    } else if (method == "fail") {
      request.respond_error(rpc::code::kInvalidParams, "refused");
    } else {
      if (method == "tools/call") {
        session_->notify("notifications/progress", R"({"progressToken":1,"progress":1})",
                         request.message().id());
      }
      request.respond_result("{}");
    }
    co_return;
  }
  void on_notification(const rpc::Message&) override {}

 private:
  std::shared_ptr<mcp::Session> session_;
};

struct Exchange {
  std::string sent;
  std::string received;
  bool done = false;
};

asio::awaitable<void> client(local::socket socket, Exchange& exchange) {
  boost::system::error_code ec;
  co_await asio::async_write(socket, asio::buffer(exchange.sent),
                             asio::redirect_error(asio::use_awaitable, ec));
  socket.shutdown(local::socket::shutdown_send, ec);
  for (;;) {
    char buf[16384];
    std::size_t n = co_await socket.async_read_some(asio::buffer(buf),
                                                    asio::redirect_error(asio::use_awaitable, ec));
    exchange.received.append(buf, n);
    if (ec) break;
  }
  exchange.done = true;
}

// Sends one connection's bytes to the server and reads everything it answers.
std::string connect(asio::io_context& io, transport::HttpServerImpl& server, std::string bytes) {
  int fds[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  asio::ip::tcp::socket server_end(io);
  server_end.assign(asio::ip::tcp::v4(), fds[0]);
  local::socket client_end(io);
  client_end.assign(local(), fds[1]);
  Exchange exchange{std::move(bytes), {}, false};
  server.serve(std::move(server_end));
  core::spawn(io, client(std::move(client_end), exchange), "the fuzz client");
  io.run();
  io.restart();
  FUZZ_CHECK(exchange.done);
  return std::move(exchange.received);
}

// The responses on one connection, in order: each must parse; only the last may be cut
// short, and only when it is an SSE stream. Returns the last Mcp-Session-Id given.
std::string check_responses(std::string_view bytes) {
  std::string session_id;
  while (!bytes.empty()) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(boost::none);
    boost::system::error_code ec;
    while (!parser.is_done() && !bytes.empty()) {
      std::size_t used = parser.put(asio::buffer(bytes.data(), bytes.size()), ec);
      bytes.remove_prefix(used);
      if (ec == http::error::need_more) {
        ec = {};
        if (used == 0) break;
        continue;
      }
      FUZZ_CHECK(!ec);
    }
    if (!parser.is_done()) {
      parser.put_eof(ec);
      const bool sse = parser.is_header_done() &&
                       parser.get()[http::field::content_type].starts_with("text/event-stream");
      FUZZ_CHECK(!ec || (sse && bytes.empty()));
    }
    if (!parser.is_header_done()) break;
    std::string_view sid = parser.get()["Mcp-Session-Id"];
    if (!sid.empty()) session_id = std::string(sid);
  }
  return session_id;
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  for (std::size_t at = 0;;) {
    std::size_t next = text.find(from, at);
    out.append(text.substr(at, next - at));
    if (next == std::string_view::npos) return out;
    out.append(to);
    at = next + from.size();
  }
}

void run(std::string_view data) {
  if (data.empty()) return;
  const auto selector = static_cast<std::uint8_t>(data.front());
  data.remove_prefix(1);
  core::Limits limits;
  if (selector & 4) limits.max_message_bytes = 256;
  transport::HttpOptions options;
  options.port = 0;
  if (selector & 1) options.auth_token = std::string(kToken);
  if (selector & 2) {
    options.allowed_hosts.push_back("example.test");
    options.allowed_origins.push_back("https://app.example.test:8443");
  }
  transport::HttpHooks hooks;
  hooks.make_handler = [](std::shared_ptr<mcp::Session> session) {
    return std::make_unique<Answering>(std::move(session));
  };
  hooks.health = [](bool detailed) { return std::string(detailed ? "{\"d\":1}" : "{}"); };
  hooks.metrics = [] { return std::string("fuzz_metric 1\n"); };

  asio::io_context io;
  auto server = std::make_shared<transport::HttpServerImpl>(io, options, hooks, limits);
  const std::size_t nul = data.find('\0');
  std::string session_id = check_responses(connect(io, *server, std::string(data.substr(0, nul))));
  if (nul != std::string_view::npos) {
    std::string second = replace_all(data.substr(nul + 1), kSessionPlaceholder, session_id);
    check_responses(connect(io, *server, std::move(second)));
  }
  server->stop();
  io.run();
  server->release_retired();
  FUZZ_CHECK(server->session_count() == 0);
  FUZZ_CHECK(core::coroutine_failures() == 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::signal(SIGPIPE, SIG_IGN);
  // Log lines are formatted (and escaped) as always, then written where nobody reads them.
  sluice::core::log::configure(sluice::core::log::Level::debug, {.file = "/dev/null"});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
