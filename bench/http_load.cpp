// End-to-end HTTP load driver: tools/call throughput and p50/p99 latency through sluice's
// Streamable HTTP front end (default settings), measured in the same run as the same load
// sent directly to the fixture over stdio and to a minimal Beast HTTP responder (the floor of
// any HTTP gateway), reported as ratios, with sluice's CPU per call and RSS per idle session.
//
//   sluice_http_load SLUICE FIXTURE [CALLS_PER_CLIENT=500] [CLIENTS=16] [IDLE_SESSIONS=100]
//                    [LARGE_CALLS=10] [ROUNDS=3]
//   sluice_http_load --responder PORT_FILE      (the floor, spawned by the driver itself)
//
// 1. direct stdio: FIXTURE on pipes, one MCP session; CLIENTS callers each keep exactly one
//    tools/call `echo` in flight (distinct ids, answers matched by id).
// 2. sluice stdio: the same load as 1 through `SLUICE serve` over stdio (gateway cost alone),
//    with sluice's CPU (every thread, /proc/PID/task/*/schedstat) per call.
// 3. http floor: the responder; CLIENTS callers, each with its own keep-alive connection and
//    MCP session, send CALLS_PER_CLIENT sequential POST /mcp tools/call `echo`.
// 4. sluice http: `SLUICE serve --transport http --port 0 ...` with FIXTURE as server "fx",
//    the same load as 3 calling `fx__echo` (answers: JSON or SSE), with sluice's CPU per call.
// 5. idle sessions: sluice's VmRSS before and after opening IDLE_SESSIONS sessions, and its
//    CPU over 2 s with them open.
// 6. 1 MiB: LARGE_CALLS sequential calls whose request and answer each carry 1 MiB of text,
//    by one caller: directly to the fixture over stdio, to the responder and to sluice over
//    HTTP; each path's p50, sluice's as a ratio of the direct call's (budget 1.2).
//
// A round runs phases 1-6 in turn; each figure printed is the median over ROUNDS rounds, and
// each ratio the median of the rounds' own ratios, whose two sides ran close together in time
// (the machine's speed drifts between phases; a ratio of medians would mix rounds).
//
// Every load phase is driven from one thread (a poll loop; an Asio io_context with one
// coroutine per client), so the driver's own overhead is alike on every side. Each caller
// makes one untimed warm-up call first. Every answer is checked (id, no error, the echoed
// text); a protocol error, a wrong id or an unexpected HTTP status ends the run with exit 1.
// Every wait is bounded; sluice gets SIGTERM (then SIGKILL to its process group after a
// guard), the direct fixture is reaped, and nothing is left running.
#include "http_load_client.hpp"
#include "load_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace sluice::bench;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace bj = boost::json;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::int64_t kFirstCallId = 1000;

// ---------------------------------------------------------------------------------------
// Phase 1: direct stdio. One session; `clients` callers each with one call in flight,
// driven by a single poll loop. Caller `slot`'s k-th call has id kFirstCallId + k*clients + slot.

