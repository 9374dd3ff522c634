#pragma once
// The fixture of the HTTP front-end integration tests (http_test.cpp, http_refusals_test.cpp):
// a `sluice serve --transport http` child on a free loopback port with the fixture server
// behind it, raw HTTP helpers, and the checks every test ends with (sluice still serves a
// good request; TearDown: SIGTERM gives exit 0, no sentinel in stderr, no fixture left).
#include "harness.hpp"
#include "http_client.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <signal.h>
#include <strings.h>

#include <algorithm>
#include <fstream>
#include <set>

namespace sluice::test {
namespace bj = boost::json;
namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

inline constexpr const char* kSentinel = "SENTINEL-7f3a";
inline constexpr const char* kInitParams =
    R"({"protocolVersion":"2025-11-25","capabilities":{},)"
    R"("clientInfo":{"name":"http-integration","version":"1"}})";

inline std::string rpc(const std::string& id, const std::string& method,
                       const std::string& params = "") {
  std::string s = R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + "\"";
  if (!params.empty()) s += R"(,"params":)" + params;
  return s + "}";
}

inline std::string invoke_echo(const std::string& id, const std::string& text,
                               const std::string& server = "fx") {
  return rpc(id, "tools/call",
             R"({"name":"gateway.invoke","arguments":{"tool_id":")" + server +
                 R"(::echo","arguments":{"text":")" + text + R"("}}})");
}

inline void set_header(Headers& h, const std::string& name, const std::string& value) {
  for (auto& [k, v] : h) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) {
      v = value;
      return;
    }
  }
  h.emplace_back(name, value);
}

inline void drop_header(Headers& h, const std::string& name) {
  std::erase_if(h, [&](const auto& kv) { return strcasecmp(kv.first.c_str(), name.c_str()) == 0; });
}

// The text of the first content item of a tools/call response body ("" when absent).
inline std::string result_text(const std::string& body) {
  auto v = bj::parse(body);
  const auto* result = v.as_object().if_contains("result");
  if (!result) return "";
  const auto& content = result->at("content").as_array();
  return content.empty() ? "" : std::string(content[0].at("text").as_string());
}

class HttpFrontEnd : public ::testing::Test {
 protected:
  // Starts sluice serving HTTP on a free port with the fixture as server `server_name`.
  void start(std::vector<std::string> flags = {}, const std::string& server_name = "fx") {
    server_ = server_name;
    for (std::size_t i = 0; i + 1 < flags.size(); ++i) {
      if (flags[i] == "--expose") expose_all_only_ = flags[i + 1] == "all";
    }
    sluice_ = launch(flags, server_name, "port");
    port_ = read_port(*sluice_, dir_.path() / "port");
    ASSERT_GT(port_, 0) << "no port file; stderr:\n" << sluice_->stderr_text();
  }

  std::unique_ptr<Sluice> launch(const std::vector<std::string>& flags,
                                 const std::string& server_name, const std::string& port_file) {
    std::string entry = entry_.empty() ? fixture_entry(marker_) : entry_;
    auto cfg = dir_.write("mcp.json", R"({"mcpServers":{")" + server_name + R"(":)" + entry + "}" +
                                          (policy_.empty() ? "" : "," + policy_) + "}");
    std::vector<std::string> args{"serve",     "--transport", "http", "--host",
                                  "127.0.0.1", "--port",      "0",    "--no-discover",
                                  "--config",  cfg.string()};
    args.insert(args.end(), {"--port-file", (dir_.path() / port_file).string(), "--state-dir",
                             (dir_.path() / "state").string()});
    args.insert(args.end(), flags.begin(), flags.end());
    return std::make_unique<Sluice>(args, dir_.path(), dir_.path());
  }

  // Waits (bounded) for the port file, or for sluice to exit first; 0 when no port came.
  static int read_port(Sluice& s, const fs::path& file) {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (!fs::exists(file)) {
      if (s.wait_exit(0ms) || std::chrono::steady_clock::now() > deadline) return 0;
      std::this_thread::sleep_for(5ms);  // no event to block on for a file another process makes
    }
    std::ifstream f(file);
    int port = 0;
    f >> port;
    return port;
  }

  void TearDown() override {
    if (sluice_) stop_and_expect_clean_exit();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }

  void stop_and_expect_clean_exit() {
    sluice_->signal(SIGTERM);
    auto code = sluice_->wait_exit(kGuard);
    EXPECT_EQ(code, 0) << "SIGTERM should end sluice with exit 0";
    if (!code) {
      sluice_->signal(SIGKILL);
      sluice_->wait_exit(kGuard);
    }
    sluice_->join_stderr();
    std::string err = sluice_->stderr_text();
    if (code != 0) {
      ADD_FAILURE() << "sluice's stderr ends with:\n"
                    << err.substr(err.size() > 6000 ? err.size() - 6000 : 0);
    }
    for (const auto& s : sentinels_) {
      EXPECT_EQ(err.find(s), std::string::npos) << "sluice logged a value a client sent: " << s;
    }
    sluice_.reset();
  }

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

  // The server entry start() configures instead of the fixture server (carrying marker_), and
  // a "sluice" member for the configuration (`"sluice":{...}`; empty: none).
  std::string entry_;
  std::string policy_;

  // Headers of a well-formed MCP POST.
  Headers headers(const std::string& session = "",
                  const std::string& accept = "application/json") const {
    Headers h{{"Host", host()}, {"Content-Type", "application/json"}, {"Accept", accept}};
    if (!session.empty()) h.emplace_back("Mcp-Session-Id", session);
    if (!token_.empty()) h.emplace_back("Authorization", "Bearer " + token_);
    return h;
  }

  // One request on a fresh connection; status 0 when no response came within the guard.
  HttpResponse exchange(const std::string& method, const std::string& target, const Headers& h,
                        const std::string& body = "", const std::string& source = "") {
    auto r = http_exchange(port_, http_request(method, target, h, body), source);
    return r ? *r : HttpResponse{};
  }
  HttpResponse post(const std::string& body, const Headers& h) {
    return exchange("POST", "/mcp", h, body);
  }

  // initialize + notifications/initialized; returns the session id ("" on failure, with the
  // failure recorded).
  std::string initialize(const std::string& source = "") {
    auto r = exchange("POST", "/mcp", headers(), rpc("1", "initialize", kInitParams), source);
    EXPECT_EQ(r.status, 200) << r.all();
    auto sid = r.header("Mcp-Session-Id");
    EXPECT_TRUE(sid.has_value()) << r.all();
    if (r.status != 200 || !sid) return "";
    auto n = exchange("POST", "/mcp", headers(*sid),
                      R"({"jsonrpc":"2.0","method":"notifications/initialized"})", source);
    EXPECT_EQ(n.status, 202) << n.all();
    return *sid;
  }

  HttpResponse end_session(const std::string& sid, const std::string& source = "") {
    Headers h{{"Host", host()}, {"Mcp-Session-Id", sid}};
    if (!token_.empty()) h.emplace_back("Authorization", "Bearer " + token_);
    return exchange("DELETE", "/mcp", h, "", source);
  }

  // A fresh session answers a ping and a tool call; the session is ended again.
  void expect_serving(const std::string& source = "") {
    SCOPED_TRACE("sluice still serves a good request");
    std::string sid = initialize(source);
    ASSERT_FALSE(sid.empty());
    auto ping = exchange("POST", "/mcp", headers(sid), rpc("\"p\"", "ping"), source);
    EXPECT_EQ(ping.status, 200) << ping.all();
    std::string call =
        expose_all_only_
            ? rpc("2", "tools/call",
                  R"({"name":")" + server_ + R"(__echo","arguments":{"text":"still-here"}})")
            : invoke_echo("2", "still-here", server_);
    auto echo = exchange("POST", "/mcp", headers(sid), call, source);
    EXPECT_EQ(echo.status, 200) << echo.all();
    if (echo.status == 200) {
      EXPECT_EQ(result_text(echo.body), "still-here");
    }
    EXPECT_EQ(end_session(sid, source).status, 204);
  }

  // A refusal: the status, and nothing of what was sent in the head or body.
  void expect_refused(const HttpResponse& r, int status, const std::string& sentinel = kSentinel) {
    EXPECT_EQ(r.status, status) << r.all();
    EXPECT_EQ(r.all().find(sentinel), std::string::npos) << "the response echoes what was sent:\n"
                                                         << r.all();
    sentinels_.insert(sentinel);
  }

  // The JSON-RPC error code of a body (0 when it has none).
  static int64_t error_code(const std::string& body) {
    boost::system::error_code ec;
    auto v = bj::parse(body, ec);
    if (ec || !v.is_object()) return 0;
    const auto* e = v.as_object().if_contains("error");
    return e ? e->at("code").to_number<int64_t>() : 0;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
  int port_ = 0;
  std::string server_ = "fx";
  bool expose_all_only_ = false;  // --expose all: no meta-tools, only prefixed names
  std::string token_;
  std::set<std::string> sentinels_;
};

}  // namespace sluice::test
