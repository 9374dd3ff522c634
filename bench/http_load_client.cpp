#include "http_load_client.hpp"

#include <algorithm>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <string>

namespace sluice::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace bj = boost::json;
using tcp = asio::ip::tcp;

// ---------------------------------------------------------------------------------------
// JSON-RPC messages and checks shared by both paths.

std::string initialize_request(std::int64_t id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"initialize","params":{"protocolVersion":")" + std::string(kProtocolVersion) +
         R"(","capabilities":{},"clientInfo":{"name":"sluice_http_load","version":"1"}}})";
}

std::string echo_request(std::int64_t id, std::string_view tool, std::string_view text) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":")" + std::string(tool) +
         R"(","arguments":{"text":)" + bj::serialize(bj::string_view(text.data(), text.size())) +
         "}}}";
}

std::optional<std::int64_t> id_of(const bj::object& msg) {
  const bj::value* id = msg.if_contains("id");
  if (id == nullptr || !id->is_int64()) return std::nullopt;
  return id->as_int64();
}

void check_response(const bj::object& msg, std::int64_t id, std::string_view what) {
  if (id_of(msg) != id) {
    throw ProtocolError(std::string(what) + ": answer has the wrong id: " + bj::serialize(msg));
  }
  if (msg.contains("error") || !msg.contains("result") || !msg.at("result").is_object()) {
    throw ProtocolError(std::string(what) + ": error answer: " + bj::serialize(msg));
  }
}

void check_echo(const bj::object& msg, std::int64_t id, std::string_view expected) {
  check_response(msg, id, "tools/call");
  const bj::object& result = msg.at("result").as_object();
  const bj::value* is_error = result.if_contains("isError");
  const bj::value* content = result.if_contains("content");
  const bj::value* first = content != nullptr && content->is_array() && !content->as_array().empty()
                               ? &content->as_array()[0]
                               : nullptr;
  const bj::value* text =
      first != nullptr && first->is_object() ? first->as_object().if_contains("text") : nullptr;
  bool ok = !(is_error != nullptr && is_error->is_bool() && is_error->as_bool()) &&
            text != nullptr && text->is_string() &&
            std::string_view(text->get_string()) == expected;
  if (!ok) {
    throw ProtocolError("tools/call: unexpected echo result: " + bj::serialize(msg).substr(0, 300));
  }
}

std::optional<bj::object> parse_object(std::string_view text) {
  boost::system::error_code ec;
  bj::value v = bj::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

Stats summarize(std::vector<double> us, double wall_s) {
  Stats s;
  s.calls = us.size();
  s.wall_s = wall_s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))];
  };
  s.p50_us = at(0.50);
  s.p99_us = at(0.99);
  s.calls_per_s = wall_s > 0 ? static_cast<double>(us.size()) / wall_s : 0;
  return s;
}

double micros_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------
// HTTP client: one keep-alive connection, Beast on an io_context (single thread).

HttpClient::HttpClient(asio::io_context& io, tcp::endpoint server, HttpTally& tally)
    : stream_(io),
      server_(server),
      tally_(tally),
      host_("127.0.0.1:" + std::to_string(server.port())) {
  buffer_.reserve(kReadRoom);
}

asio::awaitable<Reply> HttpClient::request(std::string_view what, http::verb verb,
                                           std::string_view session, std::string body) {
  try {
    co_return co_await exchange(verb, session, std::move(body));
  } catch (const boost::system::system_error& e) {
    close();
    throw ProtocolError(std::string(what) + ": " + e.code().message());
  }
}

void HttpClient::close() {
  if (!connected_) return;
  boost::system::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
  buffer_.clear();
  connected_ = false;
}

asio::awaitable<Reply> HttpClient::exchange(http::verb verb, std::string_view session,
                                            std::string body) {
  if (!connected_) {
    stream_.expires_after(kIoGuard);
    co_await stream_.async_connect(server_, asio::use_awaitable);
    stream_.socket().set_option(tcp::no_delay(true));
    connected_ = true;
  }
  http::request<http::string_body> req{verb, "/mcp", 11};
  req.set(http::field::host, host_);
  req.set(http::field::accept, "application/json, text/event-stream");
  req.set("MCP-Protocol-Version", kProtocolVersion);
  if (!session.empty()) req.set("Mcp-Session-Id", session);
  if (!body.empty()) {
    req.set(http::field::content_type, "application/json");
    req.body() = std::move(body);
  }
  req.prepare_payload();
  stream_.expires_after(kIoGuard);
  co_await http::async_write(stream_, req, asio::use_awaitable);
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  co_await http::async_read(stream_, buffer_, parser, asio::use_awaitable);
  stream_.expires_never();
  auto& res = parser.get();
  Reply reply{res.result_int(), std::string(res[http::field::content_type]),
              std::string(res["Mcp-Session-Id"]), std::move(res.body())};
  if (!res.keep_alive()) {
    ++tally_.server_closes;
    close();
  }
  co_return reply;
}

void expect_status(const Reply& r, unsigned want, std::string_view what) {
  if (r.status != want) {
    throw ProtocolError(std::string(what) + ": HTTP " + std::to_string(r.status) + " (want " +
                        std::to_string(want) + "), body: " + r.body.substr(0, 300));
  }
}

bj::object response_in(const Reply& r, std::int64_t id, HttpTally& tally) {
  std::string_view type = r.content_type;
  if (type.starts_with("application/json")) {
    ++tally.json_replies;
    auto msg = parse_object(r.body);
    if (!msg) throw ProtocolError("unparsable JSON reply: " + r.body.substr(0, 300));
    return std::move(*msg);
  }
  if (!type.starts_with("text/event-stream")) {
    throw ProtocolError("reply with Content-Type '" + std::string(type) + "'");
  }
  ++tally.sse_replies;
  std::optional<bj::object> found;
  std::string data;
  bool has_data = false, any_field = false;
  auto dispatch = [&] {
    if (any_field && !has_data) ++tally.sse_priming;
    if (has_data && data.empty()) ++tally.sse_priming;
    if (has_data && !data.empty() && !found) {
      auto msg = parse_object(data);
      if (!msg) throw ProtocolError("unparsable SSE data: " + data.substr(0, 300));
      if (!msg->contains("method") && id_of(*msg) == id) found = std::move(*msg);
    }
    data.clear();
    has_data = any_field = false;
  };
  std::string_view body = r.body;
  while (!body.empty()) {
    auto nl = body.find('\n');
    if (nl == std::string_view::npos) break;  // an unterminated last line is discarded (SSE)
    std::string_view line = body.substr(0, nl);
    body.remove_prefix(nl + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty()) {
      dispatch();
      continue;
    }
    if (line.front() == ':') continue;  // comment
    auto colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    any_field = true;
    if (field == "data") {
      if (has_data) data += '\n';
      data += value;
      has_data = true;
    }
  }
  if (!found)
    throw ProtocolError("SSE stream ended without the response to id " + std::to_string(id));
  return std::move(*found);
}

asio::awaitable<std::string> open_session(HttpClient& client, HttpTally& tally) {
  Reply init = co_await client.request("initialize", http::verb::post, "", initialize_request(1));
  expect_status(init, 200, "initialize");
  if (init.session_id.empty()) throw ProtocolError("initialize: no Mcp-Session-Id header");
  check_response(response_in(init, 1, tally), 1, "initialize");
  Reply ack = co_await client.request("notifications/initialized", http::verb::post,
                                      init.session_id, std::string(kInitialized));
  expect_status(ack, 202, "notifications/initialized");
  co_return init.session_id;
}

}  // namespace sluice::bench
