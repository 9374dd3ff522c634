#pragma once
// One downstream MCP server, composed of three parts a newcomer can name:
// - its phase (PhaseMachine: lazy -> starting -> online, restarting, failed, idle_stopped or
//   offline), its restart policy (RestartPolicy: a pure function of the time it is given) and
//   its idle watch (ds_idle_stop, idle.cpp: a timer on the loop, no cost per call);
// - its connection (DownstreamTransport; a stdio child under process supervision today)
//   and the MCP client role over it (DownstreamPeer: handshake, listings, calls);
// - the admission of its tools (budgets per tool and the write lane).
// Start is single-flight: concurrent callers share one spawn and one handshake.
//
// Ownership: the Gateway owns every Downstream for the life of the process. A Downstream
// owns its peer, its current transport (one per generation) and its admissions; shutdown()
// runs the orderly teardown (invariant P4) and the destructor the synchronous remainder (the
// child's SIGKILL and reap). Threading: the gateway's io_context thread only.
#include "config/gateway_config.hpp"
#include "core/clock.hpp"
#include "core/event.hpp"
#include "core/limits.hpp"
#include "gateway/calls/admission.hpp"
#include "gateway/downstream/peer.hpp"
#include "gateway/downstream/phase.hpp"
#include "gateway/downstream/restart_policy.hpp"
#include "gateway/downstream/transport.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::gateway {

namespace asio = boost::asio;

class Downstream {
 public:
  Downstream(asio::io_context& io, config::ServerConfig config, const core::Limits& limits,
             const config::GatewayPolicy& policy, DownstreamEvents events);
  ~Downstream();
  Downstream(const Downstream&) = delete;
  Downstream& operator=(const Downstream&) = delete;

  const std::string& name() const { return config_.name; }
  const config::ServerConfig& config() const { return config_; }
  // A disabled or untrusted server's phase and last error (why it does not start) stay as
  // configured, whatever an operator's stop or the shutdown does to it.
  Phase phase() const { return phase_.phase(); }
  const std::string& last_error() const {
    return config_.disabled || config_.untrusted ? disabled_reason_ : last_error_;
  }
  // The class of the transport's failure behind last_error (a remote server's tls_failed,
  // auth_required, connect_failed, http_error, session_expired...); empty when none.
  const std::string& failure_class() const { return failure_class_; }
  const std::string& protocol_version() const { return peer_.protocol_version(); }
  bool tools_known() const { return peer_.tools_known(); }
  // Takes the catalog cache's lists when the server has listed nothing in this run (it is
  // lazy and its tools are unknown); whether it took them. `summarize`: see
  // DownstreamPeer::seed.
  bool seed(const store::ServerListing& listing, const ToolSummarizer& summarize);
  // The MCP client role: what it listed, when, and whether from the cache.
  const DownstreamPeer& peer() const { return peer_; }
  const std::vector<ToolEntry>& tools() const { return peer_.tools(); }
  const ToolEntry* find_tool(std::string_view name) const;

  // Starts the server when it is not online (single-flight); true when online. A server
  // held after a foreign kill or after too many restarts starts again only when `explicit_`
  // (an operator's gateway.connect_server); a failed start is retried after its backoff.
  asio::awaitable<bool> ensure_started(bool explicit_request = false);
  // ensure_started's answer when it needs no start and no wait (the server online, or not
  // to be started), counted as it counts it; nullopt, counting nothing, when it would start
  // the server or wait for a start.
  std::optional<bool> started_now();

  // Why the server is held, when it is: it waits for an explicit connect.
  bool held() const { return held_; }
  // The signal of a kill sluice did not send (ds_external_kill), else 0.
  int external_signal() const { return external_signal_; }
  std::size_t restarts() const { return restarts_; }
  std::uint64_t generation() const { return generation_; }
  // A server that takes the place of an earlier one of the same name (a reload) counts its
  // generations on from that one's, so that no two of them share an owner token (P3). Before
  // its first start only.
  void continue_generations_after(std::uint64_t generation) {
    if (generation_ == 0) generation_ = generation;
  }