Stats run_direct(Process& fixture, int clients, int calls_per_client,
                 const std::string& tool = "echo", bool measure_cpu = false,
                 std::string_view text = kEchoText) {
  fixture.write_line(initialize_request(1));
  for (;;) {
    auto msg = parse_object(fixture.read_line());
    if (msg && id_of(*msg) == 1) {
      check_response(*msg, 1, "direct initialize");
      break;
    }
  }
  fixture.write_line(kInitialized);

  std::vector<std::int64_t> in_flight(static_cast<std::size_t>(clients));
  std::vector<int> sent(static_cast<std::size_t>(clients), 0);
  std::vector<Clock::time_point> sent_at(static_cast<std::size_t>(clients));
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(clients) * static_cast<std::size_t>(calls_per_client));

  // Round 0 is the warm-up (not recorded); rounds 1..calls_per_client are timed.
  auto send = [&](std::size_t slot) {
    std::int64_t id = kFirstCallId + static_cast<std::int64_t>(sent[slot]) * clients +
                      static_cast<std::int64_t>(slot);
    in_flight[slot] = id;
    ++sent[slot];
    sent_at[slot] = Clock::now();
    fixture.write_line(echo_request(id, tool, text));
  };
  auto drain = [&](bool record, int until_sent) {
    int open = 0;
    for (std::size_t s = 0; s < in_flight.size(); ++s) {
      send(s);
      ++open;
    }
    while (open > 0) {
      std::string line = fixture.read_line();
      auto msg = parse_object(line);
      if (!msg) throw ProtocolError("direct: unparsable line from the fixture");
      if (msg->contains("method")) continue;  // a notification or request: not ours
      auto id = id_of(*msg);
      if (!id || *id < kFirstCallId)
        throw ProtocolError("direct: answer with an unknown id: " + line);
      auto slot = static_cast<std::size_t>((*id - kFirstCallId) % clients);
      if (in_flight[slot] != *id)
        throw ProtocolError("direct: answer to a call not in flight: " + line);
      double latency = micros_since(sent_at[slot]);
      check_echo(*msg, *id, text);
      if (record) us.push_back(latency);
      if (sent[slot] < until_sent) {
        send(slot);
      } else {
        --open;
      }
    }
  };
  drain(false, 1);  // warm-up: one call per caller
  const double cpu0 = measure_cpu ? cpu_ns(fixture.pid()) : 0;
  auto t0 = Clock::now();
  drain(true, 1 + calls_per_client);
  Stats s = summarize(std::move(us), micros_since(t0) / 1e6);
  if (measure_cpu) s.cpu_us_per_call = (cpu_ns(fixture.pid()) - cpu0) / 1e3 / s.calls;
  return s;
}

struct HttpCaller {
  HttpClient client;
  std::string tool;
  std::string session;
  std::int64_t next_id = kFirstCallId;
  std::vector<double> us;
  std::string text = std::string(kEchoText);  // what each call asks to have echoed
};

asio::awaitable<void> call_echo(HttpCaller& c, HttpTally& tally, bool record) {
  std::int64_t id = c.next_id++;
  auto t0 = Clock::now();
  Reply r = co_await c.client.request("tools/call", http::verb::post, c.session,
                                      echo_request(id, c.tool, c.text));
  double latency = micros_since(t0);
  expect_status(r, 200, "tools/call");
  check_echo(response_in(r, id, tally), id, c.text);
  if (record) c.us.push_back(latency);
}

asio::awaitable<void> set_up_caller(HttpCaller& c, HttpTally& tally) {
  c.session = co_await open_session(c.client, tally);
  co_await call_echo(c, tally, false);  // warm-up
}

asio::awaitable<void> load_caller(HttpCaller& c, HttpTally& tally, int calls) {
  for (int i = 0; i < calls; ++i) co_await call_echo(c, tally, true);
}

asio::awaitable<void> open_idle_sessions(asio::io_context& io, tcp::endpoint server, int n,
                                         HttpTally& tally, std::vector<std::string>& ids) {
  for (int i = 0; i < n; ++i) {
    HttpClient client(io, server, tally);
    ids.push_back(co_await open_session(client, tally));
    client.close();
  }
}

asio::awaitable<void> delete_sessions(asio::io_context& io, tcp::endpoint server,
                                      const std::vector<std::string>& ids, HttpTally& tally) {
  HttpClient client(io, server, tally);
  for (const auto& id : ids) {
    Reply r = co_await client.request("DELETE /mcp", http::verb::delete_, id, "");
    expect_status(r, 204, "DELETE /mcp");
  }
  client.close();
}

