#pragma once
// One downstream MCP server: its configuration, its child process and the client-role
// session to it, its tool list, and its lifecycle (lazy -> starting -> online, failed or
// offline). Start is single-flight: concurrent callers share one spawn and one handshake.
//
// Ownership: the Gateway owns every Downstream for the life of the process. A Downstream
// owns its Child (process group), the stdio stream over the child's pipes, the stderr
// drain and the Session; shutdown() runs the orderly teardown (GATEWAY-INVARIANTS P4) and
// the destructor the synchronous remainder (the Child's SIGKILL and reap).
// Threading: the gateway's io_context thread only.
#include "config/gateway_config.hpp"
#include "core/event.hpp"
#include "core/limits.hpp"
#include "core/schema.hpp"
#include "gateway/pending.hpp"
#include "mcp/session.hpp"
#include "process/child.hpp"
#include "transport/fd_stream.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <sys/stat.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::gateway {

namespace asio = boost::asio;

// `disabled`: `"disabled": true` in its config entry; never started by any path.
enum class Status {
  lazy,
  starting,
  online,
  restarting,
  failed,
  offline,
  unsupported_transport,
  disabled
};
std::string_view to_string(Status s);

struct ToolEntry {
  std::string name;
  std::string title;
  std::string description;
  std::string raw;  // the tool object exactly as the downstream listed it
  bool read_only = false;
  std::optional<core::schema::Schema> validator;  // unset when the schema did not compile
  std::string schema_problem;                      // value-free, when it did not compile
};

// What the Downstream tells the gateway.
struct DownstreamEvents {
  std::function<void()> tools_changed;
  // A notifications/progress from the downstream (params text as sent).
  std::function<void(std::string_view params)> progress;
  // A request from the downstream to the client (sampling, elicitation, roots): relayed to
  // a client in aggregate mode. Unset: answered "method not found".
  std::function<asio::awaitable<mcp::Reply>(std::string method, std::string params)> relay_request;
  // Any other notification the client should see (notifications/message), params as sent.
  std::function<void(std::string_view method, std::string_view params)> relay_notification;
  // A lifecycle event for the audit: kind (crash, external_kill, auto_restart), outcome.
  std::function<void(std::string_view kind, std::string_view outcome, std::uint64_t generation)>
      lifecycle;
};

class Downstream {
 public:
  Downstream(asio::io_context& io, config::ServerConfig config, const core::Limits& limits,
             const config::GatewayPolicy& policy, DownstreamEvents events);
  ~Downstream();
  Downstream(const Downstream&) = delete;
  Downstream& operator=(const Downstream&) = delete;

  const std::string& name() const { return config_.name; }
  const config::ServerConfig& config() const { return config_; }
  // A disabled server's status and last error (why it does not start) stay as configured,
  // whatever an operator's stop or the shutdown does to it.
  Status status() const { return config_.disabled ? Status::disabled : status_; }
  const std::string& last_error() const {
    return config_.disabled ? disabled_reason_ : last_error_;
  }
  const std::string& protocol_version() const { return protocol_version_; }
  bool tools_known() const { return tools_known_; }
  const std::vector<ToolEntry>& tools() const { return tools_; }
  const ToolEntry* find_tool(std::string_view name) const;

  // Starts the server when it is not online (single-flight); true when online. A server
  // held after a foreign kill or after too many restarts starts again only when `explicit_`
  // (an operator's gateway.connect_server); a failed start is retried after its backoff.
  asio::awaitable<bool> ensure_started(bool explicit_request = false);

  // Why the server is held, when it is: it waits for an explicit connect.
  bool held() const { return held_; }
  // The signal of a kill sluice did not send (ds_external_kill), else 0.
  int external_signal() const { return external_signal_; }
  std::size_t restarts() const { return restarts_; }
  std::uint64_t generation() const { return generation_; }

  // tools/call with the arguments spliced verbatim. `progress_token` (JSON text) is sent
  // in _meta when non-empty.
  asio::awaitable<mcp::Reply> call_tool(std::string_view tool, std::string_view arguments_json,
                                        std::chrono::milliseconds timeout,
                                        core::CancelSignal* cancel,
                                        std::string_view progress_token,
                                        const mcp::CallTracking* tracking = nullptr);

