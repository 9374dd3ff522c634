// The Streamable HTTP front end against RFC 9112 framing and hostile Host/Origin values:
// every refusal has its status line (then the connection closes), echoes nothing of what was
// sent, and sluice still answers a good request afterwards.
#include "http_fixture.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace sluice::test {
namespace {

// A request sent on a fresh connection is answered with `status`, then the connection closes.
void expect_status_then_close(int port, const std::string& raw, int status) {
  HttpConnection c(port);
  ASSERT_TRUE(c.send(raw));
  auto r = c.read_response();
  ASSERT_TRUE(r.has_value()) << "no status line: the connection closed without an answer";
  EXPECT_EQ(r->status, status) << r->all();
  if (r->head.rfind("HTTP/1.1 ", 0) == 0) {
    EXPECT_EQ(strcasecmp(r->header("Connection").value_or("").c_str(), "close"), 0) << r->head;
  }
  EXPECT_EQ(r->all().find(kSentinel), std::string::npos) << r->all();
  EXPECT_TRUE(c.wait_closed()) << "the connection stayed open after the refusal";
}

std::string ping_post(const std::string& host_line, const std::string& more = "") {
  std::string body = rpc("1", "ping");
  return "POST /mcp HTTP/1.1\r\n" + host_line +
         "Content-Type: application/json\r\nAccept: application/json\r\n" + more +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_F(HttpFrontEnd, OnlyNothingOrAPortMayFollowTheHost) {
  start();
  auto sid = initialize();
  const std::string s = kSentinel;
  for (const std::string& host_value : std::vector<std::string>{
           "[::1]." + s + ".example", "[::1]@" + s + ".example", "[::1]:abc" + s,
           "[::1]:", "[::1]" + s, "[::1]:80" + s, "[::1]:80:81", "[::1",
           "localhost." + s + ".example", "localhost:abc" + s, "localhost:", "localhost:80:81",
           "127.0.0.1@" + s, "127.0.0.1:80@" + s, "::1", "::1:80"}) {
    SCOPED_TRACE(host_value);
    auto h = headers(sid);
    set_header(h, "Host", host_value);
    expect_refused(post(rpc("1", "ping"), h), 403);
    // Nor can such a Host create a session.
    auto i = headers();
    set_header(i, "Host", host_value);
    auto r = post(rpc("1", "initialize", kInitParams), i);
    expect_refused(r, 403);
    EXPECT_FALSE(r.header("Mcp-Session-Id").has_value()) << r.head;
  }
  for (const std::string& host_value : {std::string("[::1]"), "[::1]:" + std::to_string(port_),
                                        std::string("[::1]:80"), std::string("localhost:80")}) {
    SCOPED_TRACE(host_value);
    auto h = headers(sid);
    set_header(h, "Host", host_value);
    EXPECT_EQ(post(rpc("1", "ping"), h).status, 200);
  }
  expect_serving();
}

TEST_F(HttpFrontEnd, OnlyNothingOrAPortMayFollowTheOriginsHost) {
  start();
  auto sid = initialize();
  const std::string s = kSentinel;
  for (const std::string& origin : std::vector<std::string>{
           "http://[::1]." + s + ".example", "http://[::1]@" + s + ".example",
           "http://[::1]:abc" + s, "https://[::1]" + s, "http://localhost:abc" + s,
           "http://127.0.0.1@" + s, std::string("")}) {
    SCOPED_TRACE(origin);
    auto h = headers(sid);
    h.emplace_back("Origin", origin);
    expect_refused(post(rpc("1", "ping"), h), 403);
    auto i = headers();
    i.emplace_back("Origin", origin);
    auto r = post(rpc("1", "initialize", kInitParams), i);
    expect_refused(r, 403);
    EXPECT_FALSE(r.header("Mcp-Session-Id").has_value()) << r.head;
  }
  auto h = headers(sid);
  h.emplace_back("Origin", "http://[::1]:5173");
  EXPECT_EQ(post(rpc("1", "ping"), h).status, 200);
  expect_serving();
}

TEST_F(HttpFrontEnd, ExactlyOneHostHeaderOrTheRequestIs400) {
  start();
  const std::string good = "Host: " + host() + "\r\n";
  const std::string bad = std::string("Host: ") + kSentinel + ".example\r\n";
  for (const auto& [name, raw] : std::vector<std::pair<std::string, std::string>>{
           {"good then bad", ping_post(good + bad)},
           {"bad then good", ping_post(bad + good)},
           {"good twice", ping_post(good + good)},
           {"none", ping_post("")},
           {"empty", ping_post("Host:\r\n")},
           {"none, HTTP/1.0", "GET /health HTTP/1.0\r\n\r\n"},
       }) {
    SCOPED_TRACE(name);
    expect_status_then_close(port_, raw, 400);
  }
  sentinels_.insert(kSentinel);
  expect_serving();
}

TEST_F(HttpFrontEnd, TwoOriginHeadersAre400) {
  start();
  const std::string good = "Origin: http://localhost:5173\r\n";
  const std::string bad = std::string("Origin: http://") + kSentinel + ".example\r\n";
  const std::string host_line = "Host: " + host() + "\r\n";
  expect_status_then_close(port_, ping_post(host_line, good + bad), 400);
  expect_status_then_close(port_, ping_post(host_line, bad + good), 400);
  expect_status_then_close(port_, ping_post(host_line, good + good), 400);
  sentinels_.insert(kSentinel);
  expect_serving();
}

TEST_F(HttpFrontEnd, ATransferCodingOtherThanChunkedIs501) {
  start();
  auto sid = initialize();
  std::string body = rpc("1", "ping");
  auto chunked_post = [&](const std::string& te_lines) {
    std::string head = "POST /mcp HTTP/1.1\r\nHost: " + host() +
                       "\r\nContent-Type: application/json\r\nAccept: application/json\r\n"
                       "Mcp-Session-Id: " +
                       sid + "\r\n" + te_lines + "\r\n";
    char size[32];
    std::snprintf(size, sizeof size, "%zx", body.size());
    return head + size + "\r\n" + body + "\r\n0\r\n\r\n";
  };
  for (std::string te : {"Transfer-Encoding: gzip, chunked\r\n",
                         "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
                         "Transfer-Encoding: identity, chunked\r\n",
                         "Transfer-Encoding: x-sentinel-7f3a, chunked\r\n"}) {
    SCOPED_TRACE(te);
    expect_status_then_close(port_, chunked_post(te), 501);
  }
  // Codings that do not end with (exactly one) chunked leave the length unknown: 400.
  for (std::string te : {"Transfer-Encoding: gzip\r\n", "Transfer-Encoding: chunked, gzip\r\n",
                         "Transfer-Encoding: chunked, chunked\r\n",
                         "Transfer-Encoding: chunked;x=1\r\n", "Transfer-Encoding: \r\n"}) {
    SCOPED_TRACE(te);
    expect_status_then_close(port_, chunked_post(te), 400);
  }
  // Plain chunked is served, in any letter case and with list whitespace.
  for (std::string te : {"Transfer-Encoding: chunked\r\n", "Transfer-Encoding: Chunked\r\n",
                         "Transfer-Encoding: , chunked \r\n"}) {
    SCOPED_TRACE(te);
    HttpConnection c(port_);
    ASSERT_TRUE(c.send(chunked_post(te)));
    auto r = c.read_response();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << r->all();
  }
  sentinels_.insert("sentinel-7f3a");
  expect_serving();
}

// Bytes that arrived on sluice's end of the connection from `client_port` to `server_port`
// and that sluice has not read yet (rx_queue in /proc/net/tcp); -1 when the socket is not
// listed.
long unread_by_server(int server_port, int client_port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the column names
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    if (!(fields >> slot >> local >> remote >> state >> queues)) continue;
    auto port_of = [](const std::string& address) {
      return std::stoi(address.substr(address.find(':') + 1), nullptr, 16);
    };
    if (port_of(local) != server_port || port_of(remote) != client_port) continue;
    return std::stol(queues.substr(queues.find(':') + 1), nullptr, 16);
  }
  return -1;
}

// A body is mostly read with its head: what of it came along is parsed from the buffer, and
// only the rest is read. Neither a request right behind it nor a body cut short may be lost.
TEST_F(HttpFrontEnd, RequestsBackToBackAndABodyInPiecesAreEachAnsweredWhole) {
  start();
  auto sid = initialize();
  const std::string host_line = "Host: " + host() + "\r\n";
  const std::string session_line = "Mcp-Session-Id: " + sid + "\r\n";
  auto post_of = [&](const std::string& id) {
    std::string body = rpc(id, "ping");
    return "POST /mcp HTTP/1.1\r\n" + host_line +
           "Content-Type: application/json\r\nAccept: application/json\r\n" + session_line +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  HttpConnection c(port_);
  ASSERT_TRUE(c.send(post_of("71") + post_of("72")));
  for (const char* id : {"71", "72"}) {
    auto r = c.read_response();
    ASSERT_TRUE(r.has_value()) << "no answer to " << id;
    EXPECT_EQ(r->status, 200) << r->all();
    EXPECT_NE(r->body.find(std::string(R"("id":)") + id + ","), std::string::npos) << r->body;
  }
  const std::string cut = post_of("73");
  const std::size_t half = cut.size() - 12;  // inside the body
  ASSERT_TRUE(c.send(cut.substr(0, half)));
  // The rest is sent only once sluice has read the head and the start of the body.
  const auto give_up = std::chrono::steady_clock::now() + kGuard;
  while (unread_by_server(port_, c.local_port()) != 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "sluice never read the head";
    std::this_thread::yield();
  }
  ASSERT_TRUE(c.send(cut.substr(half)));
  auto r = c.read_response();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->all();
  EXPECT_NE(r->body.find(R"("id":73,)"), std::string::npos) << r->body;
  expect_serving();
}

TEST_F(HttpFrontEnd, BadFramingGetsA400StatusLineThenTheConnectionCloses) {
  start();
  const std::string h = "Host: " + host() + "\r\n";
  const std::string ct = "Content-Type: application/json\r\nAccept: application/json\r\n";
  const std::string post_head = "POST /mcp HTTP/1.1\r\n" + h + ct;
  for (const auto& [name, raw] : std::vector<std::pair<std::string, std::string>>{
           {"negative length", post_head + "Content-Length: -5\r\n\r\n"},
           {"length not a number", post_head + "Content-Length: 2x\r\n\r\n{}"},
           {"two lengths", post_head + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"},
           {"a list of lengths", post_head + "Content-Length: 2, 3\r\n\r\n{}"},
           {"length overflows", post_head + "Content-Length: 99999999999999999999999\r\n\r\n"},
           {"length with chunked",
            post_head + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
           {"chunked with length",
            post_head + "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n0\r\n\r\n"},
           {"chunk size not hex",
            post_head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"},
           {"chunk size overflows",
            post_head +
                "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n{}\r\n0\r\n\r\n"},
           {"chunk without its CRLF",
            post_head + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n"},
           {"chunked in HTTP/1.0",
            "POST /mcp HTTP/1.0\r\n" + h + ct + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
           {"a field without a colon", "GET /health HTTP/1.1\r\n" + h + "NoColon\r\n\r\n"},
       }) {
    SCOPED_TRACE(name);
    expect_status_then_close(port_, raw, 400);
  }
  expect_status_then_close(port_, "GET /health HTTP/2.0\r\n" + h + "\r\n", 505);
  expect_status_then_close(port_, "GET /health HTTP/9.9\r\n" + h + "\r\n", 505);
  expect_status_then_close(port_, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505);
  expect_serving();
}

}  // namespace
}  // namespace sluice::test