// Runs the given coroutines to completion on `io`; throws the first failure.
void run_all(asio::io_context& io, std::vector<asio::awaitable<void>> tasks) {
  std::string failure;
  for (auto& task : tasks) {
    asio::co_spawn(io, std::move(task), [&failure](const std::exception_ptr& e) {
      if (!e || !failure.empty()) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        failure = ex.what();
      } catch (...) {
        failure = "unknown exception";
      }
    });
  }
  io.restart();
  io.run();
  if (!failure.empty()) throw ProtocolError("http: " + failure);
}

// `clients` callers, each with its own keep-alive connection and MCP session, send `calls`
// sequential tools/call of `tool` to `server` (after one untimed warm-up call each); the CPU
// of `measured` (the gateway) over the timed calls. `callers` keeps the sessions open.
Stats load_over_http(asio::io_context& io, tcp::endpoint server, int clients, int calls,
                     const std::string& tool, pid_t measured, HttpTally& tally,
                     std::vector<HttpCaller>& callers) {
  callers.reserve(static_cast<std::size_t>(clients));
  for (int i = 0; i < clients; ++i)
    callers.push_back({HttpClient(io, server, tally), tool, {}, kFirstCallId, {}});
  for (auto& c : callers) c.us.reserve(static_cast<std::size_t>(calls));

  std::vector<asio::awaitable<void>> tasks;
  for (auto& c : callers) tasks.push_back(set_up_caller(c, tally));
  run_all(io, std::move(tasks));

  tasks.clear();
  for (auto& c : callers) tasks.push_back(load_caller(c, tally, calls));
  const double cpu0 = cpu_ns(measured);
  auto t0 = Clock::now();
  run_all(io, std::move(tasks));
  double wall_s = micros_since(t0) / 1e6;
  const double cpu1 = cpu_ns(measured);
  std::vector<double> us;
  for (auto& c : callers) us.insert(us.end(), c.us.begin(), c.us.end());
  Stats s = summarize(std::move(us), wall_s);
  s.cpu_us_per_call = (cpu1 - cpu0) / 1e3 / static_cast<double>(s.calls);
  return s;
}

// `calls` sequential tools/call of `tool` whose request and answer each carry `text`, by one
// caller on a connection and session of its own (after one untimed warm-up call); the
// session's id goes to `sessions` (for its DELETE), the connection is closed.
Stats large_over_http(asio::io_context& io, tcp::endpoint server, int calls,
                      const std::string& tool, const std::string& text, HttpTally& tally,
                      std::vector<std::string>& sessions) {
  HttpCaller caller{HttpClient(io, server, tally), tool, {}, kFirstCallId, {}, text};
  std::vector<asio::awaitable<void>> tasks;
  tasks.push_back(set_up_caller(caller, tally));
  run_all(io, std::move(tasks));
  tasks.clear();
  tasks.push_back(load_caller(caller, tally, calls));
  auto t0 = Clock::now();
  run_all(io, std::move(tasks));
  Stats s = summarize(std::move(caller.us), micros_since(t0) / 1e6);
  caller.client.close();
  sessions.push_back(caller.session);
  return s;
}

// A megabyte of text to echo: JSON-plain, so that its request is its size.
const std::string& large_text() {
  static const std::string text(std::size_t{1} << 20, 'x');
  return text;
}

struct HttpResult {
  Stats load;
  Stats large;  // the 1 MiB calls
  long rss_before_kib = 0, rss_after_kib = 0;
  double idle_cpu_ms_per_s = 0;  // sluice's, with every idle session open
  HttpTally tally;
  std::string exit;
  bool exit_ok = false;
};

