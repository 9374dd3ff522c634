#include "cli/stdio_server.hpp"
#include "mcp/tool_result.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice::cli {
namespace {
namespace bj = boost::json;

constexpr int kGuardMs = 5000;
constexpr std::string_view kInitialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
    R"("capabilities":{},"clientInfo":{"name":"test","version":"1"}}})";

// Runs a StdioServer on its own thread over two pipes; the test plays the client.
class Connection {
 public:
  explicit Connection(StdioServer& server) {
    if (::pipe2(to_server_, O_CLOEXEC) != 0 || ::pipe2(from_server_, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2 failed");
    }
    thread_ =
        std::thread([this, &server] { exit_code_ = server.run(to_server_[0], from_server_[1]); });
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    finish();
    ::close(to_server_[0]);
    ::close(from_server_[0]);
  }

  void send(std::string_view text) { send_raw(std::string(text) + '\n'); }

  void send_raw(std::string_view rest) {
    while (!rest.empty()) {
      ssize_t n = ::write(to_server_[1], rest.data(), rest.size());
      ASSERT_GT(n, 0);
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // The next line the server wrote, without its newline; "" after kGuardMs or at EOF.
  std::string next_line() {
    for (;;) {
      std::size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{from_server_[0], POLLIN, 0};
      if (::poll(&p, 1, kGuardMs) != 1) return "";
      char chunk[4096];
      ssize_t n = ::read(from_server_[0], chunk, sizeof chunk);
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  bj::object next_message() {
    std::string line = next_line();
    bj::error_code ec;
    bj::value v = bj::parse(line, ec);
    EXPECT_FALSE(ec) << "not JSON: " << line;
    return v.is_object() ? v.get_object() : bj::object();
  }

  void initialize() {
    send(kInitialize);
    ASSERT_TRUE(next_message().contains("result"));
    send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }

  // Closes the server's input, waits for run() to return and closes the server's end of
  // its output (so reads see EOF); returns run()'s exit code.
  int finish() {
    if (to_server_[1] >= 0) {
      ::close(to_server_[1]);
      to_server_[1] = -1;
    }
    if (thread_.joinable()) thread_.join();
    if (from_server_[1] >= 0) {
      ::close(from_server_[1]);
      from_server_[1] = -1;
    }
    return exit_code_;
  }

 private:
  int to_server_[2] = {-1, -1};
  int from_server_[2] = {-1, -1};
  std::string buffer_;
  std::thread thread_;
  int exit_code_ = -1;
};

ToolSpec echo_tool(std::string name) {
  return ToolSpec{std::move(name),
                  "",
                  "Echoes text.",
                  R"({"type":"object","properties":{"text":{"type":"string"}}})",
                  "",
                  R"({"readOnlyHint":true})",
                  [](const bj::object& args) {
                    return ToolCallResult{mcp::text_result(
                        args.contains("text") ? std::string(args.at("text").as_string()) : "")};
                  }};
}

std::int64_t error_code_of(const bj::object& message) {
  return message.at("error").at("code").as_int64();
}

TEST(StdioServerTest, InitializeEchoesASupportedVersionAndOffersItsOwnOtherwise) {
  StdioServer server("unit", "9.9");
  Connection c(server);
  c.send(kInitialize);
  bj::object answer = c.next_message();
  const bj::object& result = answer.at("result").as_object();
  EXPECT_EQ(result.at("protocolVersion").as_string(), "2025-06-18");
  EXPECT_EQ(result.at("serverInfo").at("name").as_string(), "unit");
  EXPECT_EQ(result.at("serverInfo").at("version").as_string(), "9.9");
  EXPECT_TRUE(result.at("capabilities").at("tools").at("listChanged").as_bool());

  c.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
         R"("2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  EXPECT_EQ(c.next_message().at("result").at("protocolVersion").as_string(), "2024-11-05");
  c.send(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":)"
         R"("1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  EXPECT_EQ(c.next_message().at("result").at("protocolVersion").as_string(), "2025-11-25");
  c.send(R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"capabilities":{}}})");
  EXPECT_EQ(error_code_of(c.next_message()), -32602);
}

TEST(StdioServerTest, NegotiationKeepsToTheConfiguredVersions) {
  StdioServer server("unit", "1");
  server.set_protocol_versions({"2024-11-05", "2025-03-26"});
  Connection c(server);
  c.send(kInitialize);
  EXPECT_EQ(c.next_message().at("result").at("protocolVersion").as_string(), "2025-03-26");
}

TEST(StdioServerTest, RequestIdsAreEchoedByteExact) {
  StdioServer server("unit", "1");
  Connection c(server);
  const std::vector<std::string> ids = {R"("a\"b\\c\u00e9\ud83d\ude00\/")",
                                        "123456789012345678901234567890", "-0", R"("")"};
  for (const std::string& id : ids) {
    c.send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
    EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{}})");
  }
  c.send(R"({"jsonrpc":"2.0","id": 77 ,"method":"nope"})");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":77,"error":{"code":-32601)", 0), 0u);
}

