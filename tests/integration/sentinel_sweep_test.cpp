// The sentinel sweep: a unique string planted in every input sluice can reject or redact
// (tool arguments, names, ids, cursors, config values, HTTP headers, environment values,
// secrets, stored OAuth tokens, remote URLs, a downstream's stderr, error messages and
// credential-shaped results) never appears in any sink (responses and notifications on stdio
// and HTTP, log lines on stderr and in --log-file, gateway.health and its audit ring, /health,
// /metrics, the persistent audit log, the catalog cache file, and the output of `servers`,
// `index`, `call`, `auth`, `secrets` and `trust`). The real binary, real fixture servers (stdio
// and remote), one configuration and state directory shared by every command.
//
// The pairs where showing the input is correct are allowed explicitly, each with its reason
// (allow_correct_echoes); every other pair is checked, and a sink that produced nothing fails
// the test. The summary line gives the counts. Not swept: logs at --log-level debug, where a
// server's own stderr lines are logged on purpose, escaped (invariant P5).
#include "config/discovery.hpp"
#include "http_client.hpp"
#include "remote_fixture.hpp"
#include "sentinel_ledger.hpp"
#include "store/fingerprint.hpp"
#include "store/token_store.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <signal.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

const std::string kInit =
    R"({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":")";

std::string sentinel_sweep_read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string invoke(const std::string& tool_id, const std::string& args_json) {
  return R"({"name":"gateway.invoke","arguments":{"tool_id":")" + tool_id + R"(","arguments":)" +
         args_json + "}}";
}

// Arguments a schema rejects, the sentinel in a key and in a value of the wrong type.
std::string rejected_args(const std::string& s) {
  return R"({"text":[")" + s + R"("],")" + s + R"(":")" + s + R"("})";
}

// The client side of the HTTP front end: well-formed requests with the token, and what each
// response showed recorded as "http responses".
struct HttpSide {
  SentinelLedger& ledger;
  int port = 0;
  std::string token;
  std::string session;

  Headers good(const std::string& session_id) const {
    Headers h{{"Host", "127.0.0.1:" + std::to_string(port)},
              {"Content-Type", "application/json"},
              {"Accept", "application/json, text/event-stream"},
              {"Authorization", "Bearer " + token}};
    if (!session_id.empty()) h.emplace_back("Mcp-Session-Id", session_id);
    return h;
  }
  Headers good() const { return good(session); }
  HttpResponse exchange(const std::string& method, const std::string& target, const Headers& h,
                        const std::string& body = "") const {
    auto r = http_exchange(port, http_request(method, target, h, body));
    EXPECT_TRUE(r.has_value()) << method << " " << target;
    return r ? *r : HttpResponse{};
  }
  HttpResponse post(const std::string& body, const Headers& h) const {
    auto r = exchange("POST", "/mcp", h, body);
    ledger.record("http responses", r.all() + "\n");
    return r;
  }
  HttpResponse call(const std::string& id, const std::string& method,
                    const std::string& params) const {
    return post(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + R"(","params":)" +
                    params + "}",
                good());
  }
};

class SentinelSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    plant_inputs();
    // `rem` is online only when its bearer came from the secrets store, `remo` only when its
    // token came from the token file: both inputs reach their server.
    bearer_remote_ = std::make_unique<RemoteFixture>(
        dir_, marker_, std::vector<std::string>{"--require-bearer=" + s_["secret_value"]});
    oauth_remote_ = std::make_unique<RemoteFixture>(
        dir_, marker_, std::vector<std::string>{"--require-bearer=" + s_["oauth_access_token"]});
    write_configs();
    store_oauth_token();
    store_secret();
    declare_sinks();
    allow_correct_echoes();
  }

  void TearDown() override {
    if (bearer_remote_) bearer_remote_->stop();
    if (oauth_remote_) oauth_remote_->stop();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }

  // Every input kind and where the sweep plants it.
  static constexpr std::pair<const char*, const char*> kInputs[] = {
      {"tool_args_valid", "gateway.invoke of fx::echo, stdio and HTTP"},
      {"tool_args_rejected", "gateway.invoke arguments the tool's schema rejects (key, value)"},
      {"aggregate_args_rejected", "tools/call of fx__echo (--expose meta,all), rejected"},
      {"meta_args_rejected", "gateway.describe arguments its schema rejects"},
      {"tool_name_plain_unknown", "gateway.invoke of fx::<a plain name it does not have>"},
      {"tool_name_not_plain", "gateway.invoke of fx::<a name with a '!'>"},
      {"aggregate_name_unknown", "tools/call of fx__<a name with a '!'>"},
      {"cursor", "tools/list and prompts/list cursors sluice never issued"},
      {"search_query", "the query of gateway.catalog_search"},
      {"resource_uri", "resources/read and prompts/get of things no server has"},
      {"request_id", "a string request id"},
      {"method_name", "an unknown method"},
      {"client_info", "clientInfo.name of initialize, stdio and HTTP"},
      {"config_env_value", "a value in a stdio server's env"},
      {"config_header_value", "a value in a remote server's headers"},
      {"config_url_query", "the query of a remote server's url"},
      {"config_url_userinfo", "the userinfo of a remote server's url"},
      {"config_url_path", "the path of a remote server's url"},
      {"config_bad_entry_args", "an argument of an entry that leaves its file out"},
      {"config_bad_sluice_value", "an invalid value in a \"sluice\" block"},
      {"config_bad_server_name", "an invalid server name"},
      {"config_env_dangerous", "LD_PRELOAD in a server's env"},
      {"project_env_value", "a value in an untrusted project file's env"},
      {"project_header_value", "a value in an untrusted project file's headers"},
      {"env_value_referenced", "sluice's environment, named by ${SWEEP_ENV} in an env"},
      {"env_value_unreferenced", "sluice's environment, named nowhere"},
      {"secret_value", "`sluice secrets set` on stdin, ${SWEEP_SECRET} as rem's bearer"},
      {"oauth_access_token", "oauth-tokens.json: remo's access token (sent as its bearer)"},
      {"oauth_refresh_token", "oauth-tokens.json: remo's refresh token"},
      {"oauth_client_secret", "oauth-tokens.json: remo's client secret"},
      {"http_auth_token", "SLUICE_AUTH_TOKEN of the HTTP front end (sent by the client)"},
      {"http_bearer_wrong", "a wrong Authorization bearer"},
      {"http_session_id", "an unknown Mcp-Session-Id"},
      {"http_origin", "a foreign Origin"},
      {"http_host", "a foreign Host"},
      {"http_unknown_header", "the name and value of a header sluice does not know"},
      {"http_body_malformed", "a POST body that is not JSON"},
      {"http_path", "an unknown path"},
      {"http_last_event_id", "Last-Event-ID of a GET stream"},
      {"downstream_stderr", "the fixture's stderr lines (at start and each call)"},
      {"downstream_error_long", "a JSON-RPC error message over 512 bytes, and its data"},
      {"downstream_error_control", "a JSON-RPC error message with an ANSI escape, and its data"},
      {"cli_call_args_valid", "sluice call fx::echo --args"},
      {"cli_call_args_rejected", "sluice call --args its schema rejects"},
      {"cli_call_args_malformed", "sluice call --args that is not JSON"},
      {"cli_call_tool_not_plain", "sluice call fx::<a name with a '!'>"},
  };

  void plant_inputs() {
    for (const auto& [kind, where] : kInputs) s_[kind] = ledger_.plant(kind, where);
    // Shaped as a GitHub token, so that the built-in redaction must catch it in a result.
    const std::string token = "SENTINEL" + SentinelLedger::random_hex() + "credential12";
    s_["downstream_result_credential"] =
        ledger_.plant_as("downstream_result_credential",
                         "a GitHub token in a tool's text result (redacted)", "ghp_" + token);
  }

  // The user-level file every command reads, and three files sluice must leave out.
  void write_configs() {
    auto fixture = [&](const std::string& extra_env) {
      return R"({"command":")" + std::string(FIXTURE_SERVER) +
             R"(","args":["--mode=hostile-text"],"env":{"SLUICE_FIXTURE_MARKER":")" + marker_ +
             "\"" + extra_env + "}}";
    };
    const std::string hostile_env =
        R"(,"FIXTURE_STDERR_TEXT":")" + s_["downstream_stderr"] + R"(","FIXTURE_ERROR_TEXT":")" +
        s_["downstream_error_long"] + R"(","FIXTURE_CONTROL_TEXT":")" +
        s_["downstream_error_control"] + R"(","FIXTURE_RESULT_TEXT":")" +
        s_["downstream_result_credential"] + R"(","FX_SECRET":")" + s_["config_env_value"] +
        R"(","FX_FROM_ENV":"${SWEEP_ENV}")";
    const std::string port = std::to_string(bearer_remote_->port());
    good_ = dir_.write(
        "user.json",
        R"({"mcpServers":{"fx":)" + fixture(hostile_env) + R"(,"rem":{"type":"http","url":")" +
            bearer_remote_->url() + "?key=" + s_["config_url_query"] +
            R"(","headers":{"X-Api-Key":")" + s_["config_header_value"] +
            R"(","Authorization":"Bearer ${SWEEP_SECRET}"}},)"
            R"("remo":{"type":"http","url":")" +
            oauth_remote_->url() +
            R"("},)"
            R"("gone":{"type":"http","allowHttp":true,"url":"http://user:)" +
            s_["config_url_userinfo"] + "@127.0.0.1:" + port + "/" + s_["config_url_path"] +
            R"("},)"
            R"("ld":{"command":")" +
            FIXTURE_SERVER + R"(","env":{"SLUICE_FIXTURE_MARKER":")" + marker_ +
            R"(","LD_PRELOAD":"/tmp/)" + s_["config_env_dangerous"] + R"(.so"}}}})");
    // A project file (untrusted: never approved) with values of its own.
    fs::create_directories(project_);
    dir_.write("proj/.mcp.json",
               R"({"mcpServers":{"proj":{"command":")" + std::string(FIXTURE_SERVER) +
                   R"(","env":{"SLUICE_FIXTURE_MARKER":")" + marker_ + R"(","PROJ_SECRET":")" +
                   s_["project_env_value"] + R"("}},"projremote":{"type":"http","url":")" +
                   bearer_remote_->url() + R"(","headers":{"X-Proj":")" +
                   s_["project_header_value"] + R"("}}}})");
    bad_entry_ = dir_.write("bad-entry.json", R"({"mcpServers":{"bad":{"command":"x","args":[")" +
                                                  s_["config_bad_entry_args"] + R"(",5]}}})");
    bad_block_ = dir_.write("bad-block.json",
                            R"({"mcpServers":{"ok":{"command":"x"}},"sluice":{"callTimeoutMs":")" +
                                s_["config_bad_sluice_value"] + R"("}})");
    bad_name_ = dir_.write("bad-name.json", R"({"mcpServers":{")" + s_["config_bad_server_name"] +
                                                R"( !":{"command":"x"}}})");
  }

  // A token for `remo` in the state directory, as `sluice auth login` would have stored it:
  // sluice must send it (the fixture requires it) and show it nowhere.
  void store_oauth_token() {
    config::DiscoveryOptions o;
    o.search = false;
    o.explicit_configs = {good_};
    o.cwd = dir_.path();
    auto cfg = config::discover(o);
    const config::ServerConfig* remo = nullptr;
    for (const auto& s : cfg.servers) {
      if (s.name == "remo") remo = &s;
    }
    ASSERT_NE(remo, nullptr);
    store::TokenRecord r;
    r.server = "remo";
    r.fingerprint = store::fingerprint(*remo);
    r.issuer = "http://127.0.0.1:1";
    r.token_endpoint = "http://127.0.0.1:1/token";
    r.resource = oauth_remote_->url();
    r.client.client_id = "sweep-client";
    r.client.client_secret = s_["oauth_client_secret"];
    r.client.auth_method = "client_secret_basic";
    r.access_token = s_["oauth_access_token"];
    r.refresh_token = s_["oauth_refresh_token"];
    ASSERT_TRUE(store::TokenStore(state_).save(r).has_value());
  }

  // `sluice secrets set SWEEP_SECRET`, the value on stdin as an operator would pipe it.
  void store_secret() {
    auto s = launch({"secrets", "set", "SWEEP_SECRET"}, {}, false);
    s->send(s_["secret_value"]);
    s->close_stdin();
    std::string out;
    while (auto line = s->read_line()) out += *line + "\n";
    EXPECT_EQ(s->wait_exit(), 0);
    s->join_stderr();
    ledger_.record("cli secrets", out + s->stderr_text());
  }

  void declare_sinks() {
    for (const char* sink :
         {"stdio responses", "stdio stderr log",   "gateway.health", "audit ring",
          "http responses",  "http /health",       "http /metrics",  "http log file",
          "cli servers",     "cli servers --json", "cli index",      "cli index --json",
          "cli call",        "cli call --json",    "cli auth",       "cli secrets",
          "cli trust",       "catalog cache file", "audit log file", "run log files"}) {
      ledger_.sink(sink);
    }
  }

  void allow_correct_echoes() {
    const std::string result =
        "the result of a tool the client called is what the downstream "
        "returned (fx::echo echoes its valid argument); not a rejected value";
    ledger_.allow("tool_args_valid", "stdio responses", result);
    ledger_.allow("tool_args_valid", "http responses", result);
    ledger_.allow("cli_call_args_valid", "cli call", result);
    ledger_.allow("cli_call_args_valid", "cli call --json", result);
    const std::string id = "JSON-RPC: a response carries the id of its request, byte for byte";
    ledger_.allow("request_id", "stdio responses", id);
    ledger_.allow("request_id", "http responses", id);
    const std::string name =
        "a plain name (1-128 of A-Z a-z 0-9 _ . -, core::show_name) is shown so that the caller "
        "can fix a typo; a name with anything else is described (tool_name_not_plain)";
    ledger_.allow("tool_name_plain_unknown", "stdio responses", name);
    ledger_.allow("tool_name_plain_unknown", "http responses", name);
  }

  // Discovery runs (the project file is found), HOME holds no file of its own.
  std::vector<std::string> common() const {
    return {"--project", project_.string(),   "--config",    good_.string(),
            "--config",  bad_entry_.string(), "--config",    bad_block_.string(),
            "--config",  bad_name_.string(),  "--state-dir", state_.string()};
  }

  // sluice with the planted process environment (through env(1), so the test's own stays
  // untouched); `extra` adds variables.
  std::unique_ptr<Sluice> launch(std::vector<std::string> args,
                                 const std::vector<std::string>& extra = {},
                                 bool with_common = true) {
    std::vector<std::string> argv{"SWEEP_ENV=" + s_["env_value_referenced"],
                                  "SWEEP_UNUSED=" + s_["env_value_unreferenced"],
                                  "XDG_CONFIG_HOME=" + (dir_.path() / "xdg-config").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(SLUICE_BINARY);
    argv.insert(argv.end(), args.begin(), args.end());
    if (with_common) {
      auto c = common();
      argv.insert(argv.end(), c.begin(), c.end());
    }
    return std::make_unique<Sluice>(argv, dir_.path(), dir_.path(), "/usr/bin/env");
  }

  // A one-shot command: everything it wrote (stdout and stderr) goes to `sink`.
  int run(const std::string& sink, const std::vector<std::string>& args, bool with_common = true) {
    auto s = launch(args, {}, with_common);
    s->close_stdin();
    std::string out;
    while (auto line = s->read_line()) out += *line + "\n";
    int code = s->wait_exit().value_or(-1);
    s->join_stderr();
    ledger_.record(sink, out + s->stderr_text());
    return code;
  }

  void sweep_cli();
  void sweep_stdio();
  void sweep_http();
  void sweep_http_doors(const HttpSide& http);
  void sweep_trust_approve();
  void sweep_state_files();

  TempDir dir_;
  fs::path state_ = dir_.path() / "state";
  fs::path project_ = dir_.path() / "proj";
  std::string marker_ = new_marker();
  SentinelLedger ledger_;
  std::map<std::string, std::string> s_;  // input kind -> its sentinel
  std::unique_ptr<RemoteFixture> bearer_remote_, oauth_remote_;
  fs::path good_, bad_entry_, bad_block_, bad_name_;
};

