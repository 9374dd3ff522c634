#pragma once
// The gateway as a composition root: it builds its parts, wires the events between them,
// and gives each client connection its MCP server role. The parts:
// - Fleet (fleet.hpp): every configured Downstream, found by name; batch starts and stops;
// - Catalog (catalog/): the search index over their tools, cards and descriptions, the
//   Indexer that lists servers whose tools are not known yet, and the catalog cache
//   (store::CatalogStore in the state directory) that seeds servers not started yet and keeps
//   every live listing (catalog_cache.cpp);
// - CallLedger and the call path (calls/, invoke.cpp): admission, every call from admission
//   to its end, progress routes, gateway.cancel and list_pending;
// - ClientRelay (aggregate/client_relay.hpp): client sessions, subscriptions, and what
//   downstreams send to clients;
// - InputBridge (bridge/input_bridge.hpp): 2026-07-28 requests whose 2025 downstream asks
//   the client for input, answered with input_required and resumed by the retry;
// - AggregateRouter (aggregate/router.hpp): `server__name` names, lists and routes (every
//   tool with `--expose all`; prompts and resources in both modes);
// - Governance (governance.hpp): governed restarts, refresh, force, the stale binary;
// - ConfigReload (reload.hpp): live configuration (watch, reread, apply to the fleet);
// - AuditRing (audit.hpp), the persistent audit log it writes to (store::AuditLog), and the
//   reports (report/: health, metrics);
// - the meta-tool table (meta/) and ClientHandler (client_handler.cpp) serve clients;
// - the operator's policy (policy/): withheld meta-tools, and ResultGuard (redaction and
//   output caps of tool results).
//
// Ownership: owns every part for the life of the process; client sessions are owned by
// their transports. Threading: the one io_context thread. shutdown() tears every downstream
// down (invariant P4) and must complete before the Gateway is destroyed.
#include "config/gateway_config.hpp"
#include "core/limits.hpp"
#include "core/version.hpp"
#include "gateway/aggregate/client_relay.hpp"
#include "gateway/aggregate/router.hpp"
#include "gateway/audit.hpp"
#include "gateway/bridge/input_bridge.hpp"
#include "gateway/calls/admission.hpp"
#include "gateway/calls/ledger.hpp"
#include "gateway/calls/task_table.hpp"
#include "gateway/catalog/catalog.hpp"
#include "gateway/catalog/indexer.hpp"
#include "gateway/catalog/synonym_lookup.hpp"
#include "gateway/downstream/downstream.hpp"
#include "gateway/fleet.hpp"
#include "gateway/governance.hpp"
#include "gateway/policy/result_guard.hpp"
#include "gateway/reload.hpp"
#include "mcp/session.hpp"
#include "store/audit_log.hpp"
#include "store/catalog_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
  // The state directory: the catalog cache (catalog.sqlite3) lives here. Empty: no cache
  // (every server's tools are known only once it has listed them in this run).
  std::filesystem::path state_dir;
  // Where remote servers' OAuth tokens are kept (the state directory, --no-cache or not).
  // Empty: no OAuth (a protected server answers auth_required).
  std::filesystem::path tokens_dir;
  // The persistent audit log (store/audit_log.hpp): its file, empty for none (`sluice serve`
  // and `sluice call` set it), and why there is none (shown in health).
  std::optional<store::AuditFileOptions> audit_file;
  std::string audit_off_reason = "not kept by this command";
  // Live configuration: discover() again as at start (flags applied). Empty: the files are
  // never reread (one-shot commands).
  std::function<std::shared_ptr<const config::GatewayConfig>()> rediscover;
  // Called at each client session's initialize with the clientInfo name and version it sent
  // (empty when absent): `sluice serve` shows them in `sluice status`. Empty: not called.
  std::function<void(std::string_view name, std::string_view version)> on_client_info;
};

