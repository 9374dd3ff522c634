#pragma once
// Fleet: every configured downstream, in configuration order, found by name in constant
// time, and the starts and stops of many of them at once (autoStart, the aggregate
// listing's start of every lazy server, shutdown). Starts run concurrently up to a bound;
// the shutdown tears every server down at once, so N servers cost about one start or one
// teardown grace, not N of them.
//
// Ownership: owns the Downstreams for the life of the gateway (they are created once, from
// the configuration, and never added or removed). Threading: the gateway's loop thread.
// Guarantees: shutdown() resumes only when every server is down (invariant P4 each); a
// start or stop that throws is logged (its type only) and counts as done, so a batch cannot
// hang on it.
#include "config/gateway_config.hpp"
#include "core/limits.hpp"
#include "gateway/downstream/downstream.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::gateway {

// The server and tool a tool id (`server::tool`) names; `refusal` (value-free, with what to
// do instead) when there is none.
struct ResolvedTool {
  Downstream* server = nullptr;
  const ToolEntry* tool = nullptr;
  std::string refusal;
};

class Fleet {
 public:
  // The events each server reports to the gateway, made for that server.
  using EventsFor = std::function<DownstreamEvents(const config::ServerConfig&)>;
  Fleet(asio::io_context& io, const config::GatewayConfig& config, const core::Limits& limits,
        const EventsFor& events_for);
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  const std::vector<std::unique_ptr<Downstream>>& servers() const { return servers_; }
  // The server named `name`, else nullptr.
  Downstream* find(std::string_view name) const;
  // Every server's name, in configuration order.
  std::vector<std::string_view> names() const;
  // "no configured server is named X (did you mean Y?); ..." (X shown only when plain).
  std::string unknown_server(std::string_view name) const;
  std::vector<pid_t> child_pids() const;
  // The tool `tool_id` names, starting its server when needed. need_online: a known tool
  // list of a server that is not running does not count. The entry is valid until the
  // server's tool list next changes (the caller's next suspension).
  asio::awaitable<ResolvedTool> resolve_tool(std::string_view tool_id, bool need_online) const;
  // notifications/roots/list_changed from a client: passed on to every server that asked a
  // client for its roots.
  void roots_changed();

  // Starts the servers named in `names` (unknown names are counted in one warning), at most
  // `bound` at once, in the background.
  void start_named(const std::vector<std::string>& names, std::size_t bound);
  // Starts every server not started yet and waits for those another request is starting
  // (their lists are not known yet), at most `bound` at once.
  asio::awaitable<void> start_lazy(std::size_t bound);
  // Tears every server down at once; resumes when all are down.
  asio::awaitable<void> shutdown();

 private:
  // Runs `work` for each of `targets`, at most `bound` at once; resumes when all have ended.
  asio::awaitable<void> for_each_concurrently(
      std::vector<Downstream*> targets, std::size_t bound,
      std::function<asio::awaitable<void>(Downstream&)> work);

  asio::io_context& io_;
  std::vector<std::unique_ptr<Downstream>> servers_;
  // Views of the servers' own names: find() in constant time, so that start-up stays linear
  // in the configuration (a long autoStart list).
  std::unordered_map<std::string_view, Downstream*> by_name_;
};

}  // namespace sluice::gateway