void SentinelSweep::sweep_cli() {
  EXPECT_EQ(run("cli servers", {"servers"}), 0);
  EXPECT_EQ(run("cli servers --json", {"servers", "--json"}), 0);
  run("cli index", {"index"});  // `gone` fails to start: exit 1 is expected
  run("cli index --json", {"index", "--json"});
  EXPECT_EQ(run("cli call",
                {"call", "fx::echo", "--args", R"({"text":")" + s_["cli_call_args_valid"] + "\"}"}),
            0);
  EXPECT_NE(
      run("cli call", {"call", "fx::echo", "--args", rejected_args(s_["cli_call_args_rejected"])}),
      0);
  EXPECT_NE(run("cli call",
                {"call", "fx::echo", "--args", "{\"" + s_["cli_call_args_malformed"] + "\":"}),
            0);
  EXPECT_NE(run("cli call", {"call", "fx::" + s_["cli_call_tool_not_plain"] + "!"}), 0);
  EXPECT_NE(run("cli call", {"call", "fx::rpc_error_long"}), 0);
  EXPECT_NE(run("cli call --json", {"call", "--json", "fx::rpc_error_control"}), 0);
  EXPECT_EQ(run("cli call --json", {"call", "--json", "fx::echo", "--args",
                                    R"({"text":")" + s_["cli_call_args_valid"] + "\"}"}),
            0);
  EXPECT_NE(run("cli auth", {"auth", "login", "rem"}), 0);
  EXPECT_NE(run("cli call", {"call", "proj::echo", "--args", R"({"text":"x"})"}), 0);
  EXPECT_EQ(run("cli call", {"call", "fx::token_result"}), 0);
  EXPECT_EQ(run("cli secrets", {"secrets", "list"}, false), 0);
  EXPECT_EQ(run("cli secrets", {"secrets", "list", "--json"}, false), 0);
  const std::vector<std::string> trust{"--project", project_.string(), "--state-dir",
                                       state_.string()};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), trust.begin(), trust.end());
    return a;
  };
  EXPECT_EQ(run("cli trust", with({"trust", "list"}), false), 0);
  EXPECT_EQ(run("cli trust", with({"trust", "list", "--json"}), false), 0);
}

