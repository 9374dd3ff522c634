// End-to-end stdio driver: the same echo calls sent
//   1. directly to the fixture server over stdio,
//   2. through a byte-copying relay (the floor for any stdio-to-stdio gateway: one extra hop),
//   3. through `sluice serve` (gateway.invoke -> fixture::echo),
// all in the same run, in three loads per path:
//   - sequential: N small calls, one in flight: p50/p99 and the added p50 over direct, and
//     sluice's added p50 as a ratio of the relay's (budget 1.25, or 20 us where the relay's
//     is below the noise);
//   - concurrent: CONCURRENT callers on the one session, each keeping one call in flight,
//     CONCURRENT x 8 x N/10 calls: calls/s as a ratio of direct (budget 0.5);
//   - large: BIG sequential calls whose request and response each carry 1 MiB of text: p50
//     as a ratio of direct (budget 1.2).
// sluice's own CPU (every thread, from /proc/PID/task/*/schedstat, so no perf is needed) over
// the sequential and concurrent loads, per proxied call (budget 20 us), and the relay's own
// beside it: what the hop itself costs in syscalls and wake-ups on this machine. Each load's
// share is printed too, sluice's beside the relay's: a call alone in flight pays both
// processes' wake-ups itself, calls in flight together share them.
// Each figure is the median of ROUNDS rounds of the three paths in turn.
// The same table again, when EVERYTHING_JS is given, with the reference Node SDK server
// (@modelcontextprotocol/server-everything's dist/index.js, run as `node EVERYTHING_JS stdio`)
// downstream instead of the C++ fixture, calling its read-only echo tool: the setup of the
// issue's own measurements, where the downstream, not the hop, is the slow part.
// Usage: sluice_latency SLUICE FIXTURE [N=2000] [CONCURRENT=16] [BIG=20] [ROUNDS=3]
//                       [EVERYTHING_JS]
//        (also: sluice_latency --relay CMD...)
// Every read is bounded (30 s); every child is reaped.
#include "load_process.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using sluice::bench::cpu_ns;
using sluice::bench::on_path;

using Clock = std::chrono::steady_clock;

struct Peer {
  pid_t pid = -1;
  int in = -1, out = -1;
  std::string buf;
};

Peer spawn(const std::vector<std::string>& argv_s) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) std::exit(1);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  std::vector<char*> argv;
  for (const auto& s : argv_s) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  Peer p;
  if (posix_spawn(&p.pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) std::exit(1);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  p.in = in[1];
  p.out = out[0];
  return p;
}

void send_line(Peer& p, const std::string& line) {
  std::string data = line + "\n";
  if (write(p.in, data.data(), data.size()) != static_cast<ssize_t>(data.size())) std::exit(1);
}

std::string read_line(Peer& p) {
  std::size_t scanned = 0;  // a 1 MiB line arrives in many reads: scan each byte once
  for (;;) {
    auto nl = p.buf.find('\n', scanned);
    if (nl != std::string::npos) {
      std::string line = p.buf.substr(0, nl);
      p.buf.erase(0, nl + 1);
      return line;
    }
    scanned = p.buf.size();
    pollfd pfd{p.out, POLLIN, 0};
    if (poll(&pfd, 1, 30000) <= 0) {
      std::fprintf(stderr, "latency: no answer within 30 s\n");
      std::exit(1);
    }
    char chunk[65536];
    ssize_t n = read(p.out, chunk, sizeof chunk);
    if (n <= 0) {
      std::fprintf(stderr, "latency: peer closed\n");
      std::exit(1);
    }
    p.buf.append(chunk, static_cast<std::size_t>(n));
  }
}

// A response to `id` (skipping notifications).
std::string await_id(Peer& p, int id) {
  // The id may be the last member (the Node SDK writes it last): a ',' or '}' follows it.
  const std::string needle = "\"id\":" + std::to_string(id);
  for (;;) {
    std::string line = read_line(p);
    for (auto at = line.find(needle); at != std::string::npos; at = line.find(needle, at + 1)) {
      const char next = at + needle.size() < line.size() ? line[at + needle.size()] : 0;
      if (next == ',' || next == '}') return line;
    }
  }
}

void finish(Peer& p) {
  close(p.in);
  int status = 0;
  waitpid(p.pid, &status, 0);
  close(p.out);
}

struct Stats {
  double p50_us, p99_us;
};

Stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

