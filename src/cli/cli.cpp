#include "cli/cli.hpp"

#include "core/version.hpp"

#include "cli/audit_setup.hpp"
#include "cli/demo_server.hpp"
#include "cli/doctor.hpp"
#include "cli/help.hpp"
#include "cli/import.hpp"
#include "cli/init.hpp"
#include "cli/logs.hpp"
#include "cli/run_log.hpp"
#include "cli/secrets.hpp"
#include "cli/serve.hpp"
#include "cli/setup.hpp"
#include "cli/status.hpp"
#include "cli/trust.hpp"
#include "cli/usage.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sluice::cli {
namespace {

// A duration option given in milliseconds.
void add_millis(CLI::App& app, const std::string& name, std::chrono::milliseconds& target,
                const std::string& help) {
  app.add_option_function<std::int64_t>(
         name, [&target](std::int64_t ms) { target = std::chrono::milliseconds(ms); }, help)
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3600000}))
      ->default_str(std::to_string(target.count()));
}

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--config", o.configs, "Also read this .mcp.json file (after discovery)")
      ->type_name("FILE")
      ->allow_extra_args(false);  // one file per --config (repeatable): positionals may follow
  app.add_option("--project", o.project,
                 "Project directory (default: walk up from the working directory to the first "
                 "folder holding .mcp.json or .git)")
      ->type_name("DIR");
  app.add_flag("--no-discover", o.no_discover,
               "Read only --config files: no project, ~/.mcp.json or ~/.claude/.mcp.json");
  app.add_option("--state-dir", o.state_dir,
                 "State directory: the catalog cache, and the HTTP service's singleton lock "
                 "(default $XDG_STATE_HOME/sluice or ~/.local/state/sluice)")
      ->type_name("DIR");
  app.add_flag("--no-cache", o.no_cache,
               "Neither read nor write the catalog cache: servers' tools are known only once "
               "they have listed them in this run");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.add_option("--log-file", o.log_file,
                 "Append logs to this file instead of stderr (a gateway: instead of its file "
                 "in the state directory's logs folder)")
      ->type_name("FILE");
  app.add_option("--max-message-bytes", o.limits.max_message_bytes,
                 "Largest JSON-RPC message accepted")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  add_millis(app, "--initialize-timeout-ms", o.limits.initialize_timeout,
             "How long a downstream may take to answer initialize");
  add_millis(app, "--restart-backoff-ms", o.limits.restart_backoff_initial,
             "First delay before restarting a downstream that exited (doubles each time)");
  app.add_option("--call-timeout-ms", o.call_timeout_ms,
                 "Default call timeout, restarted by each progress notification (else "
                 "sluice.callTimeoutMs, 60000; a server's timeoutMs wins)")
      ->check(CLI::Range(std::int64_t{1000}, std::int64_t{86400000}));
  app.add_option("--max-call-ms", o.max_call_ms,
                 "Ceiling of any call, progress or not (else sluice.maxCallMs, 600000)")
      ->check(CLI::Range(std::int64_t{1000}, std::int64_t{86400000}));
  app.add_option("--start-concurrency", o.start_concurrency,
                 "Servers started at once (else sluice.startConcurrency, 8)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  app.add_option("--max-auto-restarts", o.limits.max_auto_restarts,
                 "Restarts in a row before a downstream that keeps exiting is left failed")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000}))
      ->capture_default_str();
}

std::string self_path(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) return std::string(buf, static_cast<std::size_t>(n));
  return argv0;
}

// Everything the command line sets. The parser holds references into it, so it stays where it
// was made while the parser lives.
struct CommandLine {
  CommonOptions common;  // no command (serve over stdio)
  std::string expose = "meta";
  bool passthrough = false;

  CommonOptions serve_opts;
  std::string transport = "stdio";
  HttpCliOptions http;

  CommonOptions call_opts;
  std::string tool_id, args = "{}";
  bool call_json = false;
  int timeout_ms = 0;

  CommonOptions servers_opts;
  bool servers_json = false, probe = false;

  CommonOptions index_opts;
  std::vector<std::string> index_servers;
  bool index_json = false;

  CLI::App* serve = nullptr;
  CLI::App* call = nullptr;
  CLI::App* servers = nullptr;
  CLI::App* index = nullptr;
  CommonOptions auth_opts;
  std::string auth_server;
  CLI::App* auth = nullptr;
  CLI::App* auth_login = nullptr;
  CLI::App* demo = nullptr;
  CLI::App* demo_server = nullptr;
  SecretsLine secrets;
  TrustLine trust;
  StatusLine status;
  DoctorLine doctor;
  InitLine init;
  LogsLine logs;
  SetupLine setup;
  ImportLine import;
};