// Last, so that the gateways above saw the project file untrusted: approval shows the file's
// servers (names, commands, arguments, the names of env variables and headers), then its
// servers run with their values.
void SentinelSweep::sweep_trust_approve() {
  EXPECT_EQ(
      run("cli trust",
          {"trust", "approve", "--project", project_.string(), "--state-dir", state_.string()},
          false),
      0);
  EXPECT_EQ(run("cli call", {"call", "proj::echo", "--args", R"({"text":"approved"})"}), 0);
  EXPECT_NE(run("cli call", {"call", "projremote::echo", "--args", R"({"text":"x"})"}), 0);
}

void SentinelSweep::sweep_stdio() {
  auto s = launch({"serve", "--log-stderr", "--expose", "meta,all"});
  auto ask = [&](const std::string& method, const std::string& params, const std::string& id = "") {
    std::string line = s->request_raw(method, params, id);
    ledger_.record("stdio responses", line + "\n");
    return line;
  };
  // Evidence that an input reached sluice (a sweep of inputs that never arrived proves nothing).
  auto expect_in = [](const std::string& line, const std::string& part) {
    EXPECT_NE(line.find(part), std::string::npos) << part << " not in " << line;
  };
  ask("initialize", kInit + s_["client_info"] + R"(","version":"1"}})");
  s->send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ask("tools/call", invoke("fx::echo", R"({"text":")" + s_["tool_args_valid"] + "\"}"));
  ask("tools/call", invoke("fx::echo", rejected_args(s_["tool_args_rejected"])));
  ask("tools/call",
      R"({"name":"fx__echo","arguments":)" + rejected_args(s_["aggregate_args_rejected"]) + "}");
  ask("tools/call",
      R"({"name":"gateway.describe","arguments":)" + rejected_args(s_["meta_args_rejected"]) + "}");
  ask("tools/call", invoke("fx::" + s_["tool_name_plain_unknown"], "{}"));
  ask("tools/call", invoke("fx::" + s_["tool_name_not_plain"] + "!", "{}"));
  ask("tools/call", R"({"name":"fx__)" + s_["aggregate_name_unknown"] + R"(!","arguments":{}})");
  ask("tools/list", R"({"cursor":")" + s_["cursor"] + "\"}");
  ask("prompts/list", R"({"cursor":")" + s_["cursor"] + "\"}");
  ask("tools/list", "{}", "\"" + s_["request_id"] + "\"");
  ask(s_["method_name"], "{}");
  ask("tools/call",
      R"({"name":"gateway.catalog_search","arguments":{"query":")" + s_["search_query"] + "\"}}");
  ask("resources/read", R"({"uri":"fx://)" + s_["resource_uri"] + "/x?y=1\"}");
  ask("prompts/get", R"({"name":"fx__)" + s_["resource_uri"] + R"(!","arguments":{"a":")" +
                         s_["resource_uri"] + "\"}}");
  expect_in(ask("tools/call", invoke("fx::rpc_error_long", "{}")), "was not shown");
  expect_in(ask("tools/call", invoke("fx::rpc_error_control", "{}")), "was not shown");
  // `rem` answers only with the secret from the store as its bearer, `remo` only with the
  // stored OAuth token.
  expect_in(ask("tools/call", invoke("rem::echo", R"({"text":"through the secret"})")),
            R"("text":"through the secret")");
  expect_in(ask("tools/call", invoke("remo::echo", R"({"text":"through the stored token"})")),
            R"("text":"through the stored token")");
  expect_in(ask("tools/call", invoke("gone::echo", "{}")), R"("isError":true)");
  expect_in(ask("tools/call", invoke("ld::echo", R"({"text":"x"})")), "its env sets LD_PRELOAD");
  expect_in(ask("tools/call", invoke("proj::echo", R"({"text":"x"})")), "untrusted");
  expect_in(ask("tools/call", invoke("fx::token_result", "{}")), "[REDACTED:");
  auto health = s->call_tool("gateway.health", "{}");
  ledger_.record("gateway.health", text_of(health));
  auto h = bj::parse(text_of(health));
  ledger_.record("audit ring", bj::serialize(h.at("audit")));
  for (const auto& n : s->notifications()) ledger_.record("stdio responses", n + "\n");
  expect_clean_exit(*s);
  s->join_stderr();
  ledger_.record("stdio stderr log", s->stderr_text());
}