  // tools/call with the arguments spliced verbatim. `progress_token` (JSON text) is sent
  // in _meta when non-empty; `caller`: what a 2026-07-28 server is told of the caller.
  asio::awaitable<mcp::Reply> call_tool(std::string_view tool, std::string_view arguments_json,
                                        std::chrono::milliseconds timeout,
                                        core::CancelSignal* cancel, std::string_view progress_token,
                                        const mcp::CallTracking* tracking = nullptr,
                                        CallerMeta caller = {});

  // Prompts, resources and resource templates (each item's JSON text as listed), known when
  // the server offers them; listed after the tools.
  const std::vector<std::string>& prompts() const { return peer_.prompts(); }
  const std::vector<std::string>& resources() const { return peer_.resources(); }
  const std::vector<std::string>& resource_templates() const { return peer_.resource_templates(); }
  bool offers(std::string_view capability) const { return peer_.offers(capability); }
  // Entries of the server's last listing of each kind that were malformed and skipped.
  // Downstream output is untrusted input.
  const SkippedEntries& skipped_entries() const { return peer_.skipped_entries(); }
  // Answers its connection dropped because they matched no pending request (a second answer
  // to one request included: the first wins), on its current connection.
  std::uint64_t unmatched_responses() const { return peer_.unmatched_responses(); }
  // Whether this server asked the client for its roots (roots/list) in this generation or an
  // earlier one: it is told when the client's roots change.
  bool asked_for_roots() const { return peer_.asked_for_roots(); }
  // Sends one notification to the server while its session is up (dropped otherwise).
  void notify(std::string_view method, std::string_view params);
  // Sends one request as it is and returns the answer (aggregate-mode routing).
  asio::awaitable<mcp::Reply> forward(std::string method, std::string params,
                                      std::chrono::milliseconds timeout,
                                      core::CancelSignal* cancel);

  // The admission of one tool (created at first use with its resolved budget).
  ToolAdmission& admission(const ToolEntry& tool);
  // A1: the tool's override, else the server's default, else the class default.
  std::size_t resolved_budget(const ToolEntry& tool) const;
  // A1: the lane that serialises calls to tools without readOnlyHint across a stdio server
  // (capacity sluice.writesPerServer, or the server's own `writes`); nullptr for a tool it
  // does not cover (read-only, a budget the operator set for the tool or the server, or a
  // remote server). Created at first use.
  Budget* write_lane(const ToolEntry& tool);
  // The lane when one was created, for reports.
  const Budget* write_lane() const { return write_lane_.get(); }
  // Every tool's admission so far, by tool name.
  const std::map<std::string, std::unique_ptr<ToolAdmission>>& admissions() const {
    return admissions_;
  }
  // Calls admitted here and not yet ended (abandoned ones included).
  std::uint64_t work_in_flight() const;

  // Orderly teardown (P4): close stdin, grace, SIGTERM group, grace, SIGKILL group, reap,
  // close every pipe. The phase becomes `offline`.
  asio::awaitable<void> shutdown();
  // An operator's stop (disconnect_server, the first half of restart_server): the same
  // teardown, then `offline` and held until an explicit start. Config is not touched.
  asio::awaitable<void> stop(std::string reason);
  // ds_refresh: lists the tools again when online; false when it could not.
  asio::awaitable<bool> relist();
  // ds_stale_code: the executable changed on disk since this generation was spawned.
  bool executable_changed() const { return transport_ && transport_->code_changed(); }

  pid_t pid() const { return transport_ ? transport_->pid() : -1; }

  // ds_idle_stop (idle.cpp). The idle timeout in force: GatewayPolicy::index_idle while the
  // server is marked index-only, else its entry's `idleTimeoutMs`, else the default (which
  // autoStart servers do not take); nullopt when it is never idle-stopped.
  std::optional<std::chrono::milliseconds> idle_timeout() const;
  // The indexer started this server only to list it: until its first call it is stopped after
  // GatewayPolicy::index_idle of idleness instead of its idle timeout.
  void mark_index_only();
  bool index_only() const { return index_only_; }
  // When it was last idle-stopped (wall clock, for display); nullopt when never.
  const std::optional<std::chrono::system_clock::time_point>& idle_stopped_at() const {
    return idle_stopped_at_;
  }