HttpResult run_http(const std::string& sluice_path, const std::string& fixture_path,
                    const std::filesystem::path& dir, int clients, int calls, int idle, int large) {
  HttpResult out;
  const std::string config = (dir / "mcp.json").string();
  const std::string port_file = (dir / "port").string();
  std::filesystem::remove(port_file);  // the last round's
  std::ofstream(config) << R"({"mcpServers":{"fx":{"command":)"
                        << bj::serialize(bj::value(fixture_path)) << "}}}\n";
  // clang-format off
  const std::vector<std::string> argv = {
      sluice_path, "serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0",
      "--port-file", port_file, "--state-dir", (dir / "state").string(),
      "--no-discover", "--config", config, "--expose", "all",
      "--max-sessions", std::to_string(clients + idle + 16), "--log-level", "warn"};
  // clang-format on
  Process sluice(argv, false, true);
  int port = wait_for_port(sluice, port_file);
  tcp::endpoint server(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));

  asio::io_context io;
  std::vector<HttpCaller> callers;
  out.load =
      load_over_http(io, server, clients, calls, "fx__echo", sluice.pid(), out.tally, callers);
  std::vector<std::string> sessions;

  // Idle sessions: the load sessions stay open, their connections are closed first.
  for (auto& c : callers) {
    c.client.close();
    sessions.push_back(c.session);
  }
  std::vector<std::string> idle_ids;
  out.rss_before_kib = rss_kib(sluice.pid());
  std::vector<asio::awaitable<void>> tasks;
  tasks.push_back(open_idle_sessions(io, server, idle, out.tally, idle_ids));
  run_all(io, std::move(tasks));
  out.rss_after_kib = rss_kib(sluice.pid());
  const double idle_cpu0 = cpu_ns(sluice.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  out.idle_cpu_ms_per_s = (cpu_ns(sluice.pid()) - idle_cpu0) / 1e6 / 2.0;
  // After the idle figures: the megabyte bodies' heap would otherwise be counted as theirs.
  out.large = large_over_http(io, server, large, "fx__echo", large_text(), out.tally, sessions);

  sessions.insert(sessions.end(), idle_ids.begin(), idle_ids.end());
  tasks.clear();
  tasks.push_back(delete_sessions(io, server, sessions, out.tally));
  run_all(io, std::move(tasks));

  std::vector<ChildId> downstreams = children_of(sluice.pid());
  auto stop_t0 = Clock::now();
  int status = sluice.stop(true);
  double stop_ms = micros_since(stop_t0) / 1e3;
  int survivors = kill_survivors(downstreams);
  sluice.kill_group();
  out.exit =
      describe_status(status) + " after SIGTERM in " + std::to_string(std::lround(stop_ms)) +
      " ms, " + std::to_string(downstreams.size()) + " child process(es)" +
      (sluice.was_killed() ? " (SIGKILLed after the guard)" : "") +
      (survivors > 0 ? " (" + std::to_string(survivors) + " children outlived it, killed)" : "");
  out.exit_ok =
      !sluice.was_killed() && survivors == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

// ---------------------------------------------------------------------------------------
// The HTTP floor: a minimal Beast HTTP/1.1 responder (`sluice_http_load --responder
// PORT_FILE`), one thread, keep-alive, that answers the same MCP exchanges as a server
// would with the least work: initialize (with a session id), notifications (202), and a
// tools/call echo of its `text` (one JSON parse, one serialisation). What any HTTP gateway
// costs at least on this machine, measured in the same run as sluice.

bj::object echo_answer(const bj::object& request) {
  bj::object out{{"jsonrpc", "2.0"}, {"id", request.contains("id") ? request.at("id") : nullptr}};
  const bj::string& method = request.at("method").as_string();
  if (method == "initialize") {
    out["result"] = bj::object{{"protocolVersion", kProtocolVersion},
                               {"capabilities", bj::object{{"tools", bj::object{}}}},
                               {"serverInfo", bj::object{{"name", "floor"}, {"version", "1"}}}};
  } else {
    const bj::value& text = request.at("params").at("arguments").at("text");
    out["result"] =
        bj::object{{"content", bj::array{bj::object{{"type", "text"}, {"text", text}}}}};
  }
  return out;
}

asio::awaitable<void> respond(tcp::socket socket) {
  beast::flat_buffer buffer;
  buffer.reserve(kReadRoom);
  socket.set_option(tcp::no_delay(true));
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    boost::system::error_code ec;
    co_await http::async_read(socket, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    http::request<http::string_body> req = parser.release();
    http::response<http::string_body> res{http::status::ok, req.version()};
    res.keep_alive(req.keep_alive());
    if (req.method() == http::verb::delete_) {
      res.result(http::status::no_content);
    } else if (auto msg = parse_object(req.body()); msg && msg->contains("method")) {
      if (!msg->contains("id")) {
        res.result(http::status::accepted);
      } else {
        if (msg->at("method") == "initialize") res.set("Mcp-Session-Id", "floor");
        res.set(http::field::content_type, "application/json");
        res.body() = bj::serialize(echo_answer(*msg));
      }
    } else {
      res.result(http::status::bad_request);
    }
    res.prepare_payload();
    co_await http::async_write(socket, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !req.keep_alive()) co_return;
  }
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor) {
  for (;;) {
    tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
    asio::co_spawn(acceptor.get_executor(), respond(std::move(socket)), asio::detached);
  }
}

int run_responder(const std::string& port_file) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::ofstream(port_file + ".tmp") << acceptor.local_endpoint().port() << "\n";
  std::filesystem::rename(port_file + ".tmp", port_file);
  asio::signal_set stop(io, SIGTERM, SIGINT);
  stop.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  asio::co_spawn(io, accept_loop(acceptor), asio::detached);
  io.run();
  return 0;
}

