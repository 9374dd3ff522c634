// `sluice demo`: a newcomer's tour. Starts `sluice serve` as a real stdio MCP server with
// the built-in demo downstream (`sluice demo-server`) behind it, drives it as an MCP client
// would, and prints each step. Needs no configuration on the machine.
#include "cli/serve.hpp"
#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "mcp/session.hpp"
#include "process/child.hpp"
#include "transport/fd_stream.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

namespace sluice::cli {
namespace asio = boost::asio;
namespace bj = boost::json;

namespace {
using namespace std::chrono_literals;

class DemoClient : public mcp::Handler {
 public:
  asio::awaitable<void> on_request(mcp::IncomingRequest& r) override {
    r.respond_error(rpc::code::kMethodNotFound, "Method not found");
    co_return;
  }
  void on_notification(const rpc::Message&) override {}
};

std::string tool_call(std::string_view tool, std::string_view args) {
  return fmt::format(R"({{"name":{},"arguments":{}}})", core::json::quote(tool), args);
}

// The structuredContent of a tool result, or the text when there is none.
bj::value structured(const mcp::Reply& reply) {
  if (!reply.ok()) return nullptr;
  bj::value v = bj::parse(reply.message->result());
  if (const auto* sc = v.as_object().if_contains("structuredContent")) return *sc;
  return v;
}

std::string first_text(const mcp::Reply& reply) {
  if (!reply.ok()) return "(no answer)";
  bj::value v = bj::parse(reply.message->result());
  const auto* content = v.as_object().if_contains("content");
  if (!content || !content->is_array() || content->as_array().empty()) return "";
  const auto& item = content->as_array()[0].as_object();
  if (const auto* t = item.if_contains("text"); t && t->is_string())
    return std::string(t->as_string());
  return "";
}

void step(int n, std::string_view title) { print_out(fmt::format("\n[{}] {}", n, title)); }

// The tour, one function per step; each prints its own lines. A step that returns false
// ends the tour with exit code 1.

asio::awaitable<bool> initialize(mcp::Session& s) {
  step(1, "initialize: the client connects to sluice over stdio");
  auto init = co_await s.request(
      "initialize",
      R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sluice-demo","version":"1"}})",
      15s);
  if (!init.ok()) {
    print_err("sluice demo: the gateway did not answer initialize");
    co_return false;
  }
  bj::value iv = bj::parse(init.message->result());
  print_out(fmt::format("    server {} {}, protocol {}",
                        std::string_view(iv.at("serverInfo").at("name").as_string()),
                        std::string_view(iv.at("serverInfo").at("version").as_string()),
                        std::string_view(iv.at("protocolVersion").as_string())));
  s.notify("notifications/initialized", "");
  co_return true;
}

asio::awaitable<bool> list_tools(mcp::Session& s) {
  step(2, "tools/list: the client sees a few meta-tools, not every downstream schema");
  auto list = co_await s.request("tools/list", "{}", 15s);
  if (!list.ok()) co_return false;
  bj::value listed = bj::parse(list.message->result());
  for (const auto& t : listed.at("tools").as_array()) {
    print_out(fmt::format("    {}", std::string_view(t.at("name").as_string())));
  }
  co_return true;
}

asio::awaitable<void> index_on_search(mcp::Session& s) {
  step(3,
       "gateway.catalog_search {\"query\":\"count words\"} : search covers every server; the "
       "lazy one is started and indexed first");
  auto search0 = co_await s.request(
      "tools/call", tool_call("gateway.catalog_search", R"({"query":"count words","limit":1})"),
      15s);
  bj::value r0 = structured(search0);
  if (!r0.is_object()) co_return;
  for (const auto& c : r0.at("results").as_array()) {
    print_out(fmt::format("    {} (source {}), of {} tools",
                          std::string_view(c.at("tool_id").as_string()),
                          std::string_view(c.at("source").as_string()),
                          r0.at("total_tools").to_number<std::int64_t>()));
  }
}

asio::awaitable<bool> connect_demo(mcp::Session& s) {
  step(4,
       "gateway.connect_server {\"server_name\":\"demo\"} : it is already running (the search "
       "started it)");
  auto conn = co_await s.request(
      "tools/call", tool_call("gateway.connect_server", R"({"server_name":"demo"})"), 30s);
  bj::value c = structured(conn);
  if (!c.is_object() || !c.as_object().if_contains("status")) {
    print_err("sluice demo: " + first_text(conn));
    co_return false;
  }
  print_out(fmt::format("    demo is {} with {} tools",
                        std::string_view(c.at("status").as_string()),
                        c.at("tool_count").to_number<std::int64_t>()));
  co_return true;
}

asio::awaitable<void> search_tools(mcp::Session& s) {
  step(5, "gateway.catalog_search {\"query\":\"count words\"} : ranked by relevance (BM25)");
  auto search = co_await s.request(
      "tools/call", tool_call("gateway.catalog_search", R"({"query":"count words","limit":3})"),
      15s);
  bj::value r = structured(search);
  for (const auto& card : r.at("results").as_array()) {
    print_out(fmt::format("    {:<22} {}", std::string_view(card.at("tool_id").as_string()),
                          std::string_view(card.at("short_description").as_string())));
  }
}

asio::awaitable<void> describe_tool(mcp::Session& s) {
  step(6, "gateway.describe {\"tool_id\":\"demo::word_count\"} : one full schema on demand");
  auto desc = co_await s.request(
      "tools/call", tool_call("gateway.describe", R"({"tool_id":"demo::word_count"})"), 15s);
  bj::value d = structured(desc);
  if (d.is_object()) {
    print_out("    inputSchema: " + bj::serialize(d.at("inputSchema")));
    print_out("    invoke_template: " + bj::serialize(d.at("invoke_template")));
  }
}

asio::awaitable<void> invoke_tool(mcp::Session& s) {
  step(7, "gateway.invoke demo::word_count : the call goes through to the downstream");
  auto inv = co_await s.request(
      "tools/call",
      tool_call(
          "gateway.invoke",
          R"({"tool_id":"demo::word_count","arguments":{"text":"one gateway\nin front of many servers"}})"),
      30s);
  print_out("    " + first_text(inv));
  bj::value iv2 = structured(inv);
  if (iv2.is_object() && iv2.as_object().if_contains("words")) {
    print_out("    structuredContent: " + bj::serialize(iv2));
  }
}

// Returns the refusal's text, which must not hold the rejected value.
asio::awaitable<std::string> invoke_with_bad_arguments(mcp::Session& s) {
  step(8, "gateway.invoke with bad arguments : refused before the downstream, value never echoed");
  auto bad = co_await s.request(
      "tools/call",
      tool_call("gateway.invoke",
                R"({"tool_id":"demo::word_count","arguments":{"text":42,"secret":"hunter2"}})"),
      15s);
  std::string bad_text = first_text(bad);
  std::string indented = "    ";
  for (char ch : bad_text) {
    indented += ch;
    if (ch == '\n') indented += "      ";
  }
  print_out(indented);
  co_return bad_text;
}

asio::awaitable<void> show_health(mcp::Session& s) {
  step(9, "gateway.health : status of every server");
  auto health = co_await s.request("tools/call", tool_call("gateway.health", "{}"), 15s);
  bj::value h = structured(health);
  if (h.is_object()) {
    for (const auto& row : h.at("servers").as_array()) {
      print_out(fmt::format("    {:<8} {:<8} {} tools, protocol {}",
                            std::string_view(row.at("name").as_string()),
                            std::string_view(row.at("status").as_string()),
                            row.at("tool_count").to_number<std::int64_t>(),
                            row.at("protocol_version").is_string()
                                ? std::string_view(row.at("protocol_version").as_string())
                                : std::string_view("-")));
    }
  }
}

asio::awaitable<int> tour(std::shared_ptr<mcp::Session> s) {
  if (!co_await initialize(*s)) co_return 1;
  if (!co_await list_tools(*s)) co_return 1;
  co_await index_on_search(*s);
  if (!co_await connect_demo(*s)) co_return 1;
  co_await search_tools(*s);
  co_await describe_tool(*s);
  co_await invoke_tool(*s);
  std::string refused = co_await invoke_with_bad_arguments(*s);
  co_await show_health(*s);
  print_out("\nDone. Point your MCP client at `sluice` (stdio) with your .mcp.json servers.");
  co_return (refused.find("hunter2") == std::string::npos) ? 0 : 1;
}

// Writes the demo's config into a temporary folder of its own: one server, sluice's own demo
// downstream. nullopt when the folder cannot be made.
std::optional<std::filesystem::path> write_demo_config(const std::string& self_path) {
  char dir_template[] = "/tmp/sluice-demo-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (!dir) return std::nullopt;
  std::filesystem::path config = std::filesystem::path(dir) / "demo.mcp.json";
  {
    std::ofstream f(config);
    f << fmt::format(R"({{"mcpServers":{{"demo":{{"command":{},"args":["demo-server"]}}}}}})",
                     core::json::quote(self_path))
      << "\n";
  }
  return config;
}

// Runs the tour, then closes sluice's stdin and waits (at most 15 s) for it to exit.
asio::awaitable<void> tour_then_stop(asio::io_context& io, std::shared_ptr<mcp::Session> session,
                                     transport::FdStream& stream,
                                     asio::posix::stream_descriptor& child_err,
                                     asio::posix::stream_descriptor& child_exit, int& code) {
  code = co_await tour(std::move(session));
  stream.close_output();  // EOF: sluice shuts down and tears its downstream down
  // Wait for it to exit (pidfd readable), within a bound.
  core::Timer bound(io, std::chrono::seconds(15));
  bound.async_wait([&](boost::system::error_code ec) {
    if (!ec) child_exit.cancel();
  });
  boost::system::error_code ec;
  co_await child_exit.async_wait(asio::posix::stream_descriptor::wait_read,
                                 asio::redirect_error(asio::use_awaitable, ec));
  bound.cancel();
  stream.close();
  child_err.close(ec);
}

// The gateway's own warnings, shown escaped.
asio::awaitable<void> relay_stderr(asio::posix::stream_descriptor& child_err,
                                   const core::Limits& limits) {
  core::LineSplitter lines(limits.max_stderr_line_bytes, limits.max_stderr_line_bytes);
  std::array<char, 4096> buf;
  for (;;) {
    boost::system::error_code ec;
    std::size_t n = co_await child_err.async_read_some(
        asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    lines.feed(std::string_view(buf.data(), n), [](const core::Line& l) { print_err(l.text); });
  }
}

}  // namespace

int run_demo(const std::string& self_path) {
  ::signal(SIGPIPE, SIG_IGN);
  process::become_subreaper();
  std::optional<std::filesystem::path> written = write_demo_config(self_path);
  if (!written) {
    print_err("sluice demo: cannot create a temporary directory");
    return 1;
  }
  const std::filesystem::path& config = *written;
  print_out(
      "sluice demo: a real MCP client talks to `sluice serve` over stdio; behind it, the "
      "built-in demo server.");
  print_out("    config: " + config.string());

  process::SpawnSpec spec;
  spec.program = self_path;
  // The demo's catalog cache lives beside its config, not in the user's state directory.
  spec.args = {"serve",         "--no-discover", "--config",
               config.string(), "--state-dir",   (config.parent_path() / "state").string(),
               "--log-level",   "warn"};
  auto child = process::Child::spawn(spec);
  if (!child) {
    print_err("sluice demo: cannot start sluice serve: " + child.error().message);
    return 1;
  }
  asio::io_context io;
  core::Limits limits;
  auto stream = transport::FdStream::create(io, (*child)->take_stdout().release(),
                                            (*child)->take_stdin().release(), limits);
  asio::posix::stream_descriptor child_err(io, (*child)->take_stderr().release());
  asio::posix::stream_descriptor child_exit(io, ::dup((*child)->pidfd()));
  mcp::SessionOptions opts;
  opts.label = "demo-client";
  opts.strictness = rpc::Strictness::peer;
  auto session = mcp::Session::create(io, opts);
  DemoClient handler;
  session->attach(stream.get(), &handler);
  stream->start(session, nullptr);
  int code = 1;
  core::spawn(io, tour_then_stop(io, session, *stream, child_err, child_exit, code),
              "the demo tour", [&] {
                // The loop ends: the child (its stdin closed) is torn down by its owner below.
                code = 1;
                stream->close();
                boost::system::error_code ec;
                child_err.close(ec);
              });
  core::spawn(io, relay_stderr(child_err, limits), "the demo's stderr reader");
  io.run();
  std::unique_ptr<process::Child> owned = std::move(*child);
  owned->kill_now();  // reaps; SIGKILLs only if it did not exit within the bound
  std::error_code ec;
  std::filesystem::remove_all(config.parent_path(), ec);
  return code;
}

}  // namespace sluice::cli