// ConfigReload: the reread, the application of a diff to the fleet, and the changes that
// wait for their servers to be idle.
#include "gateway/reload.hpp"

#include "core/display.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"

#include <boost/json/array.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <typeinfo>

namespace sluice::gateway {
namespace bj = boost::json;
namespace fs = std::filesystem;

ConfigReload::ConfigReload(asio::io_context& io, Fleet& fleet, const CallLedger& calls,
                           AuditRing& audit, std::shared_ptr<const config::GatewayConfig> served,
                           Hooks hooks)
    : io_(io),
      fleet_(fleet),
      calls_(calls),
      audit_(audit),
      hooks_(std::move(hooks)),
      served_(served),
      last_read_(served),
      startup_(std::move(served)),
      settle_timer_(io) {}

void ConfigReload::start() {
  if (!hooks_.rediscover || stopped_ || watch_) return;
  watch_ = std::make_unique<config::FileWatch>(io_, kDebounce,
                                               [this] { reread("a config file changed"); });
  watch_files();
}

void ConfigReload::stop() {
  stopped_ = true;
  *alive_ = false;
  settle_timer_.cancel();
  if (watch_) watch_->stop();
}

void ConfigReload::watch_files() {
  if (!watch_) return;
  std::vector<fs::path> files;
  for (const fs::path& file : last_read_->files_looked_for) {
    files.push_back(file);
    // A symlinked file changes where it points to, too.
    std::error_code ec;
    fs::path target = fs::weakly_canonical(file, ec);
    if (!ec && target != file) files.push_back(std::move(target));
  }
  std::vector<std::string> problems = watch_->watch(files);
  for (const std::string& p : problems) {
    if (std::find(watch_problems_.begin(), watch_problems_.end(), p) == watch_problems_.end()) {
      core::log::warn("config: {}; sluice keeps serving, and gateway.refresh rereads the files", p);
    }
  }
  watch_problems_ = std::move(problems);
}

boost::json::object ConfigReload::reread(std::string_view why) {
  if (stopped_ || !hooks_.rediscover) {
    return bj::object{{"reread", false},
                      {"reason", stopped_ ? "sluice is shutting down"
                                          : "this sluice has no configuration files to reread"}};
  }
  ++rereads_;
  core::log::info("config: rereading the configuration ({})", why);
  std::shared_ptr<const config::GatewayConfig> next;
  try {
    next = hooks_.rediscover();
  } catch (const std::exception& e) {
    core::log::error("config: the reread failed ({})", typeid(e).name());
  }
  if (!next) {
    last_ = Outcome{};
    last_.result = "failed";
  } else {
    apply(std::move(next));
  }
  watch_files();
  bj::object out = outcome_json();
  out["reread"] = true;
  return out;
}

std::map<std::string, const config::ServerConfig*> ConfigReload::served_servers() const {
  std::map<std::string, const config::ServerConfig*> served;
  for (const auto& d : fleet_.servers()) {
    const config::ServerConfig* current = &d->config();
    if (auto w = waiting_.find(d->name()); w != waiting_.end()) {
      current = &w->second;
    } else if (auto r = replacing_.find(d->name()); r != replacing_.end()) {
      current = &r->second;
    }
    served.emplace(d->name(), current);
  }
  return served;
}

void ConfigReload::apply(std::shared_ptr<const config::GatewayConfig> next) {
  if (stopped_) return;
  last_read_ = next;
  ConfigDiff diff = diff_configs(served_servers(), *served_, startup_->policy, *next);
  if (!diff.newly_rejected.empty()) {
    problem_ = diff.newly_rejected;
    last_ = Outcome{};
    last_.result = "rejected";
    for (const auto& rejected : problem_) {
      core::log::warn(
          "config: {} is rejected ({}); the last good configuration (generation {}) is still "
          "served: fix the file, sluice applies it when it is saved",
          core::display_safe(rejected.path), rejected.problem, generation_);
    }
    audit_.record({"config_reload", "sluice", "", "",
                   fmt::format("rejected: generation {} kept", generation_), -1, generation_});
    return;
  }
  problem_.clear();
  if (diff.operator_keys != operator_keys_ && !diff.operator_keys.empty()) {
    core::log::warn("config: operator settings changed ({}): restart sluice to apply them",
                    fmt::join(diff.operator_keys, ", "));
  }
  operator_keys_ = diff.operator_keys;
  served_ = next;
  apply_diff(*next, diff);
}

void ConfigReload::apply_diff(const config::GatewayConfig& next, const ConfigDiff& diff) {
  last_ = Outcome{};
  for (const config::ServerConfig* server : diff.added) {
    Downstream& d = fleet_.add(*server);
    ++last_.added;
    const auto& auto_start = next.auto_start;
    if (std::find(auto_start.begin(), auto_start.end(), d.name()) != auto_start.end()) {
      core::spawn(
          io_, [&d]() -> asio::awaitable<void> { co_await d.ensure_started(); },
          "the autoStart of an added server");
    }
  }
  for (const std::string& name : diff.removed) {
    waiting_.erase(name);
    replacing_.erase(name);  // its restart installs nothing
    if (Downstream* d = fleet_.withdraw(name)) draining_.push_back(d);
    ++last_.removed;
  }
  for (const config::ServerConfig* server : diff.changed) {
    const Downstream* d = fleet_.find(server->name);
    if (d && !replacing_.contains(server->name) && defines_same(d->config(), *server)) {
      waiting_.erase(server->name);  // changed back before it was applied
      continue;
    }
    waiting_.insert_or_assign(server->name, *server);
    ++last_.changed;
  }
  const bool fleet_changed = last_.added + last_.removed > 0;
  if (fleet_changed && hooks_.fleet_changed) hooks_.fleet_changed();
  settle();
  last_.waiting = waiting_.size();
  if (last_.added + last_.removed + last_.changed == 0) {
    last_.result = "unchanged";
    return;
  }
  last_.result = "applied";
  ++generation_;
  std::string counts = fmt::format("{} added, {} removed, {} changed, {} waiting for pending calls",
                                   last_.added, last_.removed, last_.changed, last_.waiting);
  core::log::info("config: restart path ds_config_reload: generation {}: {}", generation_, counts);
  audit_.record({"config_reload", "sluice", "", "",
                 fmt::format("generation {}: {}", generation_, counts), -1, generation_});
}

std::size_t ConfigReload::pending_calls(std::string_view server) const {
  return static_cast<std::size_t>(
      std::count_if(calls_.records().begin(), calls_.records().end(),
                    [server](const CallRecord& c) { return c.server == server; }));
}

void ConfigReload::settle() {
  if (stopped_) return;
  for (auto it = draining_.begin(); it != draining_.end();) {
    if (pending_calls((*it)->name()) > 0) {
      ++it;
      continue;
    }
    core::spawn(io_, stop_removed(*it), "the stop of a removed server");
    it = draining_.erase(it);
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (replacing_.contains(it->first) || pending_calls(it->first) > 0) {
      ++it;
      continue;
    }
    std::string name = it->first;
    replacing_.insert_or_assign(name, std::move(it->second));
    it = waiting_.erase(it);
    core::spawn(io_, replace(std::move(name)), "the restart of a server with a new configuration");
  }
  if ((draining_.empty() && waiting_.empty()) || settle_armed_) return;
  // Calls end without telling the reload: it looks again shortly, only while some wait.
  settle_armed_ = true;
  settle_timer_.expires_after(kSettleEvery);
  settle_timer_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (!*alive) return;
    settle_armed_ = false;
    if (!ec) settle();
  });
}