struct FloorResult {
  Stats load, large;
};

// The same HTTP loads as sluice's against the responder.
FloorResult run_floor(const std::string& self, const std::filesystem::path& dir, int clients,
                      int calls, int large) {
  const std::string port_file = (dir / "floor-port").string();
  std::filesystem::remove(port_file);  // the last round's
  Process floor({self, "--responder", port_file}, false, true);
  int port = wait_for_port(floor, port_file);
  tcp::endpoint server(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  asio::io_context io;
  HttpTally tally;
  std::vector<HttpCaller> callers;
  FloorResult out;
  out.load = load_over_http(io, server, clients, calls, "echo", floor.pid(), tally, callers);
  for (auto& c : callers) c.client.close();
  std::vector<std::string> sessions;
  out.large = large_over_http(io, server, large, "echo", large_text(), tally, sessions);
  floor.stop(true);
  return out;
}

int positive_arg(int argc, char** argv, int index, int fallback, int max) {
  if (argc <= index) return fallback;
  char* end = nullptr;
  long v = std::strtol(argv[index], &end, 10);
  if (*end != '\0' || v < 1 || v > max) {
    std::fprintf(stderr, "http_load: argument %d must be an integer in [1, %d]\n", index, max);
    std::exit(2);
  }
  return static_cast<int>(v);
}

void print_stats(const char* label, int clients, int calls, const Stats& s) {
  std::printf("%s: %d clients x %d calls: %.0f calls/s  p50 %.0f us  p99 %.0f us", label, clients,
              calls, s.calls_per_s, s.p50_us, s.p99_us);
  if (s.cpu_us_per_call >= 0) std::printf("  cpu %.1f us/call", s.cpu_us_per_call);
  std::printf("\n");
}

}  // namespace

// One round: every path's loads, one after the other, close together in time.
struct Round {
  Stats direct, direct_large, via_stdio;
  FloorResult floor;
  HttpResult http;
};

