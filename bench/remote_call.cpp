// A remote call through sluice against the same call made directly, in one run: the HTTP
// fixture (tests/fixtures/http_fixture_server) serves Streamable HTTP on 127.0.0.1; CALLS
// sequential tools/call `echo` go
//   1. direct: from this driver over one kept-alive HTTP connection (Beast, blocking);
//   2. through sluice: over stdio to `sluice serve --expose all` with the fixture as its remote
//      server "web" (tools/call `web__echo`), sluice keeping its own connections.
// Reports both p50s, sluice's added p50, and sluice's CPU per call (its utime+stime over the
// calls, from /proc). Each side makes WARMUP untimed calls first. Every answer is checked; a
// protocol error ends the run with exit 1. Every wait is bounded; nothing is left running.
//
// With --instructions: sluice's instructions per proxied call, counted by valgrind's
// callgrind (needs valgrind), a figure that does not move with the machine's load as times
// do: sluice serves CALLS/5 and then CALLS calls, over stdio and over HTTP (`serve --transport
// http`, a kept-alive connection), and the difference of the two counts over the difference
// of calls is a call's (start-up and shutdown cancel out). The remote fixture is the
// downstream in both: a stdio server cannot run under valgrind 3.19, which does not implement
// pidfd_open. Then the same for a 1 MiB call through each front end (its request and its
// answer each carry 1 MiB of text; 2 and 4 calls), with its instructions per byte of payload
// carried: each copy of the payload on its way costs about 0.5 of them (a byte copied each
// way).
//
//   sluice_remote_call SLUICE HTTP_FIXTURE [CALLS=2000]
//   sluice_remote_call SLUICE HTTP_FIXTURE [CALLS=500] --instructions
#include "load_process.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace bj = boost::json;
using sluice::bench::Clock;
using sluice::bench::Process;
using sluice::bench::ProtocolError;
using Micros = std::chrono::duration<double, std::micro>;

constexpr int kWarmup = 50;
constexpr int kNoValgrind = 77;  // ctest's skip code (SKIP_RETURN_CODE)
constexpr std::string_view kText = "remote-bench";

std::string call_frame(int id, std::string_view tool, std::string_view text = kText) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{}",)"
                     R"("arguments":{{"text":"{}"}}}}}})",
                     id, tool, text);
}

void check_echo(std::string_view text, int id, std::string_view echoed = kText) {
  bj::value v = bj::parse(text);
  const bj::object& o = v.as_object();
  if (!o.contains("id") || o.at("id") != id || !o.contains("result") ||
      bj::serialize(o.at("result")).find(echoed) == std::string::npos) {
    throw ProtocolError("unexpected answer: " + std::string(text.substr(0, 200)));
  }
}

double p50(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return us.empty() ? 0 : us[us.size() / 2];
}

// An MCP session over one kept-alive HTTP connection: the fixture's (tool `echo`), or
// sluice's front end (tool `web__echo`).
class DirectClient {
 public:
  explicit DirectClient(int port, std::string tool = "echo")
      : stream_(io_), tool_(std::move(tool)) {
    stream_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                            static_cast<unsigned short>(port)));
    auto init = post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                     R"("protocolVersion":"2025-11-25","capabilities":{},)"
                     R"("clientInfo":{"name":"bench","version":"1"}}})");
    session_ = std::string(init["Mcp-Session-Id"]);
    if (session_.empty()) throw ProtocolError("the fixture gave no session id");
    post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }
  std::string call(int id, std::string_view text = kText) {
    return post(call_frame(id, tool_, text)).body();
  }

 private:
  http::response<http::string_body> post(std::string body) {
    http::request<http::string_body> req{http::verb::post, "/mcp", 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json, text/event-stream");
    if (!session_.empty()) {
      req.set("Mcp-Session-Id", session_);
      req.set("MCP-Protocol-Version", "2025-11-25");
    }
    req.body() = std::move(body);
    req.prepare_payload();
    stream_.expires_after(sluice::bench::kIoGuard);
    http::write(stream_, req);
    http::response<http::string_body> res;
    http::read(stream_, buffer_, res);
    return res;
  }

  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::string tool_;
  std::string session_;
};