// How many items one page of a list sluice answers holds (serving only).
void add_list_page_size(CLI::App& app, core::Limits& limits) {
  app.add_option("--list-page-size", limits.list_page_size,
                 "Items in one page of tools/list, prompts/list and resources/list (then "
                 "nextCursor)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
}

// The options of sluice without a command, which serves over stdio.
void add_gateway_options(CLI::App& app, CommandLine& cl) {
  add_common(app, cl.common);
  add_audit_option(app, cl.common);
  add_trust_project_flag(app, cl.common);
  add_run_log_options(app, cl.common);
  add_list_page_size(app, cl.common.limits);
  app.add_option("--expose", cl.expose,
                 "What the client sees: meta (the gateway.* meta-tools), all (every downstream "
                 "tool as server__tool), or meta,all")
      ->check(one_of({"meta", "all", "meta,all", "all,meta"}))
      ->capture_default_str();

  app.add_flag("--passthrough", cl.passthrough,
               "With --expose all and exactly one server: show its names without a prefix");
}

// `serve`'s options that only the HTTP front end takes (their help starts with "HTTP:").
void add_http_options(CLI::App& serve, HttpCliOptions& http, core::Limits& limits) {
  serve.add_option("--host", http.server.host, "HTTP: the address to listen on")
      ->capture_default_str();
  serve.add_option("--port", http.server.port, "HTTP: the port (0: any free one)")
      ->check(CLI::Range(0, 65535))
      ->type_name("INT")
      ->capture_default_str();
  serve
      .add_option("--port-file", http.port_file,
                  "HTTP: write the bound port to this file once listening")
      ->type_name("FILE");
  serve
      .add_option("--auth-token", http.server.auth_token,
                  "HTTP: require this bearer token (prefer the SLUICE_AUTH_TOKEN variable: "
                  "a command line is visible to other users)")
      ->type_name("TOKEN");
  serve
      .add_option("--allow-host", http.server.allowed_hosts,
                  "HTTP: also accept this host name in Host and Origin (repeatable)")
      ->type_name("NAME");
  serve
      .add_option("--allow-origin", http.server.allowed_origins,
                  "HTTP: also accept this exact Origin, scheme://host[:port] (repeatable)")
      ->type_name("ORIGIN");
  serve.add_option("--max-sessions", limits.http_max_sessions, "HTTP: open sessions at most")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  serve
      .add_option("--session-idle-ms", limits.http_session_idle,
                  "HTTP: a session idle this long is ended")
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{7} * 24 * 3600 * 1000))
      ->default_str(std::to_string(limits.http_session_idle.count()));
  serve
      .add_option("--rate-limit", limits.http_rate_limit,
                  "HTTP: requests per second per client address, bursts of twice that (0: off); "
                  "loopback clients only with --rate-limit-loopback")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  serve.add_flag("--rate-limit-loopback", limits.http_rate_limit_loopback,
                 "HTTP: apply --rate-limit to loopback clients too (they share one address)");
  serve
      .add_option("--http-header-timeout-ms", limits.http_header_timeout,
                  "HTTP: time a connection has to send a request's headers")
      ->check(CLI::Range(std::int64_t{50}, std::int64_t{600000}))
      ->default_str(std::to_string(limits.http_header_timeout.count()));
  serve
      .add_option("--http-body-timeout-ms", limits.http_body_timeout,
                  "HTTP: time a request has to send its body")
      ->check(CLI::Range(std::int64_t{50}, std::int64_t{600000}))
      ->default_str(std::to_string(limits.http_body_timeout.count()));
  serve
      .add_option("--http-max-connections", limits.http_max_connections,
                  "HTTP: open connections at most (one more is answered 503)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  serve
      .add_option("--http-max-incomplete-per-address", limits.http_max_incomplete_per_address,
                  "HTTP: connections from one client address without a complete request yet "
                  "(new, sending, or kept alive between requests) at most")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
}

void add_serve(CLI::App& app, CommandLine& cl) {
  cl.serve = app.add_subcommand("serve", "Serve MCP over stdio (the default)");
  CLI::App& serve = *cl.serve;
  add_common(serve, cl.serve_opts);
  add_audit_option(serve, cl.serve_opts);
  add_trust_project_flag(serve, cl.serve_opts);
  add_run_log_options(serve, cl.serve_opts);
  add_list_page_size(serve, cl.serve_opts.limits);
  serve.add_option("--expose", cl.expose, "What the client sees: meta, all, or meta,all")
      ->check(one_of({"meta", "all", "meta,all", "all,meta"}));
  serve.add_flag("--passthrough", cl.passthrough,
                 "With --expose all and exactly one server: show its names without a prefix");
  serve
      .add_option("--transport", cl.transport, "stdio, or http (Streamable HTTP on --host:--port)")
      ->check(one_of({"stdio", "http"}))
      ->capture_default_str();
  add_http_options(serve, cl.http, cl.serve_opts.limits);
  set_examples(serve,
               {{"sluice serve", "MCP over stdio, as a client starts it (the same as `sluice`)"},
                {"sluice serve --expose all", "Every downstream tool listed as server__tool"},
                {"SLUICE_AUTH_TOKEN=$(cat token) sluice serve --transport http",
                 "Streamable HTTP on 127.0.0.1:3344/mcp, for clients that send the token"},
                {"sluice serve --transport http --port 0 --port-file port",
                 "Any free port, written to the file `port` once listening"}});
}

