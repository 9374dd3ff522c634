#pragma once
// The gateway: every configured Downstream, the catalog over their tools, and the MCP
// server role each client connection gets (meta-tools by default: catalog_search,
// describe, invoke, health, connect_server).
//
// Ownership: owns the Downstreams and the catalog for the life of the process; client
// sessions are owned by their transports. Threading: the one io_context thread.
// shutdown() tears every downstream down (GATEWAY-INVARIANTS P4) and must complete before
// the Gateway is destroyed.
#include "core/version.hpp"
#include "config/gateway_config.hpp"
#include "core/file_identity.hpp"
#include "core/limits.hpp"
#include "gateway/catalog_index.hpp"
#include "core/event.hpp"
#include "gateway/admission.hpp"
#include "gateway/audit.hpp"
#include "gateway/downstream.hpp"
#include "gateway/pending.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <chrono>
#include <list>
#include <set>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::gateway {

struct GatewayOptions {
  core::Limits limits;
  std::string version = core::kVersion;
  // What clients see: the gateway.* meta-tools, and/or every downstream tool directly as
  // `server__tool` (aggregate mode, `--expose all`).
  bool expose_meta = true;
  bool expose_all = false;
  // Aggregate mode with exactly one server: names are shown as the server gives them, with
  // no `server__` prefix (for clients and test suites that expect the server's own names).
  bool passthrough = false;
};

// The outcome of one tool invocation, as the MCP `result` of a tools/call: either the
// downstream's result text spliced through, or a result built by sluice (isError).
struct InvokeOutcome {
  bool answered = true;      // false when the caller cancelled: nothing may be sent
  std::string result_json;   // a CallToolResult object
  bool is_error = false;     // sluice refused or the call failed before a downstream result
};