void SentinelSweep::sweep_http() {
  const fs::path port_file = dir_.path() / "http-port";
  const fs::path log_file = dir_.path() / "http.log";
  auto s = launch({"serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0",
                   "--port-file", port_file.string(), "--log-file", log_file.string()},
                  {"SLUICE_AUTH_TOKEN=" + s_["http_auth_token"]});
  HttpSide http{ledger_, 0, s_["http_auth_token"], ""};
  ASSERT_TRUE(wait_file(port_file)) << s->stderr_text();
  for (auto deadline = std::chrono::steady_clock::now() + kGuard;
       http.port == 0 && std::chrono::steady_clock::now() < deadline;) {
    std::ifstream(port_file) >> http.port;                 // seen before its digits, perhaps
    if (http.port == 0) std::this_thread::sleep_for(5ms);  // no event for another's file
  }
  ASSERT_GT(http.port, 0);
  auto init = http.post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":)" + kInit +
                            s_["client_info"] + R"(","version":"1"}}})",
                        http.good());
  http.session = init.header("Mcp-Session-Id").value_or("");
  ASSERT_FALSE(http.session.empty()) << init.all();
  http.post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", http.good());
  http.call("2", "tools/call", invoke("fx::echo", R"({"text":")" + s_["tool_args_valid"] + "\"}"));
  http.call("3", "tools/call", invoke("fx::echo", rejected_args(s_["tool_args_rejected"])));
  http.call(
      "4", "tools/call",
      R"({"name":"gateway.describe","arguments":)" + rejected_args(s_["meta_args_rejected"]) + "}");
  http.call("5", "tools/call", invoke("fx::" + s_["tool_name_plain_unknown"], "{}"));
  http.call("6", "tools/call", invoke("fx::" + s_["tool_name_not_plain"] + "!", "{}"));
  http.call("7", "tools/list", R"({"cursor":")" + s_["cursor"] + "\"}");
  http.call("\"" + s_["request_id"] + "\"", "tools/list", "{}");
  http.call("8", s_["method_name"], "{}");
  http.call("9", "tools/call", invoke("fx::rpc_error_long", "{}"));
  http.call("10", "tools/call", invoke("fx::rpc_error_control", "{}"));
  http.call("17", "tools/call", invoke("fx::token_result", "{}"));
  sweep_http_doors(http);
  auto health = http.exchange("GET", "/health", http.good(""));
  EXPECT_EQ(health.status, 200) << health.all();
  ledger_.record("http /health", health.all());
  auto metrics = http.exchange("GET", "/metrics", http.good(""));
  EXPECT_EQ(metrics.status, 200) << metrics.all();
  ledger_.record("http /metrics", metrics.all());
  s->signal(SIGTERM);
  EXPECT_EQ(s->wait_exit(), 0);
  s->join_stderr();
  ledger_.record("http log file", sentinel_sweep_read_file(log_file) + s->stderr_text());
}