 private:
  asio::awaitable<bool> start();
  asio::awaitable<bool> start_impl();
  // The connection of a new generation (the one place that knows the kinds of transport).
  core::Result<std::unique_ptr<DownstreamTransport>> open_transport();
  // Connects the peer over transport_ and watches both ways the connection can end.
  void connect_peer();
  asio::awaitable<bool> handshake_and_list();
  void start_failed(std::string reason);
  void on_list_changed(std::string_view method);
  // A live listing of the tools succeeded: the gateway rebuilds its views and stores it.
  void listed_now();
  asio::awaitable<void> relist_other(std::string notification);
  asio::awaitable<void> teardown(bool orderly);
  // The child ended while serving (exit, crash, closed stdout, or a foreign kill): starts
  // the one recovery of this end, on_unexpected_end.
  void handle_unexpected_end(std::string reason);
  asio::awaitable<void> on_unexpected_end(std::string reason);
  // Holds the server after a kill sluice did not send (ds_external_kill).
  void hold_after_foreign_kill(int signal);
  asio::awaitable<void> restart_with_backoff();
  // Records why the server is not serving and logs it; the phase is the caller's to move.
  void record_error(std::string reason);
  void fail(std::string reason);
  // Why a server whose env sets a refused variable is not started (config::env_refusal).
  std::string env_refused_reason() const;
  // Moves to `to` unless the phase is one set at construction (unsupported, disabled).
  void settle_offline();
  // Identifies this generation's processes (and descendants that keep their environment).
  std::string spawn_token() const;

  // The idle watch (idle.cpp): while online with an idle timeout, a tick every quarter of it
  // compares what the server did since the last tick (frames received, requests sent, starts
  // asked for, whether it was busy); unchanged and not busy for the whole timeout, it takes
  // ds_idle_stop.
  struct ActivityMark {
    std::uint64_t frames_in = 0;
    std::uint64_t requests = 0;
    bool busy = false;
    bool operator==(const ActivityMark&) const = default;
  };
  ActivityMark activity_mark() const;
  // A call pending (queued, in flight or abandoned), a request unanswered, or a subscription.
  bool busy() const;
  void watch_idle();
  void schedule_idle_tick();
  void idle_tick(std::uint64_t generation);
  asio::awaitable<void> idle_stop();

  asio::io_context& io_;
  config::ServerConfig config_;
  const core::Limits& limits_;
  const config::GatewayPolicy& policy_;
  DownstreamEvents events_;
  std::map<std::string, std::unique_ptr<ToolAdmission>> admissions_;
  std::unique_ptr<Budget> write_lane_;

  PhaseMachine phase_;
  RestartPolicy restart_policy_;
  DownstreamPeer peer_;
  std::unique_ptr<DownstreamTransport> transport_;
  std::string last_error_;
  std::string failure_class_;
  std::string disabled_reason_;  // set when config_.disabled or config_.untrusted
  std::uint64_t generation_ = 0;
  std::size_t restarts_ = 0;
  int external_signal_ = 0;
  int last_foreign_signal_ = 0;  // of the generation torn down last

  // Single-flight guards: one start, one teardown, one end handling, one relisting.
  std::unique_ptr<core::Event> started_;
  std::unique_ptr<core::Event> teardown_done_;
  std::unique_ptr<core::Event> restart_done_;
  std::unique_ptr<core::Timer> backoff_timer_;
  bool tearing_down_ = false;
  bool shutting_down_ = false;
  bool handling_end_ = false;  // on_unexpected_end runs
  bool relist_pending_ = false;
  bool held_ = false;

  // The idle watch. requests_ counts requests sent and starts asked for (activity); the
  // timer's handler holds `alive_` weakly, so a tick queued at destruction does nothing.
  core::Timer idle_timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
  ActivityMark idle_mark_;
  core::Clock::time_point idle_since_{};
  std::uint64_t requests_ = 0;
  bool index_only_ = false;
  std::optional<std::chrono::system_clock::time_point> idle_stopped_at_;
};

}  // namespace sluice::gateway