std::vector<double> run_direct(int port, int calls) {
  DirectClient client(port);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(calls));
  for (int i = 1; i <= kWarmup + calls; ++i) {
    const auto t0 = Clock::now();
    std::string answer = client.call(i);
    if (i > kWarmup) us.push_back(Micros(Clock::now() - t0).count());
    check_echo(answer, i);
  }
  return us;
}

// utime + stime of `pid`, in microseconds.
double cpu_us(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Through {
  std::vector<double> us;
  double cpu_per_call_us = 0;
};

// `sluice serve` with the fixture on `port` as server "web", after `prefix` (a profiler).
std::vector<std::string> serve_argv(const std::vector<std::string>& prefix,
                                    const std::string& sluice, int port,
                                    const std::filesystem::path& dir) {
  const auto config = dir / "remote.json";
  std::ofstream(config) << fmt::format(
      R"({{"mcpServers":{{"web":{{"type":"http","url":"http://127.0.0.1:{}/mcp"}}}}}})", port);
  std::vector<std::string> argv = prefix;
  for (std::string arg :
       {sluice, std::string("serve"), std::string("--expose"), std::string("all"),
        std::string("--no-discover"), std::string("--no-cache"), std::string("--config"),
        config.string(), std::string("--log-level"), std::string("error")}) {
    argv.push_back(std::move(arg));
  }
  return argv;
}

// `warmup` untimed calls, then `calls` timed ones, each echoing `text`.
Through run_sluice(const std::string& sluice, int port, int calls, const std::filesystem::path& dir,
                   const std::vector<std::string>& prefix = {}, std::string_view text = kText,
                   int warmup = kWarmup) {
  Process proc(serve_argv(prefix, sluice, port, dir), true, true);
  proc.write_line(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                  R"("protocolVersion":"2025-11-25","capabilities":{},)"
                  R"("clientInfo":{"name":"bench","version":"1"}}})");
  proc.read_line();
  proc.write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  Through out;
  out.us.reserve(static_cast<std::size_t>(calls));
  double cpu_start = 0;
  for (int i = 1; i <= warmup + calls; ++i) {
    if (i == warmup + 1) cpu_start = cpu_us(proc.pid());
    const auto t0 = Clock::now();
    proc.write_line(call_frame(i, "web__echo", text));
    std::string answer = proc.read_line();
    while (answer.find("\"id\":" + std::to_string(i)) == std::string::npos) {
      answer = proc.read_line();  // a notification of sluice's, not the answer
    }
    if (i > warmup) out.us.push_back(Micros(Clock::now() - t0).count());
    check_echo(answer, i, text.substr(0, 64));
  }
  out.cpu_per_call_us = (cpu_us(proc.pid()) - cpu_start) / calls;
  proc.stop(false);
  return out;
}

// The same calls to `serve --transport http`, over one kept-alive connection; each answer
// (an SSE stream) must carry the echo of `text`.
void run_sluice_http(const std::string& sluice, int port, int calls,
                     const std::filesystem::path& dir, const std::vector<std::string>& prefix,
                     std::string_view text = kText) {
  const auto port_file = dir / "port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = serve_argv(prefix, sluice, port, dir);
  for (const char* arg : {"--transport", "http", "--host", "127.0.0.1", "--port", "0"}) {
    argv.emplace_back(arg);
  }
  argv.insert(argv.end(), {"--port-file", port_file.string()});
  Process proc(argv, false, true);
  const int front = sluice::bench::wait_for_port(proc, port_file.string());
  DirectClient client(front, "web__echo");
  for (int i = 1; i <= calls; ++i) {
    if (client.call(i, text).find(text.substr(0, 64)) == std::string::npos) {
      throw ProtocolError("sluice's HTTP answer carries no echo");
    }
  }
  proc.stop(true);
}

// The instructions callgrind counted in the whole run that wrote `file`.
double callgrind_total(const std::filesystem::path& file) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("summary:")) return std::stod(line.substr(8));
  }
  throw ProtocolError("callgrind wrote no summary to " + file.string());
}