// The outcome of one tool invocation, as the MCP `result` of a tools/call: either the
// downstream's result text spliced through, or a result built by sluice (isError).
struct InvokeOutcome {
  bool answered = true;     // false when the caller cancelled: nothing may be sent
  std::string result_json;  // a result built here; empty while `downstream` holds the result
  bool is_error = false;    // sluice refused or the call failed before a downstream result
  // A JSON-RPC error object to answer with instead of a result: the server needs a client
  // capability the caller did not declare (-32021), which a tool error would hide.
  std::string error_json{};
  // The server answered with a JSON-RPC error (its code, a value-free message): what a task
  // sluice runs reports as its error (status failed), where a call gets a tool error.
  std::string protocol_error_json{};
  // The downstream's answer whose `result` this is, kept whole until the result is rewritten
  // (redacted, cut, a task's id put in): the result is spliced from the frame it came in,
  // never copied out of it on the way.
  std::optional<rpc::Message> downstream{};

  // The result: a CallToolResult object (or a CreateTaskResult: tasks.cpp).
  std::string_view result() const { return downstream ? downstream->result() : result_json; }
  // The result as a string of its own, to rewrite (taken out of the downstream's frame).
  std::string& result_text() {
    if (downstream) {
      result_json = std::string(downstream->result());
      downstream.reset();
    }
    return result_json;
  }
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
  // Aggregate mode: starts every server not started yet (their tools must be known to be
  // listed; at most sluice.startConcurrency at once, nothing while fail-closed stale).
  asio::awaitable<void> start_all();
  // Tears every downstream down at once (P4 each); resumes when all are down.
  asio::awaitable<void> shutdown();

  // The server role for one client session (owned by the caller, borrowed by the session).
  std::unique_ptr<mcp::Handler> make_client_handler(std::shared_ptr<mcp::Session> client);

  // One gateway.invoke (the handler's, aggregate mode's and `sluice call`'s). The views and
  // pointers are borrowed: they must outlive the co_await of invoke().
  struct InvokeRequest {
    std::string_view tool_id{};         // server::tool
    std::string_view arguments_json{};  // sent as it is
    // The caller's own timeout, else the server's or the default (call_timeout()).
    std::optional<std::chrono::milliseconds> timeout{};
    core::CancelSignal* cancel = nullptr;  // the caller's cancel
    std::string_view progress_token{};     // the client's (JSON text); empty: none asked
    std::weak_ptr<mcp::Session> client{};  // empty without a client
    Budget* client_budget = nullptr;       // the client session's cap (invariant A1)
    std::string client_label = "cli";
    // The arguments' DOM when the caller already holds it: spares a second parse for
    // validation.
    const boost::json::value* parsed_arguments = nullptr;
    std::string client_request_id{};  // the raw id of the client's request
    // The caller a task the server creates is bound to (a 2026-07-28 caller that declared the
    // tasks extension, tasks.cpp); empty: the call runs without tasks.
    std::string task_caller{};
    // A 2026-07-28 caller's own _meta logLevel, told to a 2026-07-28 server; empty: none.
    std::string_view log_level{};
  };
  // Validation, admission (the tool's budget, the server's write lane, then the client's),
  // then the call; the permits belong to the downstream request (invariants A1-A3, C1-C4):
  // the call is a Call (calls/call.hpp).
  asio::awaitable<InvokeOutcome> invoke(InvokeRequest request);

  // gateway.list_pending and gateway.cancel bodies (CallToolResult texts).
  std::string list_pending(std::optional<std::string_view> server) const;
  std::string cancel_call(std::string_view request_id, bool force);