Round run_round(const std::string& sluice, const std::string& fixture, const std::string& self,
                const std::filesystem::path& dir, int clients, int calls, int idle, int large) {
  Round r;
  {
    Process fx({fixture}, true, false);
    r.direct = run_direct(fx, clients, calls);
    r.direct_large = run_direct(fx, 1, large, "echo", false, large_text());
    fx.stop(false);
  }
  // The same stdio load through `sluice serve` (one session, fx__echo): the gateway's own
  // cost, apart from what the HTTP transport adds.
  {
    const std::string config = (dir / "stdio-mcp.json").string();
    std::ofstream(config) << R"({"mcpServers":{"fx":{"command":)"
                          << bj::serialize(bj::value(fixture)) << "}}}";
    Process sl({sluice, "serve", "--no-discover", "--config", config, "--expose", "all",
                "--log-level", "warn"},
               true, true);
    r.via_stdio = run_direct(sl, clients, calls, "fx__echo", true);
    sl.stop(false);
  }
  r.floor = run_floor(self, dir, clients, calls, large);
  r.http = run_http(sluice, fixture, dir, clients, calls, idle, large);
  return r;
}

double ratio(double a, double b) { return a / std::max(1e-9, b); }

template <typename Pick>
Stats median_stats(const std::vector<Round>& rounds, Pick pick) {
  Stats m;
  m.calls_per_s = median_by(rounds, [&](const Round& r) { return pick(r).calls_per_s; });
  m.p50_us = median_by(rounds, [&](const Round& r) { return pick(r).p50_us; });
  m.p99_us = median_by(rounds, [&](const Round& r) { return pick(r).p99_us; });
  m.cpu_us_per_call = median_by(rounds, [&](const Round& r) { return pick(r).cpu_us_per_call; });
  return m;
}

// The budgets' ratios of one round: each from loads run close together in time.
double http_floor_throughput(const Round& r) {
  return ratio(r.http.load.calls_per_s, r.floor.load.calls_per_s);
}
double http_stdio_cpu(const Round& r) {
  return ratio(r.http.load.cpu_us_per_call, r.via_stdio.cpu_us_per_call);
}
double large_http_direct(const Round& r) {
  return ratio(r.http.large.p50_us, r.direct_large.p50_us);
}

