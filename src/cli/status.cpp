#include "cli/status.hpp"

#include "cli/gateway_registry.hpp"
#include "cli/serve.hpp"
#include "cli/status_socket.hpp"
#include "cli/status_view.hpp"
#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/spawn.hpp"
#include "transport/http_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace sluice::cli {
namespace asio = boost::asio;
namespace bj = boost::json;
using Local = asio::local::stream_protocol;

namespace {

constexpr auto kAwaitTuple = asio::as_tuple(asio::use_awaitable);
// The largest document a status socket may answer with (gateway.health of a large fleet).
constexpr std::size_t kMaxDocumentBytes = 64u << 20;

// Asks the status socket at `path` for its document, within `bound`.
asio::awaitable<void> ask_socket(GatewayStatus& g, std::filesystem::path path,
                                 std::chrono::milliseconds bound) {
  auto executor = co_await asio::this_coro::executor;
  // Shared with the bound's handler, which may run after this coroutine has ended.
  auto socket_ptr = std::make_shared<Local::socket>(executor);
  Local::socket& socket = *socket_ptr;
  auto expired = std::make_shared<bool>(false);
  core::Timer timer(executor);
  timer.expires_after(bound);
  timer.async_wait([socket_ptr, expired](boost::system::error_code ec) {
    if (ec) return;  // cancelled: the exchange ended first
    *expired = true;
    socket_ptr->close(ec);
  });
  SocketAddress address(path);
  std::string text;
  boost::system::error_code ec;
  if (address.text().empty()) {
    g.problem = "its status socket's path is too long";
  } else {
    std::tie(ec) = co_await socket.async_connect(Local::endpoint(address.text()), kAwaitTuple);
    if (!ec)
      std::tie(ec, std::ignore) = co_await asio::async_write(
          socket, asio::buffer(std::string_view("status\n")), kAwaitTuple);
    if (!ec) {
      std::tie(ec, std::ignore) = co_await asio::async_read(
          socket, asio::dynamic_buffer(text, kMaxDocumentBytes), kAwaitTuple);
      if (ec == asio::error::eof) ec = {};
    }
  }
  timer.cancel();
  if (!g.problem.empty()) co_return;
  if (*expired) {
    g.problem = fmt::format("its status socket did not answer within {} ms", bound.count());
  } else if (ec == asio::error::connection_refused ||
             ec == boost::system::errc::no_such_file_or_directory) {
    g.problem = "its status socket is not there or not listening (the gateway may be stuck)";
  } else if (ec) {
    g.problem = "its status socket failed (" + ec.message() + ")";
  } else if (auto parsed = core::json::parse_strict(text, {.max_depth = 64});
             parsed && parsed->is_object()) {
    g.document = std::move(parsed->get_object());
  } else {
    g.problem = "its status socket did not answer with a status document";
  }
}

// GET /health of an HTTP service on its port, with the bearer token when there is one.
asio::awaitable<void> ask_health(asio::io_context& io, GatewayStatus& g, std::string token,
                                 std::chrono::milliseconds bound) {
  transport::HttpClientOptions options;
  options.connect_timeout = bound;
  options.read_idle_timeout = bound;
  options.request_deadline = bound;
  transport::HttpClient client(io, options);
  std::string host = g.entry.host;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  transport::HttpRequest request;
  request.method = "GET";
  request.url = fmt::format("http://{}:{}/health", host, g.entry.port);
  if (!token.empty()) request.headers.emplace_back("Authorization", "Bearer " + token);
  g.http.asked = true;
  auto response = co_await client.exchange(std::move(request));
  if (!response) {
    g.http.problem = std::string(transport::failure_name(response.error().failure));
    co_return;
  }
  g.http.answered = response->status == 200;
  g.http.status = response->status;
  if (!g.http.answered) {
    g.http.problem = fmt::format("HTTP {}", response->status);
    co_return;
  }
  auto body = core::json::parse_strict(response->body, {.max_depth = 64});
  const bj::object* o = body ? body->if_object() : nullptr;
  const bool detailed = o && o->contains("servers");
  if (o) {
    if (const bj::value* s = o->if_contains("sessions"); s && s->is_int64()) {
      g.http.sessions = s->get_int64();
    }
  }
  if (!g.entry.token_required) {
    g.http.token = "not_required";
  } else if (token.empty()) {
    g.http.token = "not_given";
  } else {
    g.http.token = detailed ? "accepted" : "not_accepted";
  }
}

// Asks every gateway at once; returns when each has answered or timed out.
void ask_all(std::vector<GatewayStatus>& gateways, const std::filesystem::path& run_dir,
             const std::string& token, std::chrono::milliseconds bound) {
  asio::io_context io;
  for (GatewayStatus& g : gateways) {
    core::spawn(io, ask_socket(g, socket_file(run_dir, g.entry.pid), bound), "a status query");
    if (g.entry.kind == "http") core::spawn(io, ask_health(io, g, token, bound), "a /health query");
  }
  io.run();
}

std::string token_of(const StatusLine& line) {
  if (!line.auth_token.empty()) return line.auth_token;
  const char* env = std::getenv("SLUICE_AUTH_TOKEN");
  return env ? std::string(env) : std::string();
}

void print_human(const std::vector<GatewayStatus>& gateways, const RegistryListing& listing,
                 const std::filesystem::path& state_dir) {
  if (listing.stale_removed > 0) {
    print_out(fmt::format("removed {} stale entr{} (a gateway that ended without removing it)",
                          listing.stale_removed, listing.stale_removed == 1 ? "y" : "ies"));
  }
  if (gateways.empty()) {
    print_out("no sluice gateway is running (state directory " + state_dir.string() + ")");
    return;
  }
  bool first = true;
  for (const GatewayStatus& g : gateways) {
    if (!first) print_out("");
    first = false;
    for (const std::string& l : render_gateway(g)) print_out(l);
  }
}

}  // namespace