  // The tasks extension (tasks.cpp). tasks/get, tasks/update and tasks/cancel of a 2026-07-28
  // caller (`caller`: whom its tasks are bound to; `declared`: its clientCapabilities declare the
  // extension): refused with -32021 when not declared and -32602 for a task id it does not hold,
  // else sent to the server that runs the task under the server's own id, the answer carrying the
  // gateway's id (a completed task's result guarded as any tool result).
  asio::awaitable<void> serve_task_request(mcp::IncomingRequest& request, std::string caller,
                                           bool declared);
  // Which tasks a stateless tools/call of `tool` (a listed name, every tool exposed) may make:
  // the tool's execution.taskSupport ("optional", "required"; empty: none), and whether its
  // server brokers tasks itself (a 2026-07-28 server offering the extension) or sluice runs the
  // call as a task (start_task).
  struct TaskSupport {
    TaskSupportLevel support = TaskSupportLevel::forbidden;
    bool server_runs = false;
  };
  asio::awaitable<TaskSupport> task_support(std::string tool);
  // A stateless tools/call run as a task by sluice itself (its server has no tasks extension):
  // the call runs in an exchange of the InputBridge, the caller gets a CreateTaskResult at once.
  asio::awaitable<void> start_task(mcp::IncomingRequest& request, std::string caller);
  // gateway.cancel of a task id (an operator's): tasks/cancel sent to its server; a task not
  // ended yet only with force.
  asio::awaitable<std::string> cancel_task(std::string task_id, bool force);
  const TaskTable& tasks() const { return tasks_; }
  // Whom a task `request` makes would be bound to: its 2026-07-28 caller (an exchange's
  // client key, InputBridge) when its clientCapabilities declare the tasks extension; empty
  // otherwise (the call runs without tasks).
  static std::string task_caller(const mcp::IncomingRequest& request);
  // The (property, header name) pairs the tool clients call `tool` asks to see as Mcp-Param
  // headers (its x-mcp-header), with every tool exposed; empty otherwise.
  std::vector<std::pair<std::string, std::string>> param_headers(std::string_view tool) const;
  // Calls admitted and not ended, across every server.
  std::size_t pending_work() const { return calls_.size(); }
  // C7: waits until no admitted call is left, or `bound` passes.
  asio::awaitable<void> drain(std::chrono::milliseconds bound) { return calls_.drain(bound); }

  // The timeout of a call to `server` (an inactivity timeout, see GatewayPolicy): `asked`
  // (gateway.invoke's options.timeout_ms, `sluice call --timeout-ms`) when given, else the
  // server's `timeoutMs`, else sluice.callTimeoutMs; never more than sluice.maxCallMs.
  std::chrono::milliseconds call_timeout(const Downstream& server,
                                         std::optional<std::chrono::milliseconds> asked) const;
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

  // Resumes once the catalog cache has been read and its lists seeded into the servers not
  // started yet (at once without a cache; at most sluice.indexWaitMs).
  asio::awaitable<void> catalog_ready();
  // Indexing on demand: starts the servers whose tools are not known (of `server` only, when
  // given), at most sluice.indexConcurrency at once, and resumes when they have listed or
  // sluice.indexWaitMs has passed; servers another search is indexing are waited for too.
  // Nothing is started while fail-closed stale.
  asio::awaitable<void> index_missing(std::optional<std::string_view> server);
  // Brings the catalog up to date before a search: rebuilds the index when a list changed
  // (reading no WordNet file on the loop), and has the WordNet synonyms of words met for the
  // first time looked up on a worker; the next search after that lookup uses them.
  void prepare_catalog();
  // Resumes once every listing stored before the call is written (`sluice index`).
  asio::awaitable<void> flush_cache();
  // The whole tool object the catalog cache holds for `tool` of `server` (whose entry is a
  // summary), read off the loop; nothing when the cache no longer holds it.
  asio::awaitable<std::optional<std::string>> cached_tool(const Downstream& server,
                                                          std::string tool);
  // The catalog cache, or nullptr without a state directory.
  const store::CatalogStore* cache() const { return cache_.get(); }

  // The parts.
  Fleet& fleet() { return fleet_; }
  const Fleet& fleet() const { return fleet_; }
  Catalog& catalog() { return catalog_; }
  const Catalog& catalog() const { return catalog_; }
  Indexer& indexer() { return indexer_; }
  const SynonymLookup& synonyms() const { return synonyms_; }
  ClientRelay& clients() { return clients_; }
  InputBridge& bridge() { return bridge_; }
  const InputBridge& bridge() const { return bridge_; }
  AggregateRouter& aggregate() { return aggregate_; }
  const AggregateRouter& aggregate() const { return aggregate_; }
  Governance& governance() { return governance_; }
  const Governance& governance() const { return governance_; }
  AuditRing& audit() { return audit_; }
  // Redaction and output caps of tool results (policy/result_guard.hpp).
  const ResultGuard& results() const { return results_; }
  // The tools/list result text of the meta-tools the policy does not withhold (metaTools).
  const std::string& meta_tools_list() const { return meta_tools_list_; }
  // Why the policy withholds meta-tool `name` (value-free, naming the rule); empty if it
  // does not.
  std::string meta_tool_denial(std::string_view name) const;
  // How long the aggregate tool list stays valid, for a 2026-07-28 client (ttlMs): the least
  // that every server's own listing has left of the ttlMs it said (a 2026 server's caching
  // hint); 0 when a server said none, or in meta mode.
  std::int64_t tools_ttl_ms() const;
  // The persistent audit log, or nullptr without one.
  const store::AuditLog* audit_log() const { return audit_log_.get(); }
  ConfigReload& reload() { return reload_; }
  const ConfigReload& reload() const { return reload_; }