asio::awaitable<void> ConfigReload::stop_removed(Downstream* d) {
  core::log::info("server {}: removed from the configuration; stopping it (ds_config_reload)",
                  d->name());
  co_await d->stop("removed from the configuration");
  co_await d->shutdown();
}

asio::awaitable<void> ConfigReload::replace(std::string name) {
  Downstream* old = fleet_.find(name);
  if (!old) {
    replacing_.erase(name);
    co_return;
  }
  const bool was_online = old->phase() == Phase::online;
  // Its project file was approved meanwhile: an autoStart server starts as it would have.
  const bool approved_now = old->phase() == Phase::untrusted;
  core::log::info(
      "server {}: restart path ds_config_reload: its configuration changed; it restarts with "
      "the new one",
      name);
  co_await old->stop("its configuration changed: restarting with the new one");
  co_await old->shutdown();
  auto target = replacing_.find(name);
  // Removed meanwhile (its entry is gone), or sluice is shutting down: nothing to install.
  if (stopped_ || target == replacing_.end() || fleet_.find(name) != old) {
    replacing_.erase(name);
    co_return;
  }
  Downstream* fresh = fleet_.replace(std::move(target->second));
  replacing_.erase(target);
  if (hooks_.fleet_changed) hooks_.fleet_changed();
  bool ok = true;
  if (was_online || (approved_now && fresh->config().auto_start)) {
    ok = co_await fresh->ensure_started();
  }
  audit_.record({"config_reload", "sluice", name, "",
                 fmt::format("restarted with the configuration of generation {}{}", generation_,
                             ok ? "" : ": its start failed"),
                 -1, fresh->generation()});
  settle();  // a newer change of it may be waiting
}

