#pragma once
// Fleet: every configured downstream, in configuration order, found by name in constant
// time, and the starts and stops of many of them at once (autoStart, the aggregate
// listing's start of every lazy server, shutdown). Starts run concurrently up to a bound;
// the shutdown tears every server down at once, so N servers cost about one start or one
// teardown grace, not N of them.
//
// A live reload (reload.hpp) adds servers, withdraws removed ones and replaces changed ones.
//
// Ownership: owns every Downstream it ever held for the life of the gateway: one that left
// the fleet (withdrawn or replaced) is kept, retired, until the gateway is destroyed, since a
// coroutine (a call, an operator's restart) may still point at it. Threading: the gateway's
// loop thread. Guarantees: shutdown() resumes only when every server, retired ones included,
// is down (invariant P4 each); a start or stop that throws is logged (its type only) and
// counts as done, so a batch cannot hang on it. servers() changes only through add(),
// withdraw() and replace(): code that iterates it across a suspension takes a copy first.
#include "config/gateway_config.hpp"
#include "core/limits.hpp"
#include "gateway/downstream/downstream.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice::gateway {

// The server and tool a tool id (`server::tool`) names; `refusal` (value-free, with what to
// do instead) when there is none.
struct ResolvedTool {
  Downstream* server = nullptr;
  const ToolEntry* tool = nullptr;
  std::string refusal;
  // Set when the operator's policy withholds the tool or its server: the server and tool
  // names (as core::show_name shows them) for the audit record of the refusal.
  std::optional<std::pair<std::string, std::string>> withheld = std::nullopt;
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
  // The processes of every server, retired ones included.
  std::vector<pid_t> child_pids() const;
  // How resolve_tool treats a server that is not running.
  enum class Need {
    online,  // start it: only its live tool list counts (a call)
    listed,  // any known list serves (this run's or the catalog cache's); start only without
  };
  // The tool `tool_id` names, starting its server as `need` says. The entry is valid until
  // the server's tool list next changes (the caller's next suspension).
  asio::awaitable<ResolvedTool> resolve_tool(std::string_view tool_id, Need need) const;
  // resolve_tool's answer when it needs no wait (the server online, or refused); nullopt when
  // the server must be started or waited for first: resolve_tool then. A call to a running
  // server resolves its tool without a coroutine frame.
  std::optional<ResolvedTool> resolve_tool_now(std::string_view tool_id, Need need) const;
  // notifications/roots/list_changed from a client: passed on to every server that asked a
  // client for its roots.
  void roots_changed();

  // Starts the servers named in `names` (unknown names are counted in one warning), at most
  // `bound` at once, in the background.
  void start_named(const std::vector<std::string>& names, std::size_t bound);
  // Starts every server not started yet and waits for those another request is starting
  // (their lists are not known yet), at most `bound` at once.
  asio::awaitable<void> start_lazy(std::size_t bound);
  // Tears every server down at once, retired ones included; resumes when all are down.
  asio::awaitable<void> shutdown();

  // Live configuration (restart path ds_config_reload). A new lazy server at the end.
  Downstream& add(config::ServerConfig config);
  // Takes the server `name` out of the fleet (it is retired, not stopped: that is the
  // caller's); resolve_tool then says it was removed. nullptr when there is none.
  Downstream* withdraw(std::string_view name);
  // A new lazy Downstream built from `config` in the place of the server of that name (the
  // old one is retired); nullptr when there is none.
  Downstream* replace(config::ServerConfig config);
  // Servers that left the fleet, oldest first.
  const std::vector<std::unique_ptr<Downstream>>& retired() const { return retired_; }

 private:
  // resolve_tool before the start: the server `tool_id` names, or nullptr and the refusal
  // in `r`.
  Downstream* tool_server(std::string_view tool_id, std::string_view server,
                          std::string_view tool_name, ResolvedTool& r) const;
  // resolve_tool after it: the tool of `d` (online or not, as the start left it), or the
  // refusal, in `r`.
  void serve_tool(Downstream& d, std::string_view tool_name, Need need, bool online,
                  ResolvedTool& r) const;
  // Runs `work` for each of `targets`, at most `bound` at once; resumes when all have ended.
  asio::awaitable<void> for_each_concurrently(
      std::vector<Downstream*> targets, std::size_t bound,
      std::function<asio::awaitable<void>(Downstream&)> work);

  std::unique_ptr<Downstream> make(config::ServerConfig config) const;

  asio::io_context& io_;
  const core::Limits& limits_;
  const config::GatewayPolicy& policy_;  // the startup configuration's, for new servers too
  EventsFor events_for_;
  std::vector<std::unique_ptr<Downstream>> servers_;
  std::vector<std::unique_ptr<Downstream>> retired_;
  // Names withdrawn and not added again: resolve_tool refuses them as removed.
  std::set<std::string, std::less<>> removed_;
  // Views of the servers' own names: find() in constant time, so that start-up stays linear
  // in the configuration (a long autoStart list).
  std::unordered_map<std::string_view, Downstream*> by_name_;
};

}  // namespace sluice::gateway