void report(const std::vector<Round>& rounds, int clients, int calls, int idle, int large) {
  std::printf("medians of %zu round(s); each round runs every path in turn\n", rounds.size());
  const Stats direct = median_stats(rounds, [](const Round& r) { return r.direct; });
  const Stats via_stdio = median_stats(rounds, [](const Round& r) { return r.via_stdio; });
  const Stats floor = median_stats(rounds, [](const Round& r) { return r.floor.load; });
  const Stats http = median_stats(rounds, [](const Round& r) { return r.http.load; });
  print_stats("direct stdio   ", clients, calls, direct);
  print_stats("sluice stdio   ", clients, calls, via_stdio);
  std::printf("ratio stdio/direct: throughput %.3g  p50 %.1f  p99 %.1f\n",
              median_by(rounds,
                        [](const Round& r) {
                          return ratio(r.via_stdio.calls_per_s, r.direct.calls_per_s);
                        }),
              ratio(via_stdio.p50_us, direct.p50_us), ratio(via_stdio.p99_us, direct.p99_us));
  print_stats("http floor     ", clients, calls, floor);
  print_stats("sluice http    ", clients, calls, http);
  std::printf("ratio http/direct: throughput %.3g  p50 %.1f  p99 %.1f\n",
              median_by(rounds,
                        [](const Round& r) {
                          return ratio(r.http.load.calls_per_s, r.direct.calls_per_s);
                        }),
              ratio(http.p50_us, direct.p50_us), ratio(http.p99_us, direct.p99_us));
  std::printf("ratio http/floor: throughput %.3g (budget >= 0.5)\n",
              median_by(rounds, http_floor_throughput));
  std::printf("ratio sluice cpu per call http/stdio: %.2f (budget <= 2)\n",
              median_by(rounds, http_stdio_cpu));
  std::printf(
      "1 MiB echo     : %d sequential calls, p50 direct stdio %.2f ms, http floor %.2f ms, "
      "sluice http %.2f ms\n",
      large, median_by(rounds, [](const Round& r) { return r.direct_large.p50_us; }) / 1e3,
      median_by(rounds, [](const Round& r) { return r.floor.large.p50_us; }) / 1e3,
      median_by(rounds, [](const Round& r) { return r.http.large.p50_us; }) / 1e3);
  std::printf("ratio 1 MiB sluice http/direct: %.2f (budget <= 1.2), http floor/direct: %.2f\n",
              median_by(rounds, large_http_direct), median_by(rounds, [](const Round& r) {
                return ratio(r.floor.large.p50_us, r.direct_large.p50_us);
              }));
  if (rounds.size() > 1) {
    std::printf("each round     : http/floor throughput, cpu http/stdio, 1 MiB http/direct:");
    for (const Round& r : rounds) {
      std::printf("  %.3g %.2f %.2f", http_floor_throughput(r), http_stdio_cpu(r),
                  large_http_direct(r));
    }
    std::printf("\n");
  }
  const double grown = median_by(
      rounds, [](const Round& r) { return double(r.http.rss_after_kib - r.http.rss_before_kib); });
  std::printf(
      "idle sessions  : %d, RSS %+.0f KiB (%.1f KiB per session), sluice RSS %.1f MiB, idle CPU "
      "%.2f ms/s\n",
      idle, grown, grown / idle,
      median_by(rounds, [](const Round& r) { return double(r.http.rss_after_kib); }) / 1024.0,
      median_by(rounds, [](const Round& r) { return r.http.idle_cpu_ms_per_s; }));
  HttpTally tally;
  for (const Round& r : rounds) {
    tally.json_replies += r.http.tally.json_replies;
    tally.sse_replies += r.http.tally.sse_replies;
    tally.sse_priming += r.http.tally.sse_priming;
    tally.server_closes += r.http.tally.server_closes;
  }
  std::printf("http replies   : %zu json, %zu sse (%zu priming events), %zu closed by server\n",
              tally.json_replies, tally.sse_replies, tally.sse_priming, tally.server_closes);
}

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 3 && std::strcmp(argv[1], "--responder") == 0) return run_responder(argv[2]);
  if (argc < 3 || argc > 8) {
    std::fprintf(stderr,
                 "usage: %s SLUICE FIXTURE [CALLS_PER_CLIENT=500] [CLIENTS=16] "
                 "[IDLE_SESSIONS=100] [LARGE_CALLS=10] [ROUNDS=3]\n",
                 argv[0]);
    return 2;
  }
  char resolved[PATH_MAX];
  if (!realpath(argv[1], resolved)) return 2;
  const std::string sluice = resolved;
  if (!realpath(argv[2], resolved)) return 2;
  const std::string fixture = resolved;
  const int calls = positive_arg(argc, argv, 3, 500, 1'000'000);
  const int clients = positive_arg(argc, argv, 4, 16, 1024);
  const int idle = positive_arg(argc, argv, 5, 100, 10'000);
  const int large = positive_arg(argc, argv, 6, 10, 10'000);
  const int round_count = positive_arg(argc, argv, 7, 3, 100);

  char tmpl[] = "/tmp/sluice-http-load-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::filesystem::path dir = tmpl;
  int rc = 0;
  try {
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) throw ProtocolError("cannot read /proc/self/exe");
    self[len] = 0;
    std::vector<Round> rounds;
    for (int i = 0; i < round_count; ++i) {
      rounds.push_back(run_round(sluice, fixture, self, dir, clients, calls, idle, large));
      std::fprintf(stderr, "http_load: round %d of %d done\n", i + 1, round_count);
    }
    report(rounds, clients, calls, idle, large);
    for (const Round& r : rounds) {
      if (!r.http.exit_ok) {
        std::printf("sluice stop    : %s\n", r.http.exit.c_str());
        rc = 1;
      }
    }
    if (rc == 0) std::printf("sluice stop    : %s\n", rounds.back().http.exit.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http_load: %s\n", e.what());
    rc = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