class Gateway {
 public:
  Gateway(asio::io_context& io, std::shared_ptr<const config::GatewayConfig> config,
          GatewayOptions options);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Logs configuration warnings and starts the autoStart servers (at most
  // sluice.startConcurrency at once).
  void start();
  // Tears every downstream down at once (P4 each); resumes when all are down.
  asio::awaitable<void> shutdown();

  // The server role for one client session (owned by the caller, borrowed by the session).
  std::unique_ptr<mcp::Handler> make_client_handler(std::shared_ptr<mcp::Session> client);

  // gateway.invoke without a client (the `sluice call` command and the handler).
  // Admission (the tool's budget, then `client_budget` when given), then the call; the
  // permits belong to the downstream request (GATEWAY-INVARIANTS §2-§3). `parsed_arguments`,
  // when the caller already holds the arguments' DOM (it must outlive the call), spares a
  // second parse for validation; the text is what is sent.
  // `timeout`: the caller's own, else the server's or the default (call_timeout()).
  asio::awaitable<InvokeOutcome> invoke(std::string_view tool_id, std::string_view arguments_json,
                                        std::optional<std::chrono::milliseconds> timeout,
                                        core::CancelSignal* cancel,
                                        std::string_view client_progress_token,
                                        std::weak_ptr<mcp::Session> client,
                                        Budget* client_budget = nullptr,
                                        std::string client_label = "cli",
                                        const boost::json::value* parsed_arguments = nullptr,
                                        std::string client_request_id = {});

  // gateway.list_pending and gateway.cancel bodies (CallToolResult texts).
  std::string list_pending(std::optional<std::string_view> server) const;
  std::string cancel_call(std::string_view request_id, bool force);
  // Calls admitted and not ended, across every server.
  std::size_t pending_work() const { return pending_.size(); }
  // C7: waits until no admitted call is left, or `bound` passes.
  asio::awaitable<void> drain(std::chrono::milliseconds bound);

  // Governed restarts (GATEWAY-INVARIANTS §4 ds_restart_explicit, ds_refresh): refused while
  // the server (refresh: any server) has work pending unless `force`, and `force` refused
  // when the operator forbids it; single-flight per server. CallToolResult texts.
  asio::awaitable<std::string> restart_server(std::string_view server, bool force,
                                              bool restart);
  asio::awaitable<std::string> refresh(bool force);
  // gw_binary_stale: sluice's own executable was replaced on disk since it started.
  bool binary_stale() const;
  // With failClosedWhenStale and a stale binary: why mutating meta-tools refuse, else empty.
  std::string stale_refusal() const;
  // The timeout of a call to `server` (an inactivity timeout, see GatewayPolicy): `asked`
  // (gateway.invoke's options.timeout_ms, `sluice call --timeout-ms`) when given, else the
  // server's `timeoutMs`, else sluice.callTimeoutMs; never more than sluice.maxCallMs.
  std::chrono::milliseconds call_timeout(const Downstream& server,
                                         std::optional<std::chrono::milliseconds> asked) const;
  // Every `force: true` passes here: empty when allowed, else why it is refused
  // (sluice.forbidForce) and `instead`, what to do without force.
  std::string force_refusal(std::string_view action, std::string_view instead);
  AuditRing& audit() { return audit_; }

  // gateway.health: the gateway's report, every server counted by status, and rows for one
  // page of the servers `query` selects (bounded, so that a large fleet cannot stall the loop
  // or overflow the answer). `sluice servers` asks for every row.
  struct HealthQuery {
    std::optional<std::string> server;  // only this server
    std::optional<std::string> status;  // only servers in this status
    std::size_t offset = 0;             // rows skipped (the previous page's next_cursor)
    std::size_t limit = 100;            // rows at most
  };
  boost::json::object health(const HealthQuery& query) const;
  boost::json::object health() const { return health(HealthQuery{}); }
  // Prometheus text exposition of the counters sluice keeps (calls and outcomes per server,
  // call latency, permits, queue, abandoned work, children, restarts).
  std::string metrics() const;

  // Aggregate mode: starts every server not started yet (their tools must be known to be
  // listed; at most sluice.startConcurrency at once, nothing while fail-closed stale).
  asio::awaitable<void> start_all();
  // One page of tools/list: the meta-tools when exposed, then each server's tools named
  // `server__tool`. `cursor` is the opaque text of a previous nextCursor.
  // Aggregate-mode names: `server__name`, or the bare name with passthrough. resolve_public
  // gives the server and its own name for a public one (server nullptr when none).
  std::string public_name(const Downstream& server, std::string_view name) const;
  std::pair<Downstream*, std::string> resolve_public(std::string_view name);
  // Aggregate mode: prompts/*, resources/*, completion/complete and logging/setLevel, routed
  // to the owning server(s). False when `request` is none of them.
  asio::awaitable<bool> route_aggregate(mcp::IncomingRequest& request);
  std::string aggregate_tools_page(std::string_view cursor, std::size_t page_size,
                                   const std::string& meta_tools_json) const;
  const std::vector<std::unique_ptr<Downstream>>& downstreams() const { return downstreams_; }
  Downstream* find(std::string_view server);
  // notifications/roots/list_changed from a client: passed on to every online server that
  // asked a client for its roots.
  void roots_changed();
  // Every configured server's name, in configuration order.
  std::vector<std::string_view> server_names() const;
  // "no configured server is named X (did you mean Y?); ..." (X shown only when plain).
  std::string unknown_server(std::string_view server) const;
  const core::Limits& limits() const { return options_.limits; }
  const config::GatewayPolicy& policy() const { return config_->policy; }
  const GatewayOptions& options() const { return options_; }
  asio::io_context& io() { return io_; }
  std::vector<pid_t> child_pids() const;

  // Meta-tool bodies: each returns a CallToolResult JSON text.
  std::string catalog_search(const boost::json::object& args) const;
  asio::awaitable<std::string> describe(std::string_view tool_id);
  asio::awaitable<std::string> connect_server(std::string_view server);

 private:
  class ClientHandler;
  // The server and tool a tool id names, starting the server when needed; `refusal`
  // (value-free) when there is none. need_online: a known tool list of a server that is
  // not running does not count.
  struct ResolvedTool {
    Downstream* server = nullptr;
    const ToolEntry* tool = nullptr;
    std::string refusal;
  };
  asio::awaitable<ResolvedTool> resolve_tool(std::string_view tool_id, bool need_online);
  void rebuild_catalog();
  // Runs `work` for each of `targets`, at most `bound` at once; resumes when all have ended.
  asio::awaitable<void> for_each_concurrently(
      std::vector<Downstream*> targets, std::size_t bound,
      std::function<asio::awaitable<void>(Downstream&)> work);
  void relay_progress(std::string_view params);

  // Every call sends sluice's own progress token downstream: its progress extends the
  // call's inactivity timeout, and reaches the client when the client asked for it.
  struct ProgressRoute {
    std::weak_ptr<mcp::Session> client;
    std::string client_token;  // empty: the client did not ask for progress
    std::string client_request_id;
    std::chrono::steady_clock::time_point* last_progress = nullptr;  // the call's
  };

  asio::io_context& io_;
  std::shared_ptr<const config::GatewayConfig> config_;
  GatewayOptions options_;
  std::vector<std::unique_ptr<Downstream>> downstreams_;
  // Every downstream by name (views of their own names): find() in constant time, so that
  // start-up stays linear in the configuration (a long autoStart list).
  std::unordered_map<std::string_view, Downstream*> by_name_;
  CatalogIndex catalog_;
  std::vector<std::pair<std::size_t, std::size_t>> catalog_docs_;  // doc -> (server, tool)
  std::map<std::uint64_t, ProgressRoute> progress_routes_;
  std::list<PendingCall> pending_;
  // Client sessions told when the aggregated tool list changes.
  std::vector<std::weak_ptr<mcp::Session>> list_subscribers_;
  // Where a downstream's request or log goes (aggregate mode): the one client session with
  // calls pending on that server (on its newest running call's stream); else the only open
  // client session; nobody (ambiguous) when several sessions could be the one.
  struct RelayRoute {
    std::shared_ptr<mcp::Session> client;
    std::string related;     // raw id of the client's request, empty when none
    bool ambiguous = false;  // several sessions could be the one: no client
  };
  RelayRoute relay_target(std::string_view server);
  // The server listing resource `uri`, else the first whose template prefix matches it.
  Downstream* owner_of_uri(std::string_view uri);
  asio::awaitable<mcp::Reply> relay_to_client(std::string server, std::string method,
                                              std::string params);
  void relay_notification(std::string_view server, std::string_view method,
                          std::string_view params);
  // Every live client session told `method` (list_changed notifications).
  void broadcast(std::string_view method);
  // resources/subscribe per URI: the client sessions subscribed.
  std::map<std::string, std::vector<std::weak_ptr<mcp::Session>>, std::less<>> subscriptions_;
  AuditRing audit_{256};
  // Admitted calls from admission to their end, in seconds (a Prometheus histogram).
  struct LatencyHistogram {
    static constexpr std::array<double, 14> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                       0.1,   0.25,   0.5,   1,    2.5,   5,
                                                       10,    60};
    std::array<std::uint64_t, kBounds.size()> buckets{};  // non-cumulative
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  LatencyHistogram latency_;
  std::set<std::string> operations_;  // servers with a restart/disconnect under way
  std::optional<core::FileIdentity> self_exe_;  // sluice's own executable at start
  // Cancels every pending call of `server` (all servers when empty); returns how many.
  std::size_t cancel_pending(std::string_view server);
  std::uint64_t next_request_ = 1;
  std::unique_ptr<core::Event> idle_;  // set when pending_ becomes empty during a drain
  struct CallTask;
  asio::awaitable<void> run_call(std::shared_ptr<CallTask> task);
  std::uint64_t next_progress_token_ = 1;
  std::chrono::steady_clock::time_point started_at_;
};

}  // namespace sluice::gateway