// One JSON string's worth of text (already escaped) of about `bytes` bytes: words, digits,
// punctuation and an escaped newline now and then, like a file a tool returns.
std::string payload_text(std::size_t bytes) {
  static constexpr std::string_view kLine =
      "The quick brown fox jumps over 13 lazy dogs; {braces}, [brackets] and 'quotes'.\\n";
  std::string out;
  out.reserve(bytes + kLine.size());
  while (out.size() < bytes) out += kLine;
  return out;
}

// A downstream the paths call: its command line, and its echo tool's argument.
struct Downstream {
  std::string label;
  std::vector<std::string> argv;
  std::string text_key;  // the echo tool's string argument
};

std::string call_of(bool through_gateway, const Downstream& ds, const std::string& text) {
  const std::string args = R"({")" + ds.text_key + R"(":")" + text + R"("})";
  return through_gateway
             ? R"("method":"tools/call","params":{"name":"gateway.invoke","arguments":{"tool_id":"fx::echo","arguments":)" +
                   args + "}}}"
             : R"("method":"tools/call","params":{"name":"echo","arguments":)" + args + "}}";
}

void initialize(Peer& p) {
  send_line(p, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
               R"("2025-11-25","capabilities":{},"clientInfo":{"name":"latency","version":"1"}}})");
  await_id(p, 1);
  send_line(p, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
}

// `n` calls one after another (after untimed warm-up calls); ids from `first_id`.
Stats sequential(Peer& p, int n, int warmup, const std::string& call, int first_id) {
  std::vector<double> us;
  for (int i = 0; i < n + warmup; ++i) {
    int id = first_id + i;
    auto t0 = Clock::now();
    send_line(p, R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + "," + call);
    await_id(p, id);
    auto t1 = Clock::now();
    if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return summarize(std::move(us));
}

// The id of a response line (0 for a line without a numeric id: a notification).
int id_of(const std::string& line) {
  auto at = line.find("\"id\":");
  return at == std::string::npos ? 0 : std::atoi(line.c_str() + at + 5);
}

// `callers` calls kept in flight on one session until `total` have been answered: calls/s.
double concurrent(Peer& p, int callers, int total, const std::string& call, int first_id) {
  int sent = 0, answered = 0;
  auto send_next = [&] {
    send_line(p, R"({"jsonrpc":"2.0","id":)" + std::to_string(first_id + sent) + "," + call);
    ++sent;
  };
  auto t0 = Clock::now();
  for (int i = 0; i < callers && sent < total; ++i) send_next();
  while (answered < total) {
    std::string line = read_line(p);
    int id = id_of(line);
    if (id < first_id || id >= first_id + total) continue;
    if (line.find("\"error\"") != std::string::npos || line.find("isError") != std::string::npos) {
      std::fprintf(stderr, "latency: a concurrent call failed: %s\n", line.substr(0, 400).c_str());
      std::exit(1);
    }
    ++answered;
    if (sent < total) send_next();
  }
  return total / std::chrono::duration<double>(Clock::now() - t0).count();
}

struct PathResult {
  Stats small{}, big{};
  double calls_per_s = 0;
  double cpu_us_per_call = 0;      // of the measured process (sluice), -1 when not measured
  double sequential_cpu_us = 0;    // the same over the sequential load alone
  double concurrent_cpu_us = 0;    // and over the concurrent load alone
  double big_cpu_ms_per_call = 0;  // the same over the 1 MiB calls
};

// Each figure's median over the rounds (an odd count is exact; an even one takes the upper).
PathResult median_of(const std::vector<PathResult>& rounds) {
  auto median = [&](auto field) { return sluice::bench::median_by(rounds, field); };
  PathResult m;
  m.small.p50_us = median([](const PathResult& r) { return r.small.p50_us; });
  m.small.p99_us = median([](const PathResult& r) { return r.small.p99_us; });
  m.big.p50_us = median([](const PathResult& r) { return r.big.p50_us; });
  m.big.p99_us = median([](const PathResult& r) { return r.big.p99_us; });
  m.calls_per_s = median([](const PathResult& r) { return r.calls_per_s; });
  m.cpu_us_per_call = median([](const PathResult& r) { return r.cpu_us_per_call; });
  m.sequential_cpu_us = median([](const PathResult& r) { return r.sequential_cpu_us; });
  m.concurrent_cpu_us = median([](const PathResult& r) { return r.concurrent_cpu_us; });
  m.big_cpu_ms_per_call = median([](const PathResult& r) { return r.big_cpu_ms_per_call; });
  return m;
}

PathResult measure(Peer& p, const Downstream& ds, int n, int callers, int big, bool through_gateway,
                   bool cpu) {
  PathResult r;
  initialize(p);
  const int warmup = std::max(10, n / 10);
  const int concurrent_calls = std::max(callers * 8, n / 10 * callers);
  const double cpu0 = cpu ? cpu_ns(p.pid) : 0;
  r.small = sequential(p, n, warmup, call_of(through_gateway, ds, "ping"), 100);
  const double cpu1 = cpu ? cpu_ns(p.pid) : 0;
  r.calls_per_s = concurrent(p, callers, concurrent_calls, call_of(through_gateway, ds, "ping"),
                             100 + n + warmup);
  const double cpu2 = cpu ? cpu_ns(p.pid) : 0;
  r.cpu_us_per_call = cpu ? (cpu2 - cpu0) / 1000.0 / (n + warmup + concurrent_calls) : -1;
  r.sequential_cpu_us = cpu ? (cpu1 - cpu0) / 1000.0 / (n + warmup) : -1;
  r.concurrent_cpu_us = cpu ? (cpu2 - cpu1) / 1000.0 / concurrent_calls : -1;
  const std::string mib = payload_text(1u << 20);
  const double big_cpu0 = cpu ? cpu_ns(p.pid) : 0;
  r.big = sequential(p, big, 2, call_of(through_gateway, ds, mib), 10'000'000);
  r.big_cpu_ms_per_call = cpu ? (cpu_ns(p.pid) - big_cpu0) / 1e6 / (big + 2) : -1;
  return r;
}

int relay(char** argv) {
  Peer child = spawn(std::vector<std::string>(
      argv, argv + [&] {
        int k = 0;
        while (argv[k]) ++k;
        return k;
      }()));
  pollfd fds[2] = {{0, POLLIN, 0}, {child.out, POLLIN, 0}};
  char buf[65536];
  for (;;) {
    if (poll(fds, 2, -1) < 0) return 1;
    if (fds[0].revents) {
      ssize_t n = read(0, buf, sizeof buf);
      if (n <= 0) break;
      if (write(child.in, buf, static_cast<std::size_t>(n)) != n) break;
    }
    if (fds[1].revents) {
      ssize_t n = read(child.out, buf, sizeof buf);
      if (n <= 0) break;
      if (write(1, buf, static_cast<std::size_t>(n)) != n) break;
    }
  }
  finish(child);
  return 0;
}

struct Settings {
  int n, callers, big, rounds;
  std::string sluice, self, dir;
};

// The three paths in turn, `rounds` times, with `ds` downstream; each figure is the median of
// its rounds, so a burst of noise on the machine moves one round, not the result. Prints the
// table and its ratios; false when the check call through sluice failed.
bool run_table(const Downstream& ds, const Settings& s) {
  const std::string config = s.dir + "/mcp.json";
  {
    std::ofstream out(config);
    out << R"({"mcpServers":{"fx":{"command":")" << ds.argv[0] << R"(","args":[)";
    for (std::size_t i = 1; i < ds.argv.size(); ++i) {
      out << (i > 1 ? "," : "") << '"' << ds.argv[i] << '"';
    }
    out << R"(]}},"autoStart":["fx"]})";
  }
  std::vector<std::string> relay_argv{s.self, "--relay"};
  relay_argv.insert(relay_argv.end(), ds.argv.begin(), ds.argv.end());
  std::vector<PathResult> dr, rr, gr;
  for (int round = 0; round < s.rounds; ++round) {
    Peer direct = spawn(ds.argv);
    dr.push_back(measure(direct, ds, s.n, s.callers, s.big, false, false));
    finish(direct);
    Peer relayed = spawn(relay_argv);
    rr.push_back(measure(relayed, ds, s.n, s.callers, s.big, false, true));
    finish(relayed);
    Peer gw = spawn({s.sluice, "serve", "--no-discover", "--no-cache", "--state-dir", s.dir,
                     "--config", config, "--log-level", "off"});
    gr.push_back(measure(gw, ds, s.n, s.callers, s.big, true, true));
    send_line(gw, R"({"jsonrpc":"2.0","id":9,)" + call_of(true, ds, "check"));
    const bool failed = await_id(gw, 9).find("isError") != std::string::npos;
    finish(gw);
    if (failed) {
      std::fprintf(stderr, "latency: the call through sluice failed\n");
      return false;
    }
  }
  const PathResult d = median_of(dr), r = median_of(rr), g = median_of(gr);
  std::printf(
      "downstream: %s; sequential: %d calls a path; concurrent: %d callers on one session; "
      "large: %d calls of 1 MiB each way; medians of %d rounds\n",
      ds.label.c_str(), s.n, s.callers, s.big, s.rounds);
  std::printf("%-7s %10s %10s %10s %12s %12s %12s\n", "path", "p50 us", "p99 us", "added us",
              "calls/s", "1MiB p50 ms", "cpu us/call");
  for (auto [name, x] :
       {std::pair<const char*, const PathResult*>{"direct", &d}, {"relay", &r}, {"sluice", &g}}) {
    std::printf("%-7s %10.1f %10.1f %10.1f %12.0f %12.2f", name, x->small.p50_us, x->small.p99_us,
                x->small.p50_us - d.small.p50_us, x->calls_per_s, x->big.p50_us / 1000.0);
    if (x->cpu_us_per_call >= 0) {
      std::printf(" %12.1f\n", x->cpu_us_per_call);
    } else {
      std::printf(" %12s\n", "-");
    }
  }
  const double relay_added = r.small.p50_us - d.small.p50_us;
  const double sluice_added = g.small.p50_us - d.small.p50_us;
  std::printf("ratios (budget)\n");
  std::printf("  sluice added p50 / relay added p50   %6.2f  (1.25; or added <= 20 us: %.1f)\n",
              sluice_added / std::max(1.0, relay_added), sluice_added);
  std::printf("  sluice / direct calls/s, %2d callers  %6.2f  (>= 0.5; relay %.2f)\n", s.callers,
              g.calls_per_s / d.calls_per_s, r.calls_per_s / d.calls_per_s);
  std::printf("  sluice / direct 1 MiB p50            %6.2f  (<= 1.2; relay %.2f)\n",
              g.big.p50_us / d.big.p50_us, r.big.p50_us / d.big.p50_us);
  std::printf("  sluice CPU per proxied call          %6.1f us  (<= 20)\n", g.cpu_us_per_call);
  std::printf("    of it, one call in flight          %6.1f us  (relay %.1f us)\n",
              g.sequential_cpu_us, r.sequential_cpu_us);
  std::printf("    of it, %2d calls in flight          %6.1f us  (relay %.1f us)\n", s.callers,
              g.concurrent_cpu_us, r.concurrent_cpu_us);
  std::printf("  sluice CPU per 1 MiB call            %6.2f ms  (relay %.2f ms)\n",
              g.big_cpu_ms_per_call, r.big_cpu_ms_per_call);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc >= 3 && std::strcmp(argv[1], "--relay") == 0) return relay(argv + 2);
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s SLUICE FIXTURE [N [CONCURRENT [BIG [ROUNDS [EVERYTHING_JS]]]]]\n",
                 argv[0]);
    return 2;
  }
  char resolved[4096];
  Settings s{};
  if (!realpath(argv[1], resolved)) return 2;
  s.sluice = resolved;
  if (!realpath(argv[2], resolved)) return 2;
  std::vector<Downstream> downstreams{{"the C++ fixture (fixture_server)", {resolved}, "text"}};
  s.n = argc > 3 ? std::atoi(argv[3]) : 2000;
  s.callers = argc > 4 ? std::atoi(argv[4]) : 16;
  s.big = argc > 5 ? std::atoi(argv[5]) : 20;
  s.rounds = argc > 6 ? std::atoi(argv[6]) : 3;
  if (s.n < 10 || s.callers < 1 || s.callers > 1024 || s.big < 1 || s.big > 1000 || s.rounds < 1 ||
      s.rounds > 99) {
    std::fprintf(stderr,
                 "latency: N >= 10, 1 <= CONCURRENT <= 1024, 1 <= BIG <= 1000, "
                 "1 <= ROUNDS <= 99\n");
    return 2;
  }
  if (argc > 7) {
    const std::string node = on_path("node");
    if (node.empty() || !realpath(argv[7], resolved)) {
      std::fprintf(stderr, "latency: EVERYTHING_JS needs node on PATH and an existing file\n");
      return 2;
    }
    downstreams.push_back(
        {"server-everything (Node SDK), its echo tool", {node, resolved, "stdio"}, "message"});
  }
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = 0;
  s.self = self;
  char tmpl[] = "/tmp/sluice-latency-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  s.dir = tmpl;
  bool ok = true;
  for (std::size_t i = 0; i < downstreams.size() && ok; ++i) {
    if (i > 0) std::printf("\n");
    ok = run_table(downstreams[i], s);
  }
  std::string rm = std::string("rm -rf ") + tmpl;
  if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "latency: %s left behind\n", tmpl);
  return ok ? 0 : 1;
}