// sluice's instructions per call through each front end (see the head of the file).
int count_instructions(const std::string& sluice, int port, int calls,
                       const std::filesystem::path& dir) {
  const std::string valgrind = sluice::bench::on_path("valgrind");
  if (valgrind.empty()) {
    std::fprintf(stderr, "sluice_remote_call: --instructions needs valgrind on PATH\n");
    return kNoValgrind;
  }
  const int few = std::max(1, calls / 5);
  const std::string mib(std::size_t{1} << 20, 'x');
  enum class Load { stdio, http, mib, http_mib };
  auto count = [&](Load load, int n) {
    const auto out = dir / fmt::format("callgrind.{}.{}", static_cast<int>(load), n);
    const std::vector<std::string> prefix = {valgrind, "--tool=callgrind", "--quiet",
                                             "--callgrind-out-file=" + out.string()};
    if (load == Load::http) {
      run_sluice_http(sluice, port, n, dir, prefix);
    } else if (load == Load::http_mib) {
      run_sluice_http(sluice, port, n, dir, prefix, mib);
    } else if (load == Load::mib) {
      run_sluice(sluice, port, n, dir, prefix, mib, 0);
    } else {
      run_sluice(sluice, port, n, dir, prefix);
    }
    return callgrind_total(out);
  };
  // (run_sluice makes kWarmup calls more in both runs: they cancel out too.)
  const double stdio = (count(Load::stdio, calls) - count(Load::stdio, few)) / (calls - few);
  const double http = (count(Load::http, calls) - count(Load::http, few)) / (calls - few);
  const double big = (count(Load::mib, 4) - count(Load::mib, 2)) / 2;
  const double http_big = (count(Load::http_mib, 4) - count(Load::http_mib, 2)) / 2;
  std::printf(
      "instructions: sluice per proxied call (callgrind; %d and %d calls; the remote "
      "fixture as downstream)\n",
      few, calls);
  std::printf("instructions: stdio front end %.0f, HTTP front end %.0f: HTTP/stdio %.2f\n", stdio,
              http, stdio > 0 ? http / stdio : 0);
  const double carried = 2.0 * static_cast<double>(mib.size());
  std::printf(
      "instructions: a 1 MiB call (1 MiB of text each way; 2 and 4 calls): stdio front end %.0f "
      "(%.2f per byte of payload carried), HTTP front end %.0f (%.2f)\n",
      big, big / carried, http_big, http_big / carried);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SLUICE HTTP_FIXTURE [CALLS=2000] [--instructions]\n", argv[0]);
    return 2;
  }
  const bool instructions = argc > 4 && std::string_view(argv[4]) == "--instructions";
  const int calls = argc > 3       ? std::clamp(std::atoi(argv[3]), 10, 200000)
                    : instructions ? 500
                                   : 2000;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("sluice-remote-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int rc = 0;
  try {
    Process fixture({argv[2]}, true, true);
    const std::string listening = fixture.read_line();
    if (!listening.starts_with("listening ")) throw ProtocolError("the fixture did not start");
    const int port = std::stoi(listening.substr(10));
    if (instructions) {
      rc = count_instructions(argv[1], port, calls, dir);
      fixture.stop(false);
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      return rc;
    }
    const double direct = p50(run_direct(port, calls));
    const Through through = run_sluice(argv[1], port, calls, dir);
    const double via = p50(through.us);
    std::printf("remote call: %d sequential tools/call echo over Streamable HTTP (127.0.0.1)\n",
                calls);
    std::printf(
        "remote call: direct p50 %.0f us, through sluice p50 %.0f us: sluice adds %.0f us"
        " (%.2fx)\n",
        direct, via, via - direct, direct > 0 ? via / direct : 0);
    std::printf("remote call: sluice CPU %.1f us per call\n", through.cpu_per_call_us);
    fixture.stop(false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice_remote_call: %s\n", e.what());
    rc = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