TEST(StdioServerTest, ToolsListPaginatesWithAnOpaqueCursor) {
  StdioServer server("unit", "1");
  for (const char* name : {"t1", "t2", "t3", "t4", "t5"}) server.add_tool(echo_tool(name));
  server.set_page_size(2);
  Connection c(server);
  c.initialize();

  std::vector<std::string> names;
  std::string cursor_param;
  int pages = 0;
  for (;;) {
    c.send(R"({"jsonrpc":"2.0","id":"list","method":"tools/list")" + cursor_param + "}");
    bj::object answer = c.next_message();
    const bj::object& result = answer.at("result").as_object();
    for (const auto& tool : result.at("tools").as_array()) {
      names.emplace_back(tool.at("name").as_string());
      EXPECT_TRUE(tool.as_object().contains("inputSchema"));
    }
    ++pages;
    if (!result.contains("nextCursor")) break;
    ASSERT_LT(pages, 10);
    cursor_param = R"(,"params":{"cursor":)" + bj::serialize(result.at("nextCursor")) + "}";
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"t1", "t2", "t3", "t4", "t5"}));

  c.send(R"({"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"elsewhere"}})");
  EXPECT_EQ(error_code_of(c.next_message()), -32602);
  c.send(R"({"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":7}})");
  EXPECT_EQ(error_code_of(c.next_message()), -32602);
}

TEST(StdioServerTest, MalformedMessagesGetTheMatchingErrorAndTheConnectionSurvives) {
  StdioServer server("unit", "1");
  Connection c(server);
  c.send("this is not json");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700)", 0), 0u);
  c.send(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600)", 0), 0u);
  c.send(R"({"id":4,"method":"ping"})");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":4,"error":{"code":-32600)", 0), 0u);
  c.send(R"({"jsonrpc":"2.0","id":{"nested":1},"method":"ping"})");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600)", 0), 0u);
  c.send(R"({"jsonrpc":"2.0","id":5,"method":"resources/list"})");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":5,"error":{"code":-32601)", 0), 0u);
  c.send(R"({"jsonrpc":"2.0","id":6,"method":"ping"})");
  EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","id":6,"result":{}})");
}

TEST(StdioServerTest, NotificationsAndResponsesAreNeverAnswered) {
  StdioServer server("unit", "1");
  Connection c(server);
  c.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  c.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})");
  c.send(R"({"jsonrpc":"2.0","method":"notifications/unknown"})");
  c.send(R"({"jsonrpc":"2.0","id":41,"result":{}})");
  c.send("");
  c.send(R"({"jsonrpc":"2.0","id":42,"method":"ping"})");
  EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","id":42,"result":{}})");
}