// The one-shot commands log warnings only unless --log-level says otherwise: their output
// is the answer, not the gateway's progress.
void add_one_shot_commands(CLI::App& app, CommandLine& cl) {
  cl.call_opts.log_level = "warn";
  cl.call = app.add_subcommand("call", "Call one tool through the gateway and print its result");
  CLI::App& call = *cl.call;
  add_common(call, cl.call_opts);
  add_audit_option(call, cl.call_opts);
  add_trust_project_flag(call, cl.call_opts);
  call.add_option("tool_id", cl.tool_id, "The tool to call")->required()->type_name("SERVER::TOOL");
  call.add_option("--args", cl.args, "Arguments as a JSON object")->capture_default_str();
  call.add_flag("--json", cl.call_json, "Print the raw MCP result (byte-exact JSON)");
  call.add_option("--timeout-ms", cl.timeout_ms,
                  "Call timeout (default: the server's timeoutMs, else the default call "
                  "timeout)")
      ->check(CLI::Range(1000, 86400000));
  set_examples(call, {{"sluice call github::search_issues --args '{\"query\": \"crash\"}'",
                       "Start the server, call the tool, print its text (exit 1 if isError)"},
                      {"sluice call fs::read_file --args '{\"path\": \"a.txt\"}' --json",
                       "Print the raw MCP result, byte-exact"}});

  cl.servers_opts.log_level = "warn";
  cl.servers = app.add_subcommand("servers", "List configured servers, their source and status");
  add_common(*cl.servers, cl.servers_opts);
  add_trust_project_flag(*cl.servers, cl.servers_opts);
  cl.servers->add_flag("--json", cl.servers_json, "Print JSON");
  cl.servers->add_flag("--probe", cl.probe, "Start each server, list its tools, report, stop it");
  set_examples(*cl.servers,
               {{"sluice servers", "Each server, the file it comes from, whether it may run"},
                {"sluice servers --probe", "Start each one, count its tools, stop it"},
                {"sluice servers --json", "The same as JSON"}});

  cl.index_opts.log_level = "warn";
  cl.index = app.add_subcommand(
      "index", "List servers' tools into the catalog cache (every enabled server by default)");
  add_common(*cl.index, cl.index_opts);
  add_trust_project_flag(*cl.index, cl.index_opts);
  cl.index->add_option("servers", cl.index_servers, "Only these servers")->type_name("SERVER");
  cl.index->add_flag("--json", cl.index_json, "Print a JSON summary");
  set_examples(*cl.index, {{"sluice index", "List every enabled server's tools into the cache"},
                           {"sluice index github fs --json", "Only these two; a JSON summary"}});

  cl.auth_opts.log_level = "warn";
  cl.auth = app.add_subcommand("auth", "OAuth for protected remote servers");
  cl.auth->require_subcommand(1);
  cl.auth_login = cl.auth->add_subcommand(
      "login", "Authorize sluice for a remote server in a browser and store its tokens");
  add_common(*cl.auth_login, cl.auth_opts);
  cl.auth_login->add_option("server", cl.auth_server, "The remote server")
      ->type_name("SERVER")
      ->required();
  set_examples(*cl.auth_login,
               {{"sluice auth login tracker",
                 "Open the browser to authorize the remote server `tracker`; its tokens are "
                 "stored in the state directory"}});
  set_examples(*cl.auth, {{"sluice auth login tracker", "Authorize a protected remote server"}});
}

void add_demo_commands(CLI::App& app, CommandLine& cl) {
  cl.demo = app.add_subcommand("demo", "A guided tour: a real MCP client drives sluice");
  cl.demo_server = app.add_subcommand("demo-server", "The built-in demo downstream (stdio)");
  cl.demo_server->group("");  // internal: started by `sluice demo`
  set_examples(*cl.demo, {{"sluice demo", "Needs no configuration and changes nothing"}});
}