// Refusals at the door: what the client sent in its head or body is never shown back.
void SentinelSweep::sweep_http_doors(const HttpSide& http) {
  const std::string ping = R"({"jsonrpc":"2.0","id":11,"method":"ping"})";
  Headers wrong_bearer = http.good();
  wrong_bearer[3].second = "Bearer " + s_["http_bearer_wrong"];
  EXPECT_EQ(http.post(ping, wrong_bearer).status, 401);
  EXPECT_EQ(http.post(ping, http.good(s_["http_session_id"])).status, 404);
  Headers origin = http.good();
  origin.emplace_back("Origin", "http://" + s_["http_origin"] + ".example");
  EXPECT_EQ(http.post(ping, origin).status, 403);
  Headers foreign_host = http.good();
  foreign_host[0].second = s_["http_host"] + ".example";
  EXPECT_EQ(http.post(ping, foreign_host).status, 403);
  Headers unknown = http.good();
  unknown.emplace_back("X-" + s_["http_unknown_header"], s_["http_unknown_header"]);
  EXPECT_EQ(http.post(ping, unknown).status, 200);
  const std::string malformed =
      R"({"jsonrpc":"2.0","id":16,"method":"ping","params":{")" + s_["http_body_malformed"] + "\":";
  EXPECT_EQ(http.post(malformed, http.good()).status, 400);
  auto path = http.exchange("GET", "/" + s_["http_path"], http.good());
  EXPECT_EQ(path.status, 404);
  ledger_.record("http responses", path.all());
  Headers resume = http.good();
  resume.emplace_back("Last-Event-ID", s_["http_last_event_id"]);
  HttpConnection stream(http.port);  // GET /mcp is a stream: only its head is read
  ASSERT_TRUE(stream.send(http_request("GET", "/mcp", resume)));
  auto head = stream.read_head();
  ASSERT_TRUE(head.has_value());
  ledger_.record("http responses", head->all());
}

