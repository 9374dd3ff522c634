#include "cli/serve.hpp"

#include "cli/audit_setup.hpp"
#include "cli/run_log.hpp"
#include "cli/run_registration.hpp"
#include "cli/secrets.hpp"
#include "cli/shutdown.hpp"
#include "config/discovery.hpp"
#include "config/trust_store.hpp"
#include "core/display.hpp"
#include "core/file_identity.hpp"
#include "core/log.hpp"
#include "gateway/gateway.hpp"
#include "process/child.hpp"
#include "transport/fd_stream.hpp"
#include "transport/http_server.hpp"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace sluice::cli {
namespace asio = boost::asio;
namespace bj = boost::json;

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
  const core::log::Output output{.file = options.log_file, .to_stderr = options.log_file.empty()};
  if (std::string why = core::log::configure(*level, output); !why.empty()) {
    print_err("sluice: cannot write the --log-file: " + why);
    return false;
  }
  return true;
}

std::shared_ptr<const config::GatewayConfig> load_config(
    const CommonOptions& options,
    const std::optional<config::GatewayConfig::ProjectTrust>& pinned) {
  config::DiscoveryOptions d;
  d.state_dir = state_dir_of(options);
  d.trust_project = options.trust_project;
  d.pinned_project = pinned;
  std::error_code ec;
  d.cwd = std::filesystem::current_path(ec);
  if (!options.project.empty()) d.project_dir = std::filesystem::absolute(options.project, ec);
  if (const char* home = std::getenv("HOME"); home && *home) d.home = home;
  for (const auto& c : options.configs)
    d.explicit_configs.push_back(std::filesystem::absolute(c, ec));
  d.search = !options.no_discover;
  d.self = core::executable_of(0);  // an entry that starts sluice itself is skipped
  std::vector<std::string> store_warnings;
  d.getenv = variable_lookup(store_warnings);  // the environment, then the secrets store
  d.user_config = config::user_config_file_of(process_environment());
  config::GatewayConfig config = config::discover(d);
  config.warnings.insert(config.warnings.end(), store_warnings.begin(), store_warnings.end());
  // Flags win over the files' "sluice" settings.
  config::GatewayPolicy& policy = config.policy;
  if (options.call_timeout_ms) {
    policy.call_timeout = std::chrono::milliseconds(*options.call_timeout_ms);
  }
  if (options.max_call_ms) policy.max_call = std::chrono::milliseconds(*options.max_call_ms);
  if (options.start_concurrency) policy.start_concurrency = *options.start_concurrency;
  return std::make_shared<const config::GatewayConfig>(std::move(config));
}

void announce_run_trust(const CommonOptions& options, const config::GatewayConfig& config,
                        bool serving) {
  if (!options.trust_project) return;
  using State = config::GatewayConfig::ProjectTrust::State;
  const auto& trust = config.project_trust;
  std::string line =
      trust && trust->state == State::trusted_for_run
          ? fmt::format(
                "--trust-project: {} is trusted as it is now (sha256 {}) for this run only; no "
                "approval is recorded (to record one: {})",
                trust->path, trust->sha256, config::approve_command(trust->path))
          : std::string("--trust-project: no project file was read; nothing is trusted");
  if (serving) {
    core::log::warn("{}", line);
  } else {
    print_err("sluice: " + line);
  }
}

namespace {

// A sluice started by a sluice (its owner token in the environment: every downstream gets
// one) refuses to serve: a gateway behind a gateway that reads the same configuration would
// start itself again without end. The token's value is not shown.
bool started_by_sluice() {
  if (std::getenv(std::string(process::kOwnerTokenVariable).c_str()) == nullptr) return false;
  print_err(
      "sluice: refusing to serve: this sluice was started by another sluice (its "
      "SLUICE_OWNER variable is set), and a gateway behind itself would start itself again; "
      "remove the entry that starts sluice from the .mcp.json the outer sluice reads");
  return true;
}

// gw_startup_stop: a configuration that cannot be served as asked stops here.
bool servable(const CommonOptions& options, const config::GatewayConfig& config) {
  if (options.passthrough && (!options.expose_all || config.servers.size() != 1)) {
    core::log::error(
        "--passthrough needs --expose all and exactly one configured server ({} "
        "configured)",
        config.servers.size());
    return false;
  }
  return true;
}

}  // namespace

std::filesystem::path state_dir_of(const CommonOptions& options) {
  if (!options.state_dir.empty()) return std::filesystem::absolute(options.state_dir);
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg == '/') {
    return std::filesystem::path(xdg) / "sluice";
  }
  const char* home = std::getenv("HOME");
  if (!home || *home != '/') return {};
  return std::filesystem::path(home) / ".local" / "state" / "sluice";
}

gateway::GatewayOptions gateway_options(const CommonOptions& options) {
  gateway::GatewayOptions o;
  o.limits = options.limits;
  o.expose_meta = options.expose_meta;
  o.expose_all = options.expose_all;
  o.passthrough = options.passthrough;
  o.tokens_dir = state_dir_of(options);
  if (!options.no_cache) o.state_dir = o.tokens_dir;
  return o;
}

