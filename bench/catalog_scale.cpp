// The catalog at scale, in one run: N configured fixture servers with T tools each
//   1. `sluice index` of all of them (sluice.indexConcurrency, 8) against one server's start:
//      how many single starts the whole indexing costs (ideal N/8, serial N);
//   2. `gateway.catalog_search` answered from the cache with no server running: p50/p90 of
//      the round trip, beside an MCP ping's round trip (the stdio floor), and sluice's RSS;
//   3. a first search on an empty cache, one lazy server: its answer (holding that server's
//      tool) against one direct start of the same server.
//   4. N servers connected (autoStart) and idle: sluice's RSS and CPU, and a call's p50 with
//      all of them running against the same with one server.
//   5. the aggregate list (`--expose all`) of 3 servers of 500 tools each: the whole of
//      tools/list, every page, against the three servers' own tools/list asked directly one
//      after another (the target: no slower than their sum), the two alternated.
// Usage: sluice_catalog_scale SLUICE FIXTURE [SERVERS=100] [TOOLS=100] [QUERIES=300] [START_MS=100]
// The servers of step 1 take START_MS to start (--start-delay-ms), as real ones do (a node
// server takes 100 ms or more); the fixture itself starts in a few ms.
// Prints each figure beside its target; exits 1 when a protocol step fails (not on a target).
#include "load_process.hpp"

#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace bj = boost::json;
using sluice::bench::Clock;
using sluice::bench::Process;
using Micros = std::chrono::duration<double, std::micro>;

struct Paths {
  std::string sluice, fixture;
  std::filesystem::path dir;
};

std::string fixture_config(const Paths& p, std::size_t servers, std::size_t tools,
                           const std::string& prefix, std::size_t start_ms = 0) {
  bj::object entries;
  for (std::size_t i = 0; i < servers; ++i) {
    std::string name = fmt::format("{}{:03}", prefix, i);
    entries[name] =
        bj::object{{"command", p.fixture},
                   {"args", bj::array{"--name=" + name, fmt::format("--tools={}", tools),
                                      fmt::format("--start-delay-ms={}", start_ms)}}};
  }
  return bj::serialize(bj::object{{"mcpServers", std::move(entries)}});
}

std::filesystem::path write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// Runs `sluice index --json ...` and returns its summary.
bj::object run_index(const Paths& p, const std::filesystem::path& config,
                     const std::filesystem::path& state) {
  Process proc({p.sluice, "index", "--json", "--no-discover", "--config", config.string(),
                "--state-dir", state.string(), "--log-level", "error"},
               true, true);
  std::string line = proc.read_line();
  int status = proc.stop(false);
  bj::value v = bj::parse(line);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw sluice::bench::ProtocolError("sluice index failed: " + line);
  }
  return v.as_object();
}

// One MCP client session over a sluice's stdio.
class Client {
 public:
  Client(const Paths& p, const std::filesystem::path& config, const std::filesystem::path& state,
         const std::vector<std::string>& flags = {})
      : proc_(argv(p, config, state, flags), true, true) {
    request("initialize", R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                          R"("clientInfo":{"name":"bench","version":"1"}})");
    proc_.write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }
  bj::value request(const std::string& method, const std::string& params) {
    const std::string id = std::to_string(++next_id_);
    proc_.write_line(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method +
                     R"(","params":)" + params + "}");
    for (;;) {
      bj::value v = bj::parse(proc_.read_line());
      const auto* got = v.as_object().if_contains("id");
      if (got && bj::serialize(*got) == id) return v;
    }
  }
  bj::object search(const std::string& query) {
    bj::value v = request(
        "tools/call",
        bj::serialize(bj::object{{"name", "gateway.catalog_search"},
                                 {"arguments", bj::object{{"query", query}, {"limit", 10}}}}));
    return v.at("result").at("structuredContent").as_object();
  }
  Process& process() { return proc_; }

 private:
  static std::vector<std::string> argv(const Paths& p, const std::filesystem::path& config,
                                       const std::filesystem::path& state,
                                       const std::vector<std::string>& flags) {
    std::vector<std::string> args{p.sluice,      "--no-discover", "--config",    config.string(),
                                  "--state-dir", state.string(),  "--log-level", "error"};
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
  }
  Process proc_;
  int next_id_ = 0;
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

