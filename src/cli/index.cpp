// `sluice index [SERVER...]`: a gateway in this process lists servers into the catalog cache.
#include "cli/serve.hpp"
#include "cli/shutdown.hpp"
#include "config/trust_store.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"
#include "process/child.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>

namespace sluice::cli {
namespace asio = boost::asio;
namespace bj = boost::json;

namespace {

using Millis = std::chrono::milliseconds;

// The servers `names` selects (every enabled one when empty); false after printing why not.
bool select_servers(const gateway::Fleet& fleet, const std::vector<std::string>& names,
                    std::vector<gateway::Downstream*>& targets, bj::array& skipped) {
  for (const auto& name : names) {
    gateway::Downstream* d = fleet.find(name);
    if (!d) {
      print_err("sluice index: " + fleet.unknown_server(name));
      return false;
    }
  }
  for (const auto& d : fleet.servers()) {
    if (!names.empty() && std::find(names.begin(), names.end(), d->name()) == names.end()) {
      continue;
    }
    if (d->phase() == gateway::Phase::disabled || d->phase() == gateway::Phase::untrusted) {
      bj::object row{{"server", d->name()},
                     {"status", "skipped"},
                     {"reason", std::string(gateway::to_string(d->phase()))}};
      if (d->phase() == gateway::Phase::untrusted) {
        row["next_step"] = config::approve_command(d->config().source_file);
      }
      skipped.push_back(std::move(row));
      continue;
    }
    targets.push_back(d.get());
  }
  return true;
}

bj::object server_row(const gateway::Downstream& d, bool listed, Millis took) {
  bj::object row{{"server", d.name()},
                 {"status", listed ? "indexed" : "failed"},
                 {"ms", took.count()}};
  if (listed) {
    row["tools"] = d.tools().size();
    row["prompts"] = d.prompts().size();
    row["resources"] = d.resources().size();
    row["resource_templates"] = d.resource_templates().size();
  } else {
    row["error"] = d.last_error();
  }
  return row;
}

// One line per server as it ends: the progress display.
void print_progress(const bj::object& row, std::size_t done, std::size_t total, bool terminal) {
  std::string prefix = terminal ? fmt::format("[{}/{}] ", done, total) : "";
  std::string_view name = row.at("server").as_string();
  if (row.at("status") == "indexed") {
    print_out(fmt::format("{}{}: {} tools in {:.1f} s", prefix, name,
                          row.at("tools").to_number<std::uint64_t>(),
                          static_cast<double>(row.at("ms").as_int64()) / 1000.0));
  } else {
    print_out(fmt::format("{}{}: failed: {}", prefix, name,
                          std::string_view(row.at("error").as_string())));
  }
}

struct Summary {
  bj::array rows;
  std::size_t indexed = 0, failed = 0, tools = 0;
  Millis elapsed{0};
};

void print_summary(const Summary& s, const bj::array& skipped, const gateway::Gateway& gw,
                   bool json_output) {
  const store::StoreStatus cache = gw.cache()->status();
  if (json_output) {
    bj::array rows = s.rows;
    for (const auto& r : skipped) rows.push_back(r);
    bj::object out{{"servers", std::move(rows)},
                   {"indexed", s.indexed},
                   {"failed", s.failed},
                   {"skipped", skipped.size()},
                   {"tools", s.tools},
                   {"elapsed_ms", s.elapsed.count()},
                   {"concurrency", gw.policy().index_concurrency},
                   {"cache", bj::object{{"path", cache.path},
                                        {"available", cache.available},
                                        {"problem", cache.problem.empty()
                                                        ? bj::value(nullptr)
                                                        : bj::value(cache.problem)}}}};
    std::string line = bj::serialize(out) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    return;
  }
  for (const auto& r : skipped) {
    std::string line = fmt::format("{}: skipped ({})", std::string_view(r.at("server").as_string()),
                                   std::string_view(r.at("reason").as_string()));
    if (const auto* next = r.as_object().if_contains("next_step")) {
      line += fmt::format(": review its file, then run: {}", std::string_view(next->as_string()));
    }
    print_out(line);
  }
  print_out(fmt::format("indexed {} of {} server(s), {} tools, in {:.1f} s; cache {}", s.indexed,
                        s.indexed + s.failed, s.tools,
                        static_cast<double>(s.elapsed.count()) / 1000.0, cache.path));
  if (!cache.available || !cache.problem.empty()) {
    print_err("sluice index: the catalog cache: " +
              (cache.problem.empty() ? std::string("unavailable") : cache.problem));
  }
}

}  // namespace

int index_servers(const CommonOptions& options, const std::vector<std::string>& servers,
                  bool json_output) {
  if (!setup_logging(options)) return 2;
  gateway::GatewayOptions gw_options = gateway_options(options);
  if (gw_options.state_dir.empty()) {
    print_err(options.no_cache ? "sluice index: --no-cache leaves nothing to index into"
                               : "sluice index: no state directory: set HOME or XDG_STATE_HOME, "
                                 "or give --state-dir");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  process::become_subreaper();
  auto config = load_config(options);
  for (const auto& w : config->warnings) print_err("warning: " + w);
  announce_run_trust(options, *config, false);
  asio::io_context io;
  gateway::Gateway gw(io, config, gw_options);
  std::vector<gateway::Downstream*> targets;
  bj::array skipped;
  if (!select_servers(gw.fleet(), servers, targets, skipped)) return 2;
  // P9, as for `call`: a signal tears the servers being indexed down, then exit 128+n.
  OrderlyShutdown shutdown(io, gw, Millis(0), [] {}, [] {});
  const bool terminal = !json_output && ::isatty(1) == 1;
  Summary summary;
  const std::size_t total = targets.size();
  core::spawn(
      io,
      [&]() -> asio::awaitable<void> {
        const auto began = core::Clock::now();
        co_await gw.indexer().index(
            targets, gw.policy().index_concurrency, std::chrono::hours(24),
            [&](const gateway::Downstream& d, bool listed, core::Clock::duration took) {
              bj::object row = server_row(d, listed, std::chrono::duration_cast<Millis>(took));
              listed ? ++summary.indexed : ++summary.failed;
              if (listed) summary.tools += d.tools().size();
              if (!json_output) print_progress(row, summary.indexed + summary.failed, total,
                                               terminal);
              summary.rows.push_back(std::move(row));
            });
        co_await gw.flush_cache();
        summary.elapsed = std::chrono::duration_cast<Millis>(core::Clock::now() - began);
        shutdown.stop("the indexing ended");
      },
      "sluice index", [&] { shutdown.stop("the indexing failed"); });
  io.run();
  if (shutdown.signal_number() != 0) return 128 + shutdown.signal_number();
  print_summary(summary, skipped, gw, json_output);
  const bool stored = gw.cache()->status().available;
  return summary.failed == 0 && stored ? 0 : 1;
}

}  // namespace sluice::cli