namespace {

// A serving gateway's options: those of every command, and live configuration (the same
// discovery again, flags applied as at start; --trust-project trusts the first bytes only).
gateway::GatewayOptions serving_options(const CommonOptions& options,
                                        const config::GatewayConfig& first, RunRegistration& run) {
  gateway::GatewayOptions o = gateway_options(options);
  o.on_client_info = run.client_recorder();  // the clients `sluice status` shows
  o.rediscover = [options, pinned = first.project_trust] { return load_config(options, pinned); };
  return o;
}

}  // namespace

namespace {

// What both serving modes do first; false when sluice must not serve (exit 2). The heap: a
// large message is copied a few times on its way through (read, parsed, spliced, framed), and
// glibc gives each copy of more than 128 KiB fresh pages of its own (mmap, zeroed as they are
// first touched) and returns them when it is freed, so every 1 MiB message paid some 2,000
// page faults. The heap serves them instead and keeps up to 32 MiB it freed for the next
// one: memory sluice holds after large messages, never before.
bool prepare_to_serve(const CommonOptions& options) {
  if (started_by_sluice()) return false;
  if (!setup_logging(options)) return false;
  ::signal(SIGPIPE, SIG_IGN);
  constexpr int kHeapBytes = 32 << 20;  // glibc's own ceiling for the mmap threshold
  ::mallopt(M_MMAP_THRESHOLD, kHeapBytes);
  ::mallopt(M_TRIM_THRESHOLD, kHeapBytes);
  return true;
}

}  // namespace

int serve_stdio(const CommonOptions& options) {
  if (!prepare_to_serve(options)) return 2;
  process::become_subreaper();

  // The protocol owns the real stdout; anything else that writes to fd 1 goes nowhere.
  int proto_in = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  int proto_out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC); devnull >= 0) {
    ::dup2(devnull, 1);
    ::close(devnull);
  }

  auto config = load_config(options);
  if (!servable(options, *config)) return 2;
  open_run_log(options, Service::stdio);  // after the startup checks: they went to stderr
  announce_run_trust(options, *config, true);
  // One thread runs the loop and the only I/O objects are its own (other threads only post).
  asio::io_context io{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  RunRegistration run;  // the registry entry and status socket of `sluice status`
  gateway::Gateway gw(io, config,
                      with_audit_log(serving_options(options, *config, run), options, *config));

  mcp::SessionOptions session_options;
  session_options.label = "stdio";
  session_options.strictness = rpc::Strictness::client;
  session_options.limits = &gw.limits();
  auto session = mcp::Session::create(io, session_options);
  auto handler = gw.make_client_handler(session);
  auto stream = transport::FdStream::create(io, proto_in, proto_out, gw.limits());
  session->attach(stream.get(), handler.get());

  // Invariant C7: the client's in-flight calls are cancelled, then the drain and teardown.
  OrderlyShutdown shutdown(
      io, gw, gw.policy().drain_bound, [&] { session->on_closed(); },
      [&] {
        stream->close();
        session->detach();
        run.close();
      });
  stream->start(session, [&] { shutdown.stop("the client closed the connection"); });
  gw.start();
  run.publish(io, gw, RunRegistration::Where{state_dir_of(options), "stdio", "", 0, false});
  core::log::info("sluice {} serving {} server(s) over stdio", gw.options().version,
                  gw.fleet().servers().size());
  io.run();
  return 0;
}

namespace {

// The HTTP service's singleton lock: an flock on <state>/http.lock, held for the life of the
// process (the kernel releases it at exit, however the process ends). The directory and the
// file must be this user's own and not writable by others (no symlink is followed), so that
// nobody else can hold, redirect or truncate it. Returns the fd, or -1 after printing why
// (another holder: exit 3; anything else: exit 2).
int take_singleton_lock(const std::filesystem::path& dir, int& exit_code) {
  exit_code = 2;
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec)) ::chmod(dir.c_str(), 0700);
  struct stat dir_stat {};
  if (::lstat(dir.c_str(), &dir_stat) != 0 || !S_ISDIR(dir_stat.st_mode)) {
    print_err("sluice: the state directory " + dir.string() + " is not a directory");
    return -1;
  }
  if (dir_stat.st_uid != ::geteuid() || (dir_stat.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    print_err("sluice: the state directory " + dir.string() +
              " must belong to you and not be writable by others");
    return -1;
  }
  std::filesystem::path path = dir / "http.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  struct stat file_stat {};
  if (fd < 0 || ::fstat(fd, &file_stat) != 0 || !S_ISREG(file_stat.st_mode) ||
      file_stat.st_uid != ::geteuid()) {
    print_err("sluice: cannot use the lock file " + path.string() +
              " (it must be a regular file of yours)");
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string holder;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) holder += buf[i];
    std::string who;
    if (!holder.empty()) who = " (pid " + holder + ")";
    print_err("sluice: another sluice HTTP service is already running with the state directory " +
              dir.string() + who + "; stop it, or give this one its own --state-dir");
    ::close(fd);
    exit_code = 3;
    return -1;
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t w = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  exit_code = 0;
  return fd;
}

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The front end's settings with the token from SLUICE_AUTH_TOKEN when no --auth-token was
// given; nullopt (after printing why) when a non-loopback address would have no token.
std::optional<transport::HttpOptions> listen_options(const HttpCliOptions& http) {
  transport::HttpOptions options = http.server;
  if (options.auth_token.empty()) {
    if (const char* env = std::getenv("SLUICE_AUTH_TOKEN")) options.auth_token = env;
  }
  if (!is_loopback(options.host) && options.auth_token.empty()) {
    print_err(
        "sluice: listening on a non-loopback address needs a bearer token "
        "(SLUICE_AUTH_TOKEN or --auth-token)");
    return std::nullopt;
  }
  return options;
}