const char* verdict(bool ok) { return ok ? "ok" : "ABOVE TARGET"; }

// The fixture named `name` with `tools` tools, started directly and initialized.
std::unique_ptr<Process> open_direct(const Paths& p, const std::string& name, std::size_t tools) {
  auto fx = std::make_unique<Process>(
      std::vector<std::string>{p.fixture, "--name=" + name, fmt::format("--tools={}", tools)}, true,
      true);
  fx->write_line(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                 R"("2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}})");
  fx->read_line();
  fx->write_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  return fx;
}

// One direct start of the fixture: spawn, initialize, tools/list, in ms.
double direct_start_ms(const Paths& p, std::size_t tools) {
  const auto began = Clock::now();
  auto fx = open_direct(p, "direct", tools);
  fx->write_line(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  fx->read_line();
  return std::chrono::duration<double, std::milli>(Clock::now() - began).count();
}

void bench_index(const Paths& p, std::size_t servers, std::size_t tools, std::size_t start_ms) {
  auto one = write_file(p.dir / "one.json", fixture_config(p, 1, tools, "single", start_ms));
  std::vector<double> singles;
  for (int i = 0; i < 3; ++i) {
    singles.push_back(static_cast<double>(
        run_index(p, one, p.dir / fmt::format("one-state-{}", i)).at("elapsed_ms").as_int64()));
  }
  const double single = std::max(percentile(singles, 0.5), 1.0);
  auto all = write_file(p.dir / "all.json", fixture_config(p, servers, tools, "s", start_ms));
  bj::object summary = run_index(p, all, p.dir / "state");
  const double elapsed = static_cast<double>(summary.at("elapsed_ms").as_int64());
  const double concurrency =
      static_cast<double>(summary.at("concurrency").to_number<std::uint64_t>());
  const double ideal = static_cast<double>(servers) / concurrency;
  const double starts = elapsed / single;
  fmt::print(
      "index: {} servers starting in {} ms each, {} tools in {:.0f} ms; one server's "
      "index {:.0f} ms\n",
      summary.at("indexed").to_number<std::uint64_t>(), start_ms,
      summary.at("tools").to_number<std::uint64_t>(), elapsed, single);
  fmt::print("index: {:.1f} single starts (ideal {:.1f} at concurrency {:.0f}, serial {}): {}\n",
             starts, ideal, concurrency, servers, verdict(starts <= 2.0 * ideal));
}

void bench_search(const Paths& p, std::size_t servers, std::size_t queries) {
  Client c(p, p.dir / "all.json", p.dir / "state");
  bj::object first = c.search("look up");  // waits for the cache's load
  const auto running = sluice::bench::children_of(c.process().pid()).size();
  static const std::vector<std::string> kQueries = {"weather forecast for a city",
                                                    "translate a phrase",
                                                    "open support tickets",
                                                    "flights between airports",
                                                    "recipe with an ingredient",
                                                    "commits on a branch",
                                                    "contacts address book",
                                                    "service metrics",
                                                    "route between two places",
                                                    "stock price",
                                                    "exchange rate",
                                                    "generated tool 0042"};
  std::vector<double> search_us, ping_us;
  for (std::size_t i = 0; i < queries; ++i) {
    auto t0 = Clock::now();
    c.request("ping", "{}");
    auto t1 = Clock::now();
    c.search(kQueries[i % kQueries.size()]);
    auto t2 = Clock::now();
    ping_us.push_back(Micros(t1 - t0).count());
    search_us.push_back(Micros(t2 - t1).count());
  }
  const pid_t pid = c.process().pid();
  const double rss_mib = static_cast<double>(sluice::bench::rss_kib(pid)) / 1024.0;
  const double anon_mib = static_cast<double>(sluice::bench::status_kib(pid, "RssAnon")) / 1024.0;
  const double file_mib = static_cast<double>(sluice::bench::status_kib(pid, "RssFile")) / 1024.0;
  const double p50 = percentile(search_us, 0.5);
  fmt::print("search: {} tools cached from {} servers, {} running\n",
             first.at("total_tools").to_number<std::uint64_t>(), servers, running);
  fmt::print("search: p50 {:.0f} us, p90 {:.0f} us (ping p50 {:.0f} us) over {} queries: {}\n", p50,
             percentile(search_us, 0.9), percentile(ping_us, 0.5), queries, verdict(p50 <= 1000.0));
  fmt::print(
      "search: sluice RSS {:.1f} MiB ({:.1f} its own heap and stacks, {:.1f} binary and library "
      "pages) with every server cached and none running: {}\n",
      rss_mib, anon_mib, file_mib, verdict(rss_mib <= 20.0));
}

void bench_first_search(const Paths& p, std::size_t tools) {
  auto config = write_file(p.dir / "first.json", fixture_config(p, 1, tools, "lazy"));
  const double direct = direct_start_ms(p, tools);
  Client c(p, config, p.dir / "empty-state");
  const auto began = Clock::now();
  bj::object found = c.search("generated tool 0001");
  const double first = std::chrono::duration<double, std::milli>(Clock::now() - began).count();
  const auto& results = found.at("results").as_array();
  const bool hit = !results.empty() && results[0].at("server") == "lazy000";
  fmt::print(
      "first search, empty cache: {:.1f} ms, one direct start {:.1f} ms (+{:.1f} ms), "
      "found the lazy server's tool: {}\n",
      first, direct, first - direct, hit ? "yes" : "NO");
}

// `servers` fixture servers all started at sluice's start (autoStart) and left idle: sluice's
// RSS and CPU once every one runs, and a call's p50 (gateway.invoke of the last server's echo)
// against the same with one server, so a per-call cost that grows with the fleet shows.
struct Connected {
  std::size_t running = 0;
  double rss_mib = 0, idle_cpu_ms_per_s = 0, call_p50_us = 0;
};

Connected run_connected(const Paths& p, std::size_t servers, std::size_t tools) {
  const std::string prefix = fmt::format("c{}-", servers);
  bj::value config = bj::parse(fixture_config(p, servers, tools, prefix));
  bj::array auto_start;
  for (const auto& [name, entry] : config.at("mcpServers").as_object()) auto_start.push_back(name);
  config.as_object()["autoStart"] = std::move(auto_start);
  auto file = write_file(p.dir / fmt::format("connected-{}.json", servers), bj::serialize(config));
  Client c(p, file, p.dir / fmt::format("connected-state-{}", servers));
  const pid_t pid = c.process().pid();
  Connected r;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while ((r.running = sluice::bench::children_of(pid).size()) < servers &&
         Clock::now() < deadline) {
    c.request("ping", "{}");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the starts' own work settles
  const double cpu0 = sluice::bench::cpu_ns(pid);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  r.idle_cpu_ms_per_s = (sluice::bench::cpu_ns(pid) - cpu0) / 1e6 / 3.0;
  r.rss_mib = static_cast<double>(sluice::bench::rss_kib(pid)) / 1024.0;
  const std::string call = bj::serialize(bj::object{
      {"name", "gateway.invoke"},
      {"arguments", bj::object{{"tool_id", fmt::format("{}{:03}::echo", prefix, servers - 1)},
                               {"arguments", bj::object{{"text", "ping"}}}}}});
  std::vector<double> us;
  for (int i = 0; i < 1100; ++i) {
    auto t0 = Clock::now();
    bj::value v = c.request("tools/call", call);
    if (v.at("result").as_object().if_contains("isError")) {
      throw sluice::bench::ProtocolError("a call with every server connected failed");
    }
    if (i >= 100) us.push_back(Micros(Clock::now() - t0).count());
  }
  r.call_p50_us = percentile(us, 0.5);
  return r;
}

void bench_connected(const Paths& p, std::size_t servers, std::size_t tools) {
  const Connected one = run_connected(p, 1, tools);
  const Connected all = run_connected(p, servers, tools);
  fmt::print(
      "connected: {} of {} servers running, idle: sluice RSS {:.1f} MiB, CPU {:.2f} ms/s "
      "(one server: {:.1f} MiB, {:.2f} ms/s)\n",
      all.running, servers, all.rss_mib, all.idle_cpu_ms_per_s, one.rss_mib, one.idle_cpu_ms_per_s);
  fmt::print("connected: call p50 {:.0f} us with {} servers, {:.0f} us with one: {:.2f}x\n",
             all.call_p50_us, servers, one.call_p50_us, all.call_p50_us / one.call_p50_us);
}

// The nextCursor of a list's answer (read as text: the answer's tail), or "" on its last page.
std::string next_cursor(const std::string& answer) {
  constexpr std::string_view kKey = R"("nextCursor":")";
  const std::size_t at = answer.rfind(kKey);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + kKey.size();
  return answer.substr(begin, answer.find('"', begin) - begin);
}

// Step 5. Every answer is read as a line of text, not parsed, on both sides: the client's own
// parsing would weigh the same bytes on each and hide the difference.
void bench_aggregate_list(const Paths& p) {
  constexpr std::size_t kServers = 3, kTools = 500, kRounds = 50;
  std::vector<std::unique_ptr<Process>> direct;
  for (std::size_t i = 0; i < kServers; ++i) {
    direct.push_back(open_direct(p, fmt::format("own{}", i), kTools));
  }
  auto config = write_file(p.dir / "aggregate.json", fixture_config(p, kServers, kTools, "agg"));
  Client c(p, config, p.dir / "aggregate-state", {"--expose", "all"});
  Process& sluice = c.process();
  int id = 1000;
  std::size_t pages = 0, bytes = 0;
  // The whole aggregate list, page by page; the first (untimed) starts the servers.
  auto list_all = [&] {
    std::string cursor;
    pages = bytes = 0;
    do {
      const std::string params = cursor.empty() ? "{}" : R"({"cursor":")" + cursor + "\"}";
      sluice.write_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(++id) +
                        R"(,"method":"tools/list","params":)" + params + "}");
      // Notifications (a server's list changing as it starts) may come first.
      const std::string mine = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + ",";
      std::string answer = sluice.read_line();
      while (answer.compare(0, mine.size(), mine) != 0) answer = sluice.read_line();
      if (answer.compare(mine.size(), 9, R"("result":)") != 0) {
        throw sluice::bench::ProtocolError("the aggregate tools/list failed: " +
                                           answer.substr(0, 200));
      }
      cursor = next_cursor(answer);
      ++pages;
      bytes += answer.size();
    } while (!cursor.empty());
  };
  list_all();
  std::vector<double> own_ms, aggregate_ms;
  for (std::size_t round = 0; round < kRounds; ++round) {
    auto t0 = Clock::now();
    for (auto& fx : direct) {
      fx->write_line(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
      fx->read_line();
    }
    own_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    t0 = Clock::now();
    list_all();
    aggregate_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  const double own = percentile(own_ms, 0.5), aggregate = percentile(aggregate_ms, 0.5);
  fmt::print(
      "aggregate list: {} servers x {} tools in {} page(s) ({} KiB), p50 {:.2f} ms; the "
      "servers' own lists one after another {:.2f} ms: {:.2f}x (target <= 1): {}\n",
      kServers, kTools, pages, bytes / 1024, aggregate, own, aggregate / own,
      verdict(aggregate <= own));
  for (auto& fx : direct) fx->stop(false);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SLUICE FIXTURE [SERVERS] [TOOLS] [QUERIES] [START_MS]\n",
                 argv[0]);
    return 2;
  }
  const std::size_t servers = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 100;
  const std::size_t tools = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 100;
  const std::size_t queries = argc > 5 ? std::strtoul(argv[5], nullptr, 10) : 300;
  const std::size_t start_ms = argc > 6 ? std::strtoul(argv[6], nullptr, 10) : 100;
  char dir_template[] = "/tmp/sluice-catalog-scale-XXXXXX";
  if (!mkdtemp(dir_template)) return 1;
  Paths p{std::filesystem::absolute(argv[1]).string(), std::filesystem::absolute(argv[2]).string(),
          dir_template};
  int rc = 0;
  try {
    bench_index(p, servers, tools, start_ms);
    bench_search(p, servers, queries);
    bench_first_search(p, tools);
    bench_connected(p, servers, tools);
    bench_aggregate_list(p);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalog_scale: %s\n", e.what());
    rc = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(p.dir, ec);
  return rc;
}