  // Prompts, resources and resource templates (each item's JSON text as listed), known when
  // the server offers them; listed after the tools.
  const std::vector<std::string>& prompts() const { return prompts_; }
  const std::vector<std::string>& resources() const { return resources_; }
  const std::vector<std::string>& resource_templates() const { return resource_templates_; }
  bool offers(std::string_view capability) const;
  // Entries of the server's last listing of each kind that were malformed and skipped: not
  // an object, or without a non-empty string name (tools, prompts), uri (resources) or
  // uriTemplate (templates) of its own. Downstream output is untrusted input.
  struct SkippedEntries {
    std::size_t tools = 0;
    std::size_t prompts = 0;
    std::size_t resources = 0;
    std::size_t resource_templates = 0;
  };
  const SkippedEntries& skipped_entries() const { return skipped_; }
  // Answers its connection dropped because they matched no pending request (a second answer
  // to one request included: the first wins), on its current connection.
  std::uint64_t unmatched_responses() const {
    return session_ ? session_->counters().unmatched_responses : 0;
  }
  // Whether this server asked the client for its roots (roots/list) in this generation or an
  // earlier one: it is told when the client's roots change.
  bool asked_for_roots() const { return asked_for_roots_; }
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
  // close every pipe. Status becomes `offline`.
  asio::awaitable<void> shutdown();
  // An operator's stop (disconnect_server, the first half of restart_server): the same
  // teardown, then `offline` and held until an explicit start. Config is not touched.
  asio::awaitable<void> stop(std::string reason);
  // ds_refresh: lists the tools again when online; false when it could not.
  asio::awaitable<bool> relist();
  // ds_stale_code: the executable changed on disk since this generation was spawned.
  bool executable_changed() const;

  pid_t pid() const { return child_ ? child_->pid() : -1; }

 private:
  class PeerHandler;
  asio::awaitable<bool> start();
  asio::awaitable<bool> start_impl();
  asio::awaitable<bool> handshake();
  asio::awaitable<bool> list_tools();
  // Lists every page of `method` (prompts/list, resources/list, resources/templates/list)
  // into `out` as the items' JSON texts; an item without a string `identity` member of its
  // own is skipped, and counted in `skipped`.
  asio::awaitable<bool> list_items(std::string method, std::string key, std::string identity,
                                   std::vector<std::string>& out, std::size_t& skipped);
  asio::awaitable<bool> list_other();
  asio::awaitable<void> relist_other(std::string notification);
  asio::awaitable<void> drain_stderr(std::shared_ptr<asio::posix::stream_descriptor> err);
  asio::awaitable<void> watch_exit(std::shared_ptr<asio::posix::stream_descriptor> pidfd);
  asio::awaitable<void> teardown(bool orderly);
  // The child ended while serving (exit, crash, closed stdout, or a foreign kill).
  asio::awaitable<void> on_unexpected_end(std::string reason);
  asio::awaitable<void> restart_with_backoff();
  std::chrono::milliseconds backoff_delay() const;
  void fail(std::string reason);
  // Why a server that sent a line over the message cap was stopped (value-free).
  std::string overlong_line_reason() const;
  // Identifies this generation's processes (and descendants that keep their environment).
  std::string spawn_token() const;
  void on_notification(const rpc::Message& message);

  asio::io_context& io_;
  config::ServerConfig config_;
  const core::Limits& limits_;
  const config::GatewayPolicy& policy_;
  DownstreamEvents events_;
  std::map<std::string, std::unique_ptr<ToolAdmission>> admissions_;
  std::unique_ptr<Budget> write_lane_;

  Status status_ = Status::lazy;
  std::string last_error_;
  std::string disabled_reason_;  // set when config_.disabled
  std::string protocol_version_;
  bool tools_known_ = false;
  std::vector<ToolEntry> tools_;
  std::vector<std::string> prompts_, resources_, resource_templates_;
  SkippedEntries skipped_;
  std::string server_capabilities_;  // the server's initialize capabilities (JSON text)
  std::uint64_t generation_ = 0;

  std::unique_ptr<process::Child> child_;
  std::shared_ptr<transport::FdStream> stream_;
  std::shared_ptr<mcp::Session> session_;
  std::unique_ptr<PeerHandler> handler_;
  std::shared_ptr<asio::posix::stream_descriptor> stderr_;
  std::shared_ptr<asio::posix::stream_descriptor> pidfd_watch_;
  std::unique_ptr<core::Event> exited_;
  std::unique_ptr<core::Event> started_;
  std::unique_ptr<core::Event> teardown_done_;
  bool relist_pending_ = false;
  bool asked_for_roots_ = false;
  bool tearing_down_ = false;
  bool shutting_down_ = false;
  bool handling_end_ = false;       // on_unexpected_end runs (single-flight)
  bool signalled_by_sluice_ = false;  // teardown signalled this child before it exited
  std::optional<process::ExitStatus> last_exit_;
  bool held_ = false;
  int external_signal_ = 0;
  std::size_t consecutive_failures_ = 0;
  std::size_t restarts_ = 0;
  std::chrono::steady_clock::time_point online_since_{};
  std::chrono::steady_clock::time_point retry_not_before_{};
  std::unique_ptr<asio::steady_timer> backoff_timer_;
  std::unique_ptr<core::Event> restart_done_;
  struct FileIdentity {
    std::string path;
    dev_t dev = 0;
    ino_t ino = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  std::optional<FileIdentity> spawned_executable_;
};

}  // namespace sluice::gateway