  const core::Limits& limits() const { return options_.limits; }
  const config::GatewayPolicy& policy() const { return config_->policy; }
  const GatewayOptions& options() const { return options_; }
  asio::io_context& io() { return io_; }

 private:
  class ClientHandler;
  // The handler of an exchange's bridge session (InputBridge); `task`: it runs a task.
  std::unique_ptr<mcp::Handler> make_bridge_handler(std::shared_ptr<mcp::Session> session,
                                                    bool task);
  // tasks/get, tasks/update or tasks/cancel of a task sluice runs itself (start_task).
  void serve_own_task(mcp::IncomingRequest& request, BrokeredTask& task);
  // Answers `request` (a tasks request relayed to server `d`) with its server's `reply`, under
  // the gateway's task id.
  void answer_server_task(mcp::IncomingRequest& request, const BrokeredTask& task,
                          const Downstream& d, mcp::Reply reply);
  static std::unique_ptr<store::AuditLog> open_audit_log(const GatewayOptions& options);
  // What server `server` reports, wired to the parts that handle it.
  DownstreamEvents events_for(const config::ServerConfig& server);
  void relay_progress(std::string_view params);
  // What a live reload asks of the gateway: the reread, and the views rebuilt after it.
  ConfigReload::Hooks reload_hooks();
  // Reads the catalog cache and seeds the servers it has lists for (at start, and after a
  // configuration change added or replaced servers).
  asio::awaitable<void> load_cache();
  // Tells the clients that the lists they see changed (a reload, a cache load).
  void lists_changed();
  // Stores what `server` listed live (DownstreamEvents::listed).
  void store_listing(std::string_view server);
  // A CreateTaskResult `answer` of `server`'s tool `tool_label` for `caller` (empty: it did not
  // declare the tasks extension; `client_label`: as list_pending shows it): the
  // task held (tasks_) and the result given the gateway's id; refused when the caller did not
  // ask for a task or the table is full (the server is then told to cancel it).
  InvokeOutcome broker_task(Downstream& server, const std::string& tool_label,
                            const std::string& caller, const std::string& client_label,
                            InvokeOutcome answer);

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
  // Before the ring, which writes to it, and destroyed after it (drains at most its bound).
  std::unique_ptr<store::AuditLog> audit_log_ = open_audit_log(options_);
  AuditRing audit_{options_.limits.audit_ring_events, audit_log_.get()};
  // Every admitted call from admission to its end, and the latency of those that ended.
  CallLedger calls_{io_};
  Fleet fleet_;
  Catalog catalog_{fleet_};
  Indexer indexer_{io_};
  SynonymLookup synonyms_{io_, [this] { catalog_.invalidate(); }};
  std::unique_ptr<store::CatalogStore> cache_;
  core::Event cache_loaded_{io_};
  ClientRelay clients_{calls_, config_->policy, options_.limits};
  ConfigReload reload_{io_, fleet_, calls_, audit_, config_, reload_hooks()};
  Governance governance_{fleet_, calls_, catalog_, audit_, config_->policy, &reload_};
  AggregateRouter aggregate_{*this};
  InputBridge bridge_{io_, options_.limits, [this](std::shared_ptr<mcp::Session> s, bool task) {
                        return make_bridge_handler(std::move(s), task);
                      }};
  ResultGuard results_{config_->policy, options_.limits.max_json_depth};
  TaskTable tasks_;
  std::string meta_tools_list_;  // built at construction (policy.*.metaTools applied)
  std::map<std::uint64_t, ProgressRoute> progress_routes_;
  std::uint64_t next_progress_token_ = 1;
  std::chrono::steady_clock::time_point started_at_;
};

}  // namespace sluice::gateway