// Parses the command line; the exit code when it ends here (--help, --version, a usage
// error), nullopt when a command is to run.
std::optional<int> parse_command_line(CLI::App& app, const CommandLine& cl, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return usage_error(parse_problem(app, e));
  }
  if (UsageProblem unclaimed = unclaimed_argument(app); !unclaimed.problem.empty()) {
    return usage_error(unclaimed);
  }
  // The options whose help starts with "HTTP:" mean nothing to the stdio front end.
  if (*cl.serve && cl.transport != "http") {
    for (const CLI::Option* option : cl.serve->get_options()) {
      if (option->count() > 0 && option->get_description().starts_with("HTTP:")) {
        return usage_error({option->get_name() + " applies only with --transport http", cl.serve});
      }
    }
  }
  return std::nullopt;
}

// A serving command's options, taken out of the command line's CLI11 tree: a gateway serves
// for as long as its client stays, and the tree (several thousand small allocations, about
// 0.2 MiB of resident heap) is not kept alive for that.
struct ServePlan {
  CommonOptions options;
  std::optional<HttpCliOptions> http;
};

// Runs the command the line names, except serving, which it returns as a plan (serving over
// stdio when the line names no command).
std::variant<int, ServePlan> dispatch(CommandLine& cl, const char* argv0) {
  if (*cl.call) return call_tool(cl.call_opts, cl.tool_id, cl.args, cl.call_json, cl.timeout_ms);
  if (*cl.servers) return list_servers(cl.servers_opts, cl.servers_json, cl.probe);
  if (*cl.index) return index_servers(cl.index_opts, cl.index_servers, cl.index_json);
  if (*cl.auth_login) return auth_login(cl.auth_opts, cl.auth_server);
  if (std::optional<int> done = run_secrets_command(cl.secrets)) return *done;
  if (std::optional<int> done = run_trust_command(cl.trust)) return *done;
  if (std::optional<int> done = run_status_command(cl.status)) return *done;
  if (std::optional<int> done = run_doctor_command(cl.doctor)) return *done;
  if (std::optional<int> done = run_init_command(cl.init)) return *done;
  if (std::optional<int> done = run_logs_command(cl.logs)) return *done;
  if (std::optional<int> done = run_setup_command(cl.setup)) return *done;
  if (std::optional<int> done = run_import_command(cl.import)) return *done;
  if (*cl.demo) return run_demo(self_path(argv0));
  if (*cl.demo_server) return run_demo_server();
  ServePlan plan{*cl.serve ? std::move(cl.serve_opts) : std::move(cl.common), std::nullopt};
  plan.options.expose_meta = cl.expose.find("meta") != std::string::npos;
  plan.options.expose_all = cl.expose.find("all") != std::string::npos;
  plan.options.passthrough = cl.passthrough;
  if (*cl.serve && cl.transport == "http") plan.http = std::move(cl.http);
  return plan;
}

// Builds the command line's tree, parses it and runs what it names (dispatch).
std::variant<int, ServePlan> parse_and_dispatch(int argc, char** argv) {
  CLI::App app{"sluice: one MCP server in front of many (stdio by default)", "sluice"};
  app.formatter(std::make_shared<HelpFormatter>());  // before any command: they copy it
  app.set_version_flag("--version", std::string("sluice ") + core::kVersion);
  app.require_subcommand(0, 1);
  // Arguments nobody takes are kept, not turned into an error text that repeats them: the
  // usage error names them only when they are plain names (usage.hpp). Commands inherit this.
  app.allow_extras();

  CommandLine cl;
  add_gateway_options(app, cl);
  add_serve(app, cl);
  add_one_shot_commands(app, cl);
  add_demo_commands(app, cl);
  add_secrets_command(app, cl.secrets);
  add_trust_command(app, cl.trust);
  add_status_command(app, cl.status);
  add_doctor_command(app, cl.doctor);
  add_common(*cl.doctor.command, cl.doctor.options);
  add_init_command(app, cl.init);
  add_logs_command(app, cl.logs);
  add_setup_command(app, cl.setup);
  add_import_command(app, cl.import);
  // Last: a command made after this would copy the top level's examples.
  set_examples(app, {{"sluice", "Serve MCP over stdio: what a client runs"},
                     {"sluice init", "Write a starter user config"},
                     {"sluice servers", "What is configured, and from where"},
                     {"sluice call fs::read_file --args '{\"path\": \"a.txt\"}'",
                      "Call one tool from the shell"},
                     {"sluice serve --transport http", "Serve Streamable HTTP on 127.0.0.1:3344"},
                     {"sluice COMMAND --help", "A command's options and examples"}});
  if (std::optional<int> done = parse_command_line(app, cl, argc, argv)) return *done;
  return dispatch(cl, argv[0]);
}

}  // namespace

int run(int argc, char** argv) {
  std::variant<int, ServePlan> next = parse_and_dispatch(argc, argv);
  if (const int* code = std::get_if<int>(&next)) return *code;
  const ServePlan& plan = std::get<ServePlan>(next);
  return plan.http ? serve_http(plan.options, *plan.http) : serve_stdio(plan.options);
}

}  // namespace sluice::cli
