#include "gateway/gateway.hpp"

#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "core/wall_clock.hpp"
#include "gateway/policy/access.hpp"

#include <charconv>

namespace sluice::gateway {
namespace cj = core::json;

Gateway::Gateway(asio::io_context& io, std::shared_ptr<const config::GatewayConfig> config,
                 GatewayOptions options)
    : io_(io),
      config_(std::move(config)),
      options_(std::move(options)),
      fleet_(io_, *config_, options_.limits,
             [this](const config::ServerConfig& server) { return events_for(server); }),
      started_at_(core::Clock::now()) {
  meta_tools_list_ = meta_tools_list_for(config_->policy.access);
  if (!options_.state_dir.empty()) {
    cache_ = std::make_unique<store::CatalogStore>(io_, options_.state_dir);
  }
}

Gateway::~Gateway() = default;

std::unique_ptr<store::AuditLog> Gateway::open_audit_log(const GatewayOptions& options) {
  if (!options.audit_file) return nullptr;
  return std::make_unique<store::AuditLog>(store::open_audit_file(*options.audit_file),
                                           options.audit_file->path.string());
}

DownstreamEvents Gateway::events_for(const config::ServerConfig& server) {
  DownstreamEvents events;
  events.tools_changed = [this] {
    if (options_.expose_all) clients_.broadcast("notifications/tools/list_changed");
    catalog_.invalidate();
  };
  events.listed = [this, name = server.name] { store_listing(name); };
  events.state_dir = options_.tokens_dir;
  events.progress = [this](std::string_view params) { relay_progress(params); };
  // In both modes (meta mode exposes prompts and resources too): a server's requests and
  // notifications reach the client they belong to. A plain lambda returning the member
  // coroutine (GCC 12 mishandles by-value parameters of coroutine lambdas).
  events.relay_request = [this, name = server.name](std::string method, std::string params) {
    return clients_.relay_request(name, std::move(method), std::move(params));
  };
  events.relay_notification = [this, name = server.name](std::string_view method,
                                                         std::string_view params) {
    clients_.relay_notification(name, method, params);
  };
  events.lifecycle = [this, name = server.name](std::string_view kind, std::string_view outcome,
                                                std::uint64_t generation) {
    audit_.record({std::string(kind), "sluice", name, "", std::string(outcome), -1, generation});
  };
  events.holds_server = [this, name = server.name] {
    return clients_.subscribed(name) || tasks_.live_on(name);
  };
  return events;
}

ConfigReload::Hooks Gateway::reload_hooks() {
  ConfigReload::Hooks hooks;
  hooks.rediscover = options_.rediscover;
  hooks.fleet_changed = [this] {
    catalog_.invalidate();
    // Added and replaced servers take their cached listing, if the cache has one.
    if (cache_) core::spawn(io_, load_cache(), "the catalog cache's load");
    lists_changed();
  };
  return hooks;
}

void Gateway::start() {
  for (const auto& w : config_->warnings) core::log::warn("config: {}", w);
  reload_.start();
  fleet_.start_named(config_->auto_start, config_->policy.start_concurrency);
  if (cache_) {
    core::spawn(io_, load_cache(), "the catalog cache's load", [this] { cache_loaded_.set(); });
  } else {
    cache_loaded_.set();
  }
}

std::int64_t Gateway::tools_ttl_ms() const {
  if (!options_.expose_all) return 0;
  const std::int64_t now_ms = core::unix_ms_now();
  std::int64_t least = -1;
  for (const auto& d : fleet_.servers()) {
    const std::int64_t ttl = d->peer().list_ttl_ms();
    const std::int64_t listed = d->peer().listed_at_ms();
    if (ttl < 0 || listed <= 0) return 0;  // a server that said nothing: no promise
    const std::int64_t left = std::max<std::int64_t>(0, ttl - (now_ms - listed));
    least = least < 0 ? left : std::min(least, left);
  }
  return std::max<std::int64_t>(least, 0);
}

void Gateway::lists_changed() {
  // Both modes list downstream prompts and resources; only aggregate mode lists their tools.
  if (options_.expose_all) clients_.broadcast("notifications/tools/list_changed");
  clients_.broadcast("notifications/prompts/list_changed");
  clients_.broadcast("notifications/resources/list_changed");
}

asio::awaitable<void> Gateway::start_all() {
  // Fail-closed stale: nothing new is started; lists answer with what is known.
  if (!governance_.stale_refusal().empty()) co_return;
  co_await fleet_.start_lazy(config_->policy.start_concurrency);
}

asio::awaitable<void> Gateway::shutdown() {
  reload_.stop();
  bridge_.end_all();
  co_await fleet_.shutdown();
}

void Gateway::relay_progress(std::string_view params) {
  auto token = cj::member_span(params, "progressToken");
  if (!token) return;
  std::string_view t = cj::trim(*token);
  std::uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (ec != std::errc() || ptr != t.data() + t.size()) return;
  auto it = progress_routes_.find(n);
  if (it == progress_routes_.end()) return;
  // Progress is activity: the call's inactivity timeout starts again.
  if (it->second.last_progress) *it->second.last_progress = core::Clock::now();
  if (it->second.client_token.empty()) return;  // the client did not ask for progress
  auto client = it->second.client.lock();
  if (!client) return;
  // Splice the client's own token in place of ours; everything else passes unchanged.
  std::size_t at = static_cast<std::size_t>(t.data() - params.data());
  std::string rewritten;
  rewritten.reserve(params.size() + it->second.client_token.size());
  rewritten.append(params.substr(0, at));
  rewritten.append(it->second.client_token);
  rewritten.append(params.substr(at + t.size()));
  client->notify("notifications/progress", rewritten, it->second.client_request_id);
}

}  // namespace sluice::gateway
