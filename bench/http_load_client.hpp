#pragma once
// The client side of sluice_http_load: the JSON-RPC messages it sends and the checks of what
// comes back (shared by the stdio and the HTTP phases), the latency summary, and a minimal
// keep-alive HTTP client (Beast, one connection, one io_context thread) that reads a reply
// as JSON or as an SSE stream.
#include "load_process.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::bench {

inline constexpr std::uint64_t kMaxBody = 64u << 20;
// The free room of a read buffer: Beast reads as much as that (up to 64 KiB), so a buffer
// left to its first size would read a 1 MiB message 512 bytes at a time.
inline constexpr std::size_t kReadRoom = 64 * 1024;
inline constexpr std::string_view kProtocolVersion = "2025-11-25";
inline constexpr std::string_view kEchoText = "hello";
inline constexpr std::string_view kInitialized =
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

// --- JSON-RPC messages and checks ------------------------------------------------------

std::string initialize_request(std::int64_t id);
// tools/call of `tool` with {"text": text}.
std::string echo_request(std::int64_t id, std::string_view tool, std::string_view text = kEchoText);
std::optional<std::int64_t> id_of(const boost::json::object& msg);
// A response (not a notification or server->client request) to `id` without an error;
// ProtocolError naming `what` otherwise.
void check_response(const boost::json::object& msg, std::int64_t id, std::string_view what);
// A tools/call echo answer: a result that is not isError and holds `text`, echoed.
void check_echo(const boost::json::object& msg, std::int64_t id, std::string_view text = kEchoText);
std::optional<boost::json::object> parse_object(std::string_view text);

// --- latency summary -------------------------------------------------------------------

struct Stats {
  std::size_t calls = 0;
  double wall_s = 0, calls_per_s = 0, p50_us = 0, p99_us = 0;
  double cpu_us_per_call = -1;  // the gateway's own CPU over the timed calls (-1: not measured)
};

Stats summarize(std::vector<double> us, double wall_s);
double micros_since(Clock::time_point t0);

// --- HTTP client -----------------------------------------------------------------------

struct Reply {
  unsigned status = 0;
  std::string content_type, session_id, body;
};

struct HttpTally {  // what the server did, for the report (one io thread: no locking)
  std::size_t json_replies = 0, sse_replies = 0, sse_priming = 0, server_closes = 0;
};

// One keep-alive connection to `server`. Not thread-safe: used from its io_context's thread.
class HttpClient {
 public:
  HttpClient(boost::asio::io_context& io, boost::asio::ip::tcp::endpoint server, HttpTally& tally);

  // One request/response on the connection (reconnecting if the server closed it); I/O
  // failures and timeouts become ProtocolErrors naming `what`.
  boost::asio::awaitable<Reply> request(std::string_view what, boost::beast::http::verb verb,
                                        std::string_view session, std::string body);
  void close();

 private:
  boost::asio::awaitable<Reply> exchange(boost::beast::http::verb verb, std::string_view session,
                                         std::string body);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  boost::asio::ip::tcp::endpoint server_;
  HttpTally& tally_;
  std::string host_;
  bool connected_ = false;
};

// ProtocolError unless the reply has HTTP status `want`.
void expect_status(const Reply& r, unsigned want, std::string_view what);
// The JSON-RPC response to `id` in a 200 reply: the body (application/json) or the SSE event
// whose data is that response (text/event-stream; other events are skipped).
boost::json::object response_in(const Reply& r, std::int64_t id, HttpTally& tally);
// initialize (200 + Mcp-Session-Id) then notifications/initialized (202); the session id.
boost::asio::awaitable<std::string> open_session(HttpClient& client, HttpTally& tally);

}  // namespace sluice::bench
