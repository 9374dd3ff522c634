// End-to-end latency driver: the same echo call sent N times (sequentially, one in flight)
//   1. directly to the fixture server over stdio,
//   2. through a byte-copying relay (the floor for any stdio-to-stdio gateway: one extra hop),
//   3. through `sluice serve` (gateway.invoke -> fixture::echo),
// all in the same run, and reports p50/p99 and sluice's added latency as a ratio of the
// relay's. Usage: sluice_latency SLUICE FIXTURE [N]   (also: sluice_latency --relay CMD...)
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
#include <vector>

extern char** environ;

namespace {

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
  for (;;) {
    auto nl = p.buf.find('\n');
    if (nl != std::string::npos) {
      std::string line = p.buf.substr(0, nl);
      p.buf.erase(0, nl + 1);
      return line;
    }
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
  std::string needle = "\"id\":" + std::to_string(id) + ",";
  for (;;) {
    std::string line = read_line(p);
    if (line.find(needle) != std::string::npos) return line;
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

Stats measure(Peer& p, int n, bool through_gateway) {
  send_line(p, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
               R"("2025-11-25","capabilities":{},"clientInfo":{"name":"latency","version":"1"}}})");
  await_id(p, 1);
  send_line(p, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  std::string call =
      through_gateway
          ? R"("method":"tools/call","params":{"name":"gateway.invoke","arguments":{"tool_id":"fx::echo","arguments":{"text":"ping"}}}})"
          : R"("method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}})";
  std::vector<double> us;
  int warmup = std::max(10, n / 10);
  for (int i = 0; i < n + warmup; ++i) {
    int id = 100 + i;
    auto t0 = Clock::now();
    send_line(p, R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + "," + call);
    await_id(p, id);
    auto t1 = Clock::now();
    if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 99 / 100]};
}

int relay(char** argv) {
  Peer child = spawn(std::vector<std::string>(argv, argv + [&] {
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

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc >= 3 && std::strcmp(argv[1], "--relay") == 0) return relay(argv + 2);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SLUICE FIXTURE [N]\n", argv[0]);
    return 2;
  }
  char resolved[4096];
  if (!realpath(argv[1], resolved)) return 2;
  std::string sluice = resolved;
  if (!realpath(argv[2], resolved)) return 2;
  std::string fixture = resolved;
  int n = argc > 3 ? std::atoi(argv[3]) : 2000;
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = 0;
  char tmpl[] = "/tmp/sluice-latency-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  std::string config = std::string(tmpl) + "/mcp.json";
  std::ofstream(config) << R"({"mcpServers":{"fx":{"command":")" << fixture << R"("}},"autoStart":["fx"]})";

  Peer direct = spawn({fixture});
  Stats d = measure(direct, n, false);
  finish(direct);
  Peer relayed = spawn({self, "--relay", fixture});
  Stats r = measure(relayed, n, false);
  finish(relayed);
  Peer gw = spawn({sluice, "serve", "--no-discover", "--config", config, "--log-level", "off"});
  Stats g = measure(gw, n, true);
  send_line(gw, R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"gateway.invoke","arguments":{"tool_id":"fx::echo","arguments":{"text":"check"}}}})");
  if (await_id(gw, 9).find("isError") != std::string::npos) {
    std::fprintf(stderr, "latency: the call through sluice failed\n");
    return 1;
  }
  finish(gw);
  std::remove(config.c_str());
  rmdir(tmpl);

  std::printf("calls per path: %d (sequential echo)\n", n);
  std::printf("direct      p50 %8.1f us  p99 %8.1f us\n", d.p50_us, d.p99_us);
  std::printf("relay       p50 %8.1f us  p99 %8.1f us  (+%.1f us)\n", r.p50_us, r.p99_us,
              r.p50_us - d.p50_us);
  std::printf("sluice      p50 %8.1f us  p99 %8.1f us  (+%.1f us)\n", g.p50_us, g.p99_us,
              g.p50_us - d.p50_us);
  double ratio = (g.p50_us - d.p50_us) / std::max(1.0, r.p50_us - d.p50_us);
  std::printf("sluice added p50 / relay added p50 = %.2f (budget 1.25)\n", ratio);
  return 0;
}
