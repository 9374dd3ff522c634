#include "gateway/fleet.hpp"

#include "core/describe.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/policy/access.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <typeinfo>

namespace sluice::gateway {

namespace {

// The shared state of one for_each_concurrently: workers take the next server in turn.
struct Batch {
  explicit Batch(asio::io_context& io) : done(io) {}
  std::vector<Downstream*> targets;
  std::function<asio::awaitable<void>(Downstream&)> work;
  std::size_t next = 0;
  std::size_t workers = 0;  // still running
  core::Event done;
};

asio::awaitable<void> batch_worker(std::shared_ptr<Batch> batch) {
  while (batch->next < batch->targets.size()) {
    Downstream& d = *batch->targets[batch->next++];
    try {
      co_await batch->work(d);
    } catch (const std::exception& e) {
      // Only the type: the text may quote what the server sent.
      core::log::error("server {}: start or stop failed ({})", d.name(), typeid(e).name());
    }
  }
  if (--batch->workers == 0) batch->done.set();
}

std::pair<std::string_view, std::string_view> split_tool_id(std::string_view id) {
  std::size_t sep = id.find("::");
  if (sep == std::string_view::npos) return {{}, {}};
  return {id.substr(0, sep), id.substr(sep + 2)};
}

}  // namespace

Fleet::Fleet(asio::io_context& io, const config::GatewayConfig& config, const core::Limits& limits,
             const EventsFor& events_for)
    : io_(io), limits_(limits), policy_(config.policy), events_for_(events_for) {
  servers_.reserve(config.servers.size());
  by_name_.reserve(config.servers.size());
  for (const auto& server : config.servers) {
    servers_.push_back(make(server));
    by_name_.emplace(servers_.back()->name(), servers_.back().get());
  }
}

std::unique_ptr<Downstream> Fleet::make(config::ServerConfig config) const {
  // A retired server of the same name may still be draining: the new one's generations (and
  // so its owner token, P3) continue after the highest of theirs.
  std::uint64_t last = 0;
  for (const auto& r : retired_) {
    if (r->name() == config.name) last = std::max(last, r->generation());
  }
  DownstreamEvents events = events_for_(config);
  auto d =
      std::make_unique<Downstream>(io_, std::move(config), limits_, policy_, std::move(events));
  d->continue_generations_after(last);
  return d;
}

Downstream& Fleet::add(config::ServerConfig config) {
  removed_.erase(config.name);
  servers_.push_back(make(std::move(config)));
  Downstream& d = *servers_.back();
  by_name_.emplace(d.name(), &d);
  return d;
}

Downstream* Fleet::withdraw(std::string_view name) {
  auto it = std::find_if(servers_.begin(), servers_.end(),
                         [&](const auto& d) { return d->name() == name; });
  if (it == servers_.end()) return nullptr;
  Downstream* d = it->get();
  by_name_.erase(d->name());
  removed_.emplace(d->name());
  retired_.push_back(std::move(*it));
  servers_.erase(it);
  return d;
}

Downstream* Fleet::replace(config::ServerConfig config) {
  auto it = std::find_if(servers_.begin(), servers_.end(),
                         [&](const auto& d) { return d->name() == config.name; });
  if (it == servers_.end()) return nullptr;
  by_name_.erase((*it)->name());
  retired_.push_back(std::move(*it));
  *it = make(std::move(config));
  by_name_.emplace((*it)->name(), it->get());
  return it->get();
}

Downstream* Fleet::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string_view> Fleet::names() const {
  std::vector<std::string_view> names;
  names.reserve(servers_.size());
  for (const auto& d : servers_) names.push_back(d->name());
  return names;
}

std::string Fleet::unknown_server(std::string_view name) const {
  return fmt::format("no configured server is named {}{}; see gateway.health",
                     core::show_name(name), core::did_you_mean(name, names()));
}

std::vector<pid_t> Fleet::child_pids() const {
  std::vector<pid_t> pids;
  for (const auto* list : {&servers_, &retired_}) {
    for (const auto& d : *list) {
      if (d->pid() > 0) pids.push_back(d->pid());
    }
  }
  return pids;
}

Downstream* Fleet::tool_server(std::string_view tool_id, std::string_view server,
                               std::string_view tool_name, ResolvedTool& r) const {
  if (server.empty()) {
    r.refusal = fmt::format(
        "{} is not a tool id: tool ids look like server::tool, see gateway.catalog_search",
        core::show_name(tool_id));
    return nullptr;
  }
  Downstream* d = find(server);
  if (!d && removed_.contains(server)) {
    r.refusal = fmt::format(
        "server {} was removed from the configuration: it takes no new calls (it stops once "
        "its pending calls end); see gateway.health",
        core::show_name(server));
    return nullptr;
  }
  const config::AccessPolicy& access = policy_.access;
  if (!d) {
    if (std::string why = access.denial(config::Subject::servers, {}, server); !why.empty()) {
      r.refusal = withheld_refusal(fmt::format("server {}", core::show_name(server)), why);
      r.withheld.emplace(core::show_name(server), core::show_name(tool_name));
      return nullptr;
    }
    r.refusal = fmt::format(
        "no configured server is named {}{}; tool ids look like "
        "server::tool, see gateway.catalog_search",
        core::show_name(server), core::did_you_mean(server, names()));
    return nullptr;
  }
  // A withheld tool is not in its server's list (DownstreamPeer leaves it out); asked here
  // too before a start, so that it never starts its server.
  if (d->phase() != Phase::online) {
    if (std::string why = access.denial(config::Subject::tools, d->name(), tool_name);
        !why.empty()) {
      r.refusal = withheld_refusal(d->name() + "::" + core::show_name(tool_name), why);
      r.withheld.emplace(d->name(), core::show_name(tool_name));
      return nullptr;
    }
  }
  return d;
}

void Fleet::serve_tool(Downstream& d, std::string_view tool_name, Need need, bool online,
                       ResolvedTool& r) const {
  if (!online && (need == Need::online || !d.tools_known())) {
    r.refusal = fmt::format("server {} is not available ({}): {}", d.name(), to_string(d.phase()),
                            d.last_error());
    return;
  }
  r.tool = d.find_tool(tool_name);
  if (!r.tool) {
    if (std::string why = policy_.access.denial(config::Subject::tools, d.name(), tool_name);
        !why.empty()) {
      r.refusal = withheld_refusal(d.name() + "::" + core::show_name(tool_name), why);
      r.withheld.emplace(d.name(), core::show_name(tool_name));
      return;
    }
    std::vector<std::string_view> tool_names;
    tool_names.reserve(d.tools().size());
    for (const auto& t : d.tools()) tool_names.push_back(t.name);
    r.refusal =
        fmt::format("server {} has no tool named {}{}; see gateway.catalog_search", d.name(),
                    core::show_name(tool_name), core::did_you_mean(tool_name, tool_names));
    return;
  }
  r.server = &d;
}

asio::awaitable<ResolvedTool> Fleet::resolve_tool(std::string_view tool_id, Need need) const {
  ResolvedTool r;
  auto [server, tool_name] = split_tool_id(tool_id);
  Downstream* d = tool_server(tool_id, server, tool_name, r);
  if (!d) co_return r;
  bool online = d->phase() == Phase::online;
  if (need != Need::listed || !d->tools_known()) online = co_await d->ensure_started();
  serve_tool(*d, tool_name, need, online, r);
  co_return r;
}

std::optional<ResolvedTool> Fleet::resolve_tool_now(std::string_view tool_id, Need need) const {
  ResolvedTool r;
  auto [server, tool_name] = split_tool_id(tool_id);
  Downstream* d = tool_server(tool_id, server, tool_name, r);
  if (!d) return r;
  bool online = d->phase() == Phase::online;
  if (need != Need::listed || !d->tools_known()) {
    std::optional<bool> started = d->started_now();
    if (!started) return std::nullopt;  // nothing was counted: resolve_tool starts it
    online = *started;
  }
  serve_tool(*d, tool_name, need, online, r);
  return r;
}

void Fleet::roots_changed() {
  for (auto& d : servers_) {
    if (d->asked_for_roots()) d->notify("notifications/roots/list_changed", "");
  }
}

asio::awaitable<void> Fleet::for_each_concurrently(
    std::vector<Downstream*> targets, std::size_t bound,
    std::function<asio::awaitable<void>(Downstream&)> work) {
  if (targets.empty()) co_return;
  auto batch = std::make_shared<Batch>(io_);
  batch->targets = std::move(targets);
  batch->work = std::move(work);
  batch->workers = std::min(std::max<std::size_t>(bound, 1), batch->targets.size());
  for (std::size_t i = 0, n = batch->workers; i < n; ++i) {
    // A worker that dies still counts as done, so the batch (a shutdown) cannot hang on it.
    core::spawn(io_, batch_worker(batch), "a start or stop of several servers", [batch] {
      if (--batch->workers == 0) batch->done.set();
    });
  }
  co_await batch->done.wait();
}

void Fleet::start_named(const std::vector<std::string>& names, std::size_t bound) {
  std::vector<Downstream*> targets;
  std::size_t unknown = 0;
  for (const auto& name : names) {
    if (Downstream* d = find(name)) {
      targets.push_back(d);
    } else {
      ++unknown;
    }
  }
  if (unknown > 0) {
    // One line, however long the list: a line per name would flood the log.
    core::log::warn("config: autoStart names {} server(s) that are not configured", unknown);
  }
  if (targets.empty()) return;
  core::spawn(
      io_,
      [this, targets = std::move(targets), bound]() -> asio::awaitable<void> {
        co_await for_each_concurrently(targets, bound, [](Downstream& d) -> asio::awaitable<void> {
          co_await d.ensure_started();
        });
      },
      "the autoStart of servers");
}

asio::awaitable<void> Fleet::start_lazy(std::size_t bound) {
  std::vector<Downstream*> lazy;
  for (auto& d : servers_) {
    // A server another request is starting is waited for too: its lists are not known yet.
    if (d->phase() == Phase::lazy || d->phase() == Phase::starting) lazy.push_back(d.get());
  }
  co_await for_each_concurrently(
      std::move(lazy), bound,
      [](Downstream& d) -> asio::awaitable<void> { co_await d.ensure_started(); });
}

asio::awaitable<void> Fleet::shutdown() {
  std::vector<Downstream*> all;
  for (auto& d : servers_) all.push_back(d.get());
  for (auto& d : retired_) all.push_back(d.get());
  const std::size_t everyone = all.size();
  co_await for_each_concurrently(
      std::move(all), everyone,
      [](Downstream& d) -> asio::awaitable<void> { co_await d.shutdown(); });
}

}  // namespace sluice::gateway