void add_status_command(CLI::App& app, StatusLine& line) {
  line.status = app.add_subcommand(
      "status", "Show what the running sluice gateways (stdio and HTTP) are doing");
  CLI::App& status = *line.status;
  status.add_flag("--json", line.json, "Print a JSON array of the gateways' documents");
  status
      .add_option("--state-dir", line.state_dir,
                  "State directory whose gateways to list (default $XDG_STATE_HOME/sluice or "
                  "~/.local/state/sluice)")
      ->type_name("DIR");
  status
      .add_option("--auth-token", line.auth_token,
                  "The HTTP service's bearer token for its /health (prefer the "
                  "SLUICE_AUTH_TOKEN variable: a command line is visible to other users)")
      ->type_name("TOKEN");
  status.add_option("--timeout-ms", line.timeout_ms, "How long each gateway has to answer")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  status.footer(
      "Examples:\n"
      "  sluice status                   every gateway of this user, one block each\n"
      "  sluice status --json | jq '.[].summary'\n"
      "  SLUICE_AUTH_TOKEN=... sluice status   also check the HTTP service's token\n"
      "\n"
      "Exit codes: 0 listed (none running included), 1 a gateway could not be reached,\n"
      "2 usage error or no state directory.");
}

std::optional<int> run_status_command(const StatusLine& line) {
  if (!line.status || !*line.status) return std::nullopt;
  CommonOptions where;
  where.state_dir = line.state_dir;
  const std::filesystem::path state_dir = state_dir_of(where);
  if (state_dir.empty()) {
    print_err("sluice: no state directory: set HOME or XDG_STATE_HOME, or give --state-dir");
    return 2;
  }
  const std::filesystem::path run_dir = run_dir_of(state_dir);
  RegistryListing listing = list_entries(run_dir);
  if (!listing.problem.empty()) {
    print_err("sluice: " + listing.problem);
    return 1;
  }
  std::vector<GatewayStatus> gateways;
  for (RegistryEntry& e : listing.live) {
    gateways.emplace_back();
    gateways.back().entry = std::move(e);
  }
  ask_all(gateways, run_dir, token_of(line), std::chrono::milliseconds(line.timeout_ms));
  if (line.json) {
    bj::array out;
    for (const GatewayStatus& g : gateways) out.push_back(gateway_json(g));
    std::string text = bj::serialize(out) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    print_human(gateways, listing, state_dir);
  }
  for (const GatewayStatus& g : gateways) {
    if (unreachable(g)) return 1;
  }
  return 0;
}

}  // namespace sluice::cli