bj::object ConfigReload::outcome_json() const {
  return bj::object{{"outcome", last_.result},           {"added", last_.added},
                    {"removed", last_.removed},          {"changed", last_.changed},
                    {"waiting_for_idle", last_.waiting}, {"generation", generation_}};
}

void ConfigReload::add_to_health(bj::object& out) const {
  out["config_generation"] = generation_;
  bj::array files;
  for (const std::string& path : last_read_->files_read) {
    bj::object f{{"path", path}, {"status", "accepted"}};
    for (const auto& rejected : last_read_->files_rejected) {
      if (rejected.path != path) continue;
      f["status"] = "rejected";
      f["problem"] = rejected.problem;
    }
    files.push_back(std::move(f));
  }
  out["config_files"] = std::move(files);
  bj::object reload{{"last", outcome_json()}, {"rereads", rereads_}};
  if (!problem_.empty()) {
    bj::array rejected;
    for (const auto& p : problem_)
      rejected.push_back(bj::object{{"file", p.path}, {"problem", p.problem}});
    reload["problem"] = bj::object{
        {"rejected_files", std::move(rejected)},
        {"kept", fmt::format("the last good configuration (generation {}) is served", generation_)},
        {"next_step", "fix the file; sluice applies it when it is saved (or at gateway.refresh)"}};
  }
  if (!operator_keys_.empty()) {
    bj::array keys;
    for (const auto& k : operator_keys_) keys.push_back(bj::string(k));
    reload["operator_settings_changed"] = bj::object{
        {"keys", std::move(keys)},
        {"next_step",
         "restart sluice (reconnect it from your MCP client) to apply them; sluice never "
         "restarts itself"}};
  }
  bj::array draining;
  for (const Downstream* d : draining_) draining.push_back(bj::string(d->name()));
  reload["draining"] = std::move(draining);
  bj::object watch{{"watching", watch_ != nullptr && watch_->directories() > 0}};
  if (!watch_problems_.empty()) {
    bj::array problems;
    for (const auto& p : watch_problems_) problems.push_back(bj::string(p));
    watch["problems"] = std::move(problems);
    watch["next_step"] = "gateway.refresh rereads the configuration files";
  }
  reload["watch"] = std::move(watch);
  out["config_reload"] = std::move(reload);
}

void ConfigReload::add_to_row(const Downstream& d, bj::object& row) const {
  if (fleet_.find(d.name()) != &d) return;
  if (waiting_.contains(d.name())) {
    row["config_change"] = bj::object{
        {"status", "waiting"},
        {"reason", "its configuration changed"},
        {"next_step", fmt::format("finish or cancel its {} pending call(s) (gateway.list_pending, "
                                  "gateway.cancel); it restarts with the new configuration then",
                                  pending_calls(d.name()))}};
  } else if (replacing_.contains(d.name())) {
    row["config_change"] =
        bj::object{{"status", "restarting"}, {"reason", "its configuration changed"}};
  }
}

}  // namespace sluice::gateway