TEST(StdioServerTest, ToolsCallRunsTheHandlerAndTurnsItsFailureIntoAnErrorResult) {
  StdioServer server("unit", "1");
  server.add_tool(echo_tool("echo"));
  ToolSpec failing = echo_tool("failing");
  failing.handler = [](const bj::object&) -> ToolCallResult {
    throw std::runtime_error("it broke");
  };
  server.add_tool(std::move(failing));
  Connection c(server);

  const std::string call =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
      R"("arguments":{"text":"hi"}}})";
  c.send(call);
  EXPECT_EQ(error_code_of(c.next_message()), -32600) << "tools/call before initialize";
  c.initialize();
  c.send(call);
  EXPECT_EQ(c.next_line(),
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}})");

  c.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"failing"}})");
  bj::object failed = c.next_message();
  EXPECT_TRUE(failed.at("result").at("isError").as_bool());
  EXPECT_EQ(failed.at("result").at("content").at(0).at("text").as_string(), "it broke");

  c.send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"missing"}})");
  EXPECT_EQ(error_code_of(c.next_message()), -32602);
  c.send(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",)"
         R"("arguments":[1]}})");
  EXPECT_EQ(error_code_of(c.next_message()), -32602);
  c.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}})");
  EXPECT_EQ(error_code_of(c.next_message()), -32602);
}

TEST(StdioServerTest, AResultWithLineBreaksStillGoesOutAsOneLine) {
  StdioServer server("unit", "1");
  ToolSpec pretty = echo_tool("pretty");
  pretty.handler = [](const bj::object&) {
    return ToolCallResult{"{\n  \"content\": [],\r\n  \"structuredContent\": {\"n\": 1.0}\n}"};
  };
  server.add_tool(std::move(pretty));
  Connection c(server);
  c.initialize();
  c.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pretty"}})");
  std::string line = c.next_line();
  EXPECT_NE(line.find(R"("structuredContent": {"n": 1.0})"), std::string::npos) << line;
  c.send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

TEST(StdioServerTest, AHandlerCanAddAToolAndAnnounceIt) {
  StdioServer server("unit", "1");
  ToolSpec grow = echo_tool("grow");
  grow.handler = [&server](const bj::object&) {
    server.add_tool(echo_tool("grown"));
    server.notify_tools_changed();
    return ToolCallResult{mcp::text_result("grew")};
  };
  server.add_tool(std::move(grow));
  Connection c(server);
  c.initialize();
  c.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grow"}})");
  EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  EXPECT_TRUE(c.next_message().contains("result"));
  c.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  EXPECT_EQ(c.next_message().at("result").at("tools").as_array().size(), 2u);
}

TEST(StdioServerTest, AnOverlongLineIsRefusedWithoutEndingTheConnection) {
  StdioServer server("unit", "1");
  server.set_max_message_bytes(64);
  Connection c(server);
  c.send(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")" + std::string(200, 'p') +
         R"("}})");
  EXPECT_EQ(c.next_line().rfind(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600)", 0), 0u);
  c.send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","id":2,"result":{}})");
}

TEST(StdioServerTest, RunAnswersAnUnterminatedLastLineAndReturnsZeroAtEndOfInput) {
  StdioServer server("unit", "1");
  Connection c(server);
  c.send_raw(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(c.finish(), 0);
  EXPECT_EQ(c.next_line(), R"({"jsonrpc":"2.0","id":1,"result":{}})");
  EXPECT_EQ(c.next_line(), "");
  EXPECT_FALSE(server.write_message("{}")) << "no output once run() has returned";
}

TEST(StdioServerTest, AddToolRefusesSchemasThatAreNotObjects) {
  StdioServer server("unit", "1");
  ToolSpec bad = echo_tool("bad");
  bad.input_schema_json = "[]";
  EXPECT_THROW(server.add_tool(std::move(bad)), std::invalid_argument);
  ToolSpec no_handler = echo_tool("no_handler");
  no_handler.handler = nullptr;
  EXPECT_THROW(server.add_tool(std::move(no_handler)), std::invalid_argument);
}

}  // namespace
}  // namespace sluice::cli