// The singleton lock of --state-dir (or the default one): its fd, or -1 with the exit code.
int lock_state_dir(const CommonOptions& options, int& exit_code) {
  std::filesystem::path state = state_dir_of(options);
  if (state.empty()) {
    print_err("sluice: no state directory: set HOME or XDG_STATE_HOME, or give --state-dir");
    exit_code = 2;
    return -1;
  }
  return take_singleton_lock(state, exit_code);
}

// What the front end asks of the gateway: a handler per session, /health and /metrics.
transport::HttpHooks gateway_hooks(gateway::Gateway& gw,
                                   const std::shared_ptr<transport::HttpServer>& server) {
  transport::HttpHooks hooks;
  hooks.make_handler = [&gw](std::shared_ptr<mcp::Session> session) {
    return gw.make_client_handler(std::move(session));
  };
  hooks.health = [&gw, &server](bool detailed) {
    bj::object out;
    out["status"] = "ok";
    out["version"] = gw.options().version;
    out["sessions"] = server ? server->session_count() : 0;
    if (detailed) {
      // The same report as gateway.health: servers, tools, admission, audit.
      for (auto& [key, value] : gw.health()) out[key] = std::move(value);
    }
    return bj::serialize(out);
  };
  hooks.metrics = [&gw] { return gw.metrics(); };
  hooks.param_headers = [&gw](std::string_view tool) { return gw.param_headers(tool); };
  return hooks;
}

// The bound port, written to a temporary file renamed over `file` (readers never see half).
void write_port_file(const std::string& file, std::uint16_t port) {
  std::filesystem::path target = std::filesystem::absolute(file);
  std::filesystem::path tmp = target;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << port << "\n";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
}

}  // namespace

int serve_http(const CommonOptions& options, const HttpCliOptions& http) {
  if (!prepare_to_serve(options)) return 2;
  std::optional<transport::HttpOptions> listen = listen_options(http);
  if (!listen) return 2;
  int exit_code = 0;
  int lock_fd = lock_state_dir(options, exit_code);
  if (lock_fd < 0) return exit_code;

  process::become_subreaper();
  auto config = load_config(options);
  if (!servable(options, *config)) return 2;
  open_run_log(options, Service::http);  // after the lock and the startup checks
  announce_run_trust(options, *config, true);
  // One thread runs the loop and the only I/O objects are its own (other threads only post).
  asio::io_context io{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  RunRegistration run;  // the registry entry and status socket of `sluice status`
  gateway::Gateway gw(io, config,
                      with_audit_log(serving_options(options, *config, run), options, *config));
  std::shared_ptr<transport::HttpServer> server;
  server = transport::HttpServer::create(io, *listen, gateway_hooks(gw, server), gw.limits());
  auto port = server->listen();
  if (!port) {
    print_err("sluice: " + port.error().message);
    return 2;
  }

  // Invariant C7 for every session: the listener closes and every session's calls are
  // cancelled.
  OrderlyShutdown shutdown(
      io, gw, gw.policy().drain_bound, [&] { server->stop(); },
      [&] {
        server->release_retired();
        run.close();
      });
  server->start();
  gw.start();
  run.publish(io, gw,
              RunRegistration::Where{state_dir_of(options), "http", listen->host, *port,
                                     !listen->auth_token.empty()});
  const std::string& host = listen->host;
  core::log::info("sluice {} serving {} server(s) on http://{}:{}/mcp", gw.options().version,
                  gw.fleet().servers().size(),
                  host.find(':') != std::string::npos ? "[" + host + "]" : host, *port);
  // Last: a reader of the port file may signal at once, so the shutdown signals are
  // handled and the listening line is logged before it appears.
  if (!http.port_file.empty()) write_port_file(http.port_file, *port);
  io.run();
  ::close(lock_fd);
  return 0;
}

}  // namespace sluice::cli
