// `sluice auth login SERVER`: the interactive OAuth authorization of a protected remote
// server. It asks the server once without a token (its 401 names where to authorize), prints
// the authorization URL for the operator's browser, waits for the redirect to its loopback
// listener and stores the tokens (0600, in the state directory). Nothing secret is printed.
#include "cli/serve.hpp"
#include "config/trust_store.hpp"
#include "core/display.hpp"
#include "core/spawn.hpp"
#include "gateway/downstream/remote_auth.hpp"
#include "store/token_store.hpp"
#include "transport/http_client.hpp"

#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <optional>

namespace sluice::cli {
namespace asio = boost::asio;

namespace {

// The challenge a request without a token gets (the WWW-Authenticate of a 401), or "".
asio::awaitable<std::string> challenge_of(asio::io_context& io,
                                          const config::RemoteServer& remote) {
  transport::HttpClientOptions http;
  http.request_deadline = std::chrono::seconds(30);
  http.ca_file = remote.ca_file;
  transport::HttpClient client(io, http);
  transport::HttpRequest probe{"POST", remote.url, remote.headers, {}};
  probe.headers.emplace_back("Content-Type", "application/json");
  probe.headers.emplace_back("Accept", "application/json, text/event-stream");
  probe.body = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
               R"("2025-11-25","capabilities":{},"clientInfo":{"name":"sluice","version":"0"}}})";
  auto answer = co_await client.exchange(std::move(probe));
  if (!answer || (answer->status != 401 && answer->status != 403)) co_return std::string();
  co_return std::string(transport::field(answer->headers, "WWW-Authenticate").value_or(""));
}

}  // namespace

int auth_login(const CommonOptions& options, const std::string& server) {
  if (!setup_logging(options)) return 2;
  const std::filesystem::path state = state_dir_of(options);
  if (state.empty()) {
    print_err(
        "sluice auth login: no state directory: set HOME or XDG_STATE_HOME, or give "
        "--state-dir");
    return 2;
  }
  auto config = load_config(options);
  const config::ServerConfig* entry = nullptr;
  for (const auto& s : config->servers) {
    if (s.name == server) entry = &s;
  }
  const auto* remote = entry ? std::get_if<config::RemoteServer>(&entry->transport) : nullptr;
  if (!remote) {
    print_err(entry ? fmt::format("sluice auth login: {} is not a remote server",
                                  core::display_safe(server))
                    : fmt::format("sluice auth login: no server named {} is configured",
                                  core::display_safe(server)));
    return 2;
  }
  if (entry->untrusted) {  // its URL is not contacted before its file is approved
    print_err(fmt::format("sluice auth login: {} is untrusted (its project file is not "
                          "approved); review {}, then run: {}",
                          core::display_safe(server), core::display_safe(entry->source_file),
                          core::display_safe(config::approve_command(entry->source_file))));
    return 2;
  }
  asio::io_context io;
  std::optional<gateway::auth::AuthResult<void>> outcome;
  core::spawn(
      io,
      [&]() -> asio::awaitable<void> {
        gateway::OAuthBearer bearer(io, *entry, state);
        std::string challenge = co_await challenge_of(io, *remote);
        auto print_url = [&](std::string_view url) {
          print_out(
              fmt::format("To authorize sluice for {}, open this URL in a browser:\n  {}\n"
                          "Waiting for the authorization server's redirect...",
                          core::display_safe(server), core::display_safe(url)));
        };
        outcome = co_await bearer.login(print_url, std::move(challenge));
      },
      "sluice auth login");
  io.run();
  if (outcome && *outcome) {
    print_out(fmt::format("{}: signed in; the tokens are stored in {}", core::display_safe(server),
                          core::display_safe((state / store::kTokenFileName).string())));
    return 0;
  }
  print_err(fmt::format("sluice auth login: {}",
                        outcome ? core::display_safe(outcome->error().message)
                                : std::string("the login ended by an internal error")));
  return 1;
}

}  // namespace sluice::cli