void SentinelSweep::sweep_state_files() {
  // What the catalog cache holds of every server (names of env variables and headers, never
  // their values; no argument, result or token), its write-ahead log included.
  ledger_.record("catalog cache file",
                 sentinel_sweep_read_file(state_ / "catalog.sqlite3") +
                     sentinel_sweep_read_file(state_ / "catalog.sqlite3-wal"));
  // The persistent audit log of every serve and call above (rotated files included).
  std::string audit;
  for (const auto& e : fs::directory_iterator(state_)) {
    if (e.path().filename().string().starts_with("audit.jsonl"))
      audit += sentinel_sweep_read_file(e.path());
  }
  ledger_.record("audit log file", audit);
  // The serving gateways' own log files (logs/, rotated parts included).
  std::string logs;
  std::error_code ec;
  for (fs::directory_iterator it(state_ / "logs", ec), end; !ec && it != end; it.increment(ec)) {
    logs += sentinel_sweep_read_file(it->path());
  }
  ledger_.record("run log files", logs);
}

}  // namespace

TEST_F(SentinelSweep, NoPlantedInputReachesAnySink) {
  sweep_cli();
  sweep_stdio();
  sweep_http();
  sweep_trust_approve();
  sweep_state_files();
  auto t = ledger_.check();
  RecordProperty("inputs", static_cast<int>(t.inputs));
  RecordProperty("sinks", static_cast<int>(t.sinks));
  RecordProperty("pairs_checked", static_cast<int>(t.checked));
  std::printf(
      "sentinel sweep: %zu inputs x %zu sinks = %zu pairs: %zu checked, %zu allowed "
      "(each with its reason), %zu leaks\n",
      t.inputs, t.sinks, t.pairs, t.checked, t.allowed, t.leaks);
  EXPECT_EQ(t.checked + t.allowed, t.pairs);
}

}  // namespace sluice::test
