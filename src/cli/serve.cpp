#include "cli/serve.hpp"

#include "config/discovery.hpp"
#include "core/display.hpp"
#include "core/log.hpp"
#include "gateway/gateway.hpp"
#include "process/child.hpp"
#include "transport/fd_stream.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace sluice::cli {
namespace asio = boost::asio;

void print_out(std::string_view text) {
  std::string line = core::display_safe(text, {.keep_newlines = true});
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
}

void print_err(std::string_view text) {
  std::string line = core::display_safe(text, {.keep_newlines = true});
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

bool setup_logging(const CommonOptions& options) {
  auto level = core::log::parse_level(options.log_level);
  if (!level) {
    print_err("sluice: --log-level must be one of trace, debug, info, warn, error, off");
    return false;
  }
  core::log::configure(*level, options.log_file);
  return true;
}

std::shared_ptr<const config::GatewayConfig> load_config(const CommonOptions& options) {
  config::DiscoveryOptions d;
  std::error_code ec;
  d.cwd = std::filesystem::current_path(ec);
  if (!options.project.empty()) d.project_dir = std::filesystem::absolute(options.project, ec);
  if (const char* home = std::getenv("HOME"); home && *home) d.home = home;
  for (const auto& c : options.configs) d.explicit_configs.push_back(std::filesystem::absolute(c, ec));
  d.search = !options.no_discover;
  d.getenv = [](std::string_view name) -> std::optional<std::string> {
    if (const char* v = std::getenv(std::string(name).c_str())) return std::string(v);
    return std::nullopt;
  };
  return std::make_shared<const config::GatewayConfig>(config::discover(d));
}

namespace {

// Shutdown signals: SIGTERM, SIGINT, SIGHUP, except one inherited as ignored (nohup).
void add_shutdown_signals(asio::signal_set& set) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    set.add(sig);
  }
}

// Reaps orphans that reparented to sluice (it is a subreaper) as they exit.
// Ends once `stopping` is set: a SIGCHLD already queued when the wait is cancelled would
// otherwise re-arm the wait and keep the loop (and the process) alive.
asio::awaitable<void> reap_orphans(asio::signal_set& sigchld, gateway::Gateway& gw,
                                   const bool& stopping) {
  while (!stopping) {
    boost::system::error_code ec;
    co_await sigchld.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || stopping) co_return;
    process::reap_adopted_orphans(gw.child_pids());
  }
}

}  // namespace

int serve_stdio(const CommonOptions& options) {
  if (!setup_logging(options)) return 2;
  ::signal(SIGPIPE, SIG_IGN);
  process::become_subreaper();

  // The protocol owns the real stdout; anything else that writes to fd 1 goes nowhere.
  int proto_in = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  int proto_out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC); devnull >= 0) {
    ::dup2(devnull, 1);
    ::close(devnull);
  }

  auto config = load_config(options);
  if (options.passthrough && (!options.expose_all || config->servers.size() != 1)) {
    // gw_startup_stop: a configuration that cannot be served as asked stops here.
    core::log::error("--passthrough needs --expose all and exactly one configured server ({} "
                     "configured)",
                     config->servers.size());
    return 2;
  }
  asio::io_context io;
  gateway::GatewayOptions gw_options;
  gw_options.limits = options.limits;
  gw_options.expose_meta = options.expose_meta;
  gw_options.expose_all = options.expose_all;
  gw_options.passthrough = options.passthrough;
  gateway::Gateway gw(io, config, gw_options);

  mcp::SessionOptions session_options;
  session_options.label = "client";
  session_options.strictness = rpc::Strictness::client;
  session_options.limits = &gw.limits();
  auto session = mcp::Session::create(io, session_options);
  auto handler = gw.make_client_handler(session);
  auto stream = transport::FdStream::create(io, proto_in, proto_out, gw.limits());
  session->attach(stream.get(), handler.get());

  asio::signal_set signals(io);
  add_shutdown_signals(signals);
  asio::signal_set sigchld(io, SIGCHLD);
  bool stopping = false;
  auto stop = [&](std::string_view why) {
    if (stopping) return;
    stopping = true;
    core::log::info("shutting down (restart path gw_shutdown): {}", why);
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          // C7: in-flight calls are cancelled (the cancel forwarded downstream); abandoned
          // work may finish within the drain bound; then every child is torn down (P4).
          session->on_closed();
          co_await gw.drain(gw.policy().drain_bound);
          co_await gw.shutdown();
          process::kill_adopted_orphans({});
          boost::system::error_code ec;
          signals.cancel(ec);
          signals.clear(ec);
          sigchld.cancel(ec);
          sigchld.clear(ec);
          stream->close();
          session->detach();
          core::log::info("shutdown complete");
        },
        asio::detached);
  };
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (!ec) stop(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
  });
  asio::co_spawn(io, reap_orphans(sigchld, gw, stopping), asio::detached);
  stream->start(session, [&] { stop("the client closed the connection"); });
  gw.start();
  core::log::info("sluice {} serving {} server(s) over stdio", gw.options().version,
                  gw.downstreams().size());
  io.run();
  return 0;
}

}  // namespace sluice::cli
