#pragma once
// The MCP client role toward one downstream, over any DownstreamTransport: the initialize
// handshake, the listings (tools, prompts, resources, resource templates, all through one
// paginated fetch), tools/call, forwarded requests, notifications both ways, and the
// requests a downstream sends to the client (sampling, elicitation, roots: relayed through
// DownstreamEvents, or refused when nothing relays them).
//
// Ownership: the Downstream owns one peer for its whole life. connect() creates the session
// of one generation over a transport the Downstream owns; disconnect() drops it. What was
// listed (tools, prompts, ...) is kept across generations until the next listing replaces it.
// Threading: the gateway's io_context thread only.
// Errors: downstream output is untrusted; a failed step returns false and error() says why
// (value-free); a malformed list entry is skipped and counted, never thrown.
#include "config/access_policy.hpp"
#include "core/limits.hpp"
#include "gateway/downstream/transport.hpp"
#include "mcp/session.hpp"
#include "schema/schema.hpp"
#include "store/catalog_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sluice::gateway {

namespace asio = boost::asio;

// Makes the text a cached tool is kept as from its listed object (see DownstreamPeer::seed).
using ToolSummarizer = std::function<std::string(const boost::json::object& listed)>;

// A tool's input schema as compiled: the validator, or why there is none.
struct ToolSchema {
  std::optional<schema::Schema> validator;  // unset when the schema did not compile
  std::string problem;                      // value-free, when it did not compile
};

// What a call says of its caller to a 2026-07-28 server, beyond sluice's own _meta.
struct CallerMeta {
  bool tasks = false;          // the caller declared the tasks extension
  std::string_view log_level;  // the caller's own _meta logLevel; empty: the level clients set
};

// A tool's execution.taskSupport as listed: "optional" and "required" as such; "forbidden",
// anything else and none are forbidden.
enum class TaskSupportLevel : std::uint8_t { forbidden, optional, required };

// One tool of a downstream's list. Its title and description are read from `raw` where they
// are shown (a catalog of 10,000 tools keeps no second copy of its texts).
struct ToolEntry {
  std::string name;
  // The tool object exactly as the downstream listed it; for a tool seeded as a summary, only
  // what search needs (see DownstreamPeer::seed).
  std::string raw;
  // Its compiled input schema, or why it did not compile; null when not compiled (a tool
  // seeded from the catalog cache). Shared: a list's entries are copied whole.
  std::shared_ptr<const ToolSchema> schema;
  bool read_only = false;
  bool summary = false;  // raw is a ToolSummarizer's text: the whole object is in the cache
  // Whether a call of it may run as a task (the tasks extension, gateway/tasks.cpp): one
  // byte, not the listed text, as a catalog of 10,000 tools holds 10,000 entries.
  TaskSupportLevel task_support = TaskSupportLevel::forbidden;

  const schema::Schema* validator() const {
    return schema && schema->validator ? &*schema->validator : nullptr;
  }
  // Value-free; empty unless the schema did not compile.
  std::string_view schema_problem() const {
    return schema ? std::string_view(schema->problem) : std::string_view();
  }
};

// The entry of one well-formed listed tool object (an object with a string name). Its input
// schema is compiled with `schema_options`; with nullptr it is not (a tool seeded from the
// catalog cache: a call starts the server and validates against the live list).
ToolEntry tool_entry(const boost::json::value& listed, const schema::Options* schema_options,
                     std::string_view server);

// Downstream output is untrusted (and so is what the catalog cache read back): an entry of a
// list is usable when it is an object whose `key` is a non-empty string that no earlier entry
// (`seen`) used. Else why not, from its structure only (value-free); empty when usable.
std::string entry_problem(const boost::json::value& entry, std::string_view key,
                          const std::unordered_set<std::string>& seen);

// What the Downstream tells the gateway.
struct DownstreamEvents {
  std::function<void()> tools_changed;
  // A live listing succeeded (the tools, or the prompts and resources after them): the
  // catalog cache stores what the server now lists.
  std::function<void()> listed;
  // A notifications/progress from the downstream (params text as sent).
  std::function<void(std::string_view params)> progress;
  // A request from the downstream to the client (sampling, elicitation, roots): relayed to
  // a client in aggregate mode. Unset: answered "method not found".
  std::function<asio::awaitable<mcp::Reply>(std::string method, std::string params)> relay_request;
  // Any other notification the client should see (notifications/message), params as sent.
  std::function<void(std::string_view method, std::string_view params)> relay_notification;
  // A lifecycle event for the audit: kind (crash, external_kill, auto_restart,
  // idle_stop), outcome.
  std::function<void(std::string_view kind, std::string_view outcome, std::uint64_t generation)>
      lifecycle;
  // Whether a client session is subscribed to one of the server's resources, or a client
  // follows a task the server runs: it is then not idle (ds_idle_stop). Unset: never.
  std::function<bool()> holds_server;
  // And what the gateway tells it: where it keeps state of its own (a remote server's OAuth
  // tokens); empty: nowhere (no OAuth).
  std::filesystem::path state_dir;
};

// What the bounds of one listing took from the server's last listing of one kind.
struct ListBounds {
  // Entries after the first Limits::max_tools_per_server kept, dropped unread (counted up
  // to the page bound).
  std::size_t over_cap = 0;
  // The listing stopped at Limits::max_list_pages while the server offered a next page:
  // entries beyond it were neither read nor counted.
  bool pages_unread = false;
  // Entries kept whose description or title (a tool's annotations.title too) was over
  // kMaxListedTextBytes: cut at a UTF-8 boundary and marked "… (truncated)".
  std::size_t texts_cut = 0;
  // Entries the operator's policy withholds (DownstreamPeer::withhold), left out.
  std::size_t withheld = 0;
};

// The longest description or title of a listed entry that sluice keeps.
inline constexpr std::size_t kMaxListedTextBytes = 16 * 1024;

// Entries of the server's last listing of each kind that were malformed and skipped: not
// an object, or without a non-empty string name (tools, prompts), uri (resources) or
// uriTemplate (templates) of its own, or repeating an earlier entry's. And what the bounds
// of each listing took (`*_bounds`).
struct SkippedEntries {
  std::size_t tools = 0;
  std::size_t prompts = 0;
  std::size_t resources = 0;
  std::size_t resource_templates = 0;
  ListBounds tools_bounds, prompts_bounds, resources_bounds, resource_templates_bounds;
};

class DownstreamPeer {
 public:
  // `events` must outlive the peer. `list_changed` hears notifications/tools/list_changed,
  // notifications/prompts/list_changed and notifications/resources/list_changed (the
  // Downstream decides whether to list again).
  DownstreamPeer(asio::io_context& io, std::string name, const core::Limits& limits,
                 const DownstreamEvents& events,
                 std::function<void(std::string_view method)> list_changed);
  ~DownstreamPeer();
  DownstreamPeer(const DownstreamPeer&) = delete;
  DownstreamPeer& operator=(const DownstreamPeer&) = delete;

  // A new session over `transport` (borrowed until disconnect()); `on_closed` runs once when
  // the transport's remote end stops sending.
  void connect(DownstreamTransport& transport, std::function<void()> on_closed);
  // Ends the session's pending requests as closed (the transport is going away).
  void close_session();
  // Detaches and drops the session; the transport may be destroyed after it.
  void disconnect();
  bool has_session() const { return session_ != nullptr; }
  // A session that has not seen its transport close.
  bool connected() const { return session_ && !session_->closed(); }

  // The operator's policy (borrowed; it outlives the peer): every listing, live or seeded,
  // leaves out the tools, prompts, resources and templates it withholds (counted in
  // ListBounds::withheld), so no view of the lists shows them. Null: nothing is withheld.
  void withhold(const config::AccessPolicy* access) { access_ = access; }

  // server/discover first: a server that names 2026-07-28 among its supportedVersions is
  // spoken to in that revision (modern()), with no initialize; any other answer (an error, a
  // timeout) and sluice falls back to initialize, then notifications/initialized.
  asio::awaitable<bool> handshake();
  // Whether the server speaks the stateless revision (2026-07-28) to sluice: every request
  // then carries sluice's _meta (version, capabilities, clientInfo, the log level set), an
  // input_required result is completed through the client (complete_input), list changes
  // arrive on a subscriptions/listen stream sluice holds open, and logging/setLevel and
  // resources/subscribe become the _meta logLevel and that stream's resourceSubscriptions.
  bool modern() const { return modern_; }
  // tools/list, every page; replaces tools() when it succeeds.
  asio::awaitable<bool> list_tools();
  // prompts/list, resources/list and resources/templates/list, for what the server offers.
  asio::awaitable<bool> list_other();
  // Why the last failed step failed.
  const std::string& error() const { return error_; }

  // Takes the lists of `listing` (the catalog cache's, of a server not started in this run):
  // they count as known until a live listing replaces them. Malformed stored entries are
  // skipped. Each list keeps the caps of a live listing. With `summarize`, each tool keeps
  // only the summary it makes of the listed object (ToolEntry::summary): the whole object
  // stays in the cache (CatalogStore::load_tool), which keeps a fleet of cached servers
  // small in memory.
  void seed(const store::ServerListing& listing, const ToolSummarizer& summarize);
  // Whether the lists are the cache's rather than this run's, and when they were listed
  // (unix ms; 0 when nothing was listed).
  bool lists_cached() const { return lists_cached_; }
  std::int64_t listed_at_ms() const { return listed_at_ms_; }
  // How long the server said its tool list stays valid (a 2026-07-28 server's ttlMs on
  // tools/list, the least of its pages), this run's or the cached listing's; -1: not said.
  std::int64_t list_ttl_ms() const { return list_ttl_ms_; }
  // The parameters `tool` asks to see as headers (x-mcp-header) in the last live listing:
  // (property, header name) pairs; empty when none or not listed live yet.
  std::vector<std::pair<std::string, std::string>> param_headers(std::string_view tool) const;
  // Whether the server is modern and offers the tasks extension (capabilities.extensions).
  bool offers_tasks() const;
  // What the server reported in initialize (serverInfo), this run or the cached one.
  const std::string& server_name() const { return server_name_; }
  const std::string& server_version() const { return server_version_; }

  // tools/call with the arguments spliced verbatim; `progress_token` (JSON text) goes in
  // _meta when not empty; `caller`: what a modern server is told of the caller (dress; with
  // the tasks extension it may answer with a task). The session is kept alive across a
  // teardown.
  asio::awaitable<mcp::Reply> call_tool(std::string_view tool, std::string_view arguments_json,
                                        std::chrono::milliseconds timeout,
                                        core::CancelSignal* cancel, std::string_view progress_token,
                                        const mcp::CallTracking* tracking, CallerMeta caller = {});
  // One request as it is (aggregate-mode routing, and the tasks extension's tasks/* requests,
  // which declare the extension).
  asio::awaitable<mcp::Reply> forward(std::string method, std::string params,
                                      std::chrono::milliseconds timeout,
                                      core::CancelSignal* cancel);
  // One notification while the session is up (dropped otherwise).
  void notify(std::string_view method, std::string_view params);

  const std::string& protocol_version() const { return protocol_version_; }
  bool offers(std::string_view capability) const;
  bool tools_known() const { return tools_known_; }
  const std::vector<ToolEntry>& tools() const { return tools_; }
  // The tool of that name, or null: a binary search of an index by name (4 bytes a tool), so
  // a call costs about the same with 10 tools or 10,000.
  const ToolEntry* find_tool(std::string_view name) const;
  const std::vector<std::string>& prompts() const { return prompts_; }
  const std::vector<std::string>& resources() const { return resources_; }
  const std::vector<std::string>& resource_templates() const { return resource_templates_; }
  const SkippedEntries& skipped_entries() const { return skipped_; }
  std::uint64_t unmatched_responses() const {
    return session_ ? session_->counters().unmatched_responses : 0;
  }
  bool asked_for_roots() const { return asked_for_roots_; }
  // Frames received and requests still unanswered on this generation's session (the idle
  // watch reads them as activity).
  std::uint64_t frames_received() const { return session_ ? session_->counters().frames_in : 0; }
  std::size_t pending_requests() const {
    return session_ ? session_->pending_outgoing() -
                          std::min(*listens_open_, session_->pending_outgoing())
                    : 0;
  }
  // Why a server that sent a line over the message cap was stopped (value-free).
  std::string overlong_line_reason() const;

 private:
  class Handler;
  struct Listing;
  // Every page of one listing; `add` takes each well-formed entry, until `full` says stop.
  asio::awaitable<bool> fetch_all(const Listing& listing,
                                  const std::function<void(const boost::json::value&)>& add,
                                  const std::function<bool()>& full, std::size_t& skipped);
  asio::awaitable<bool> list_items(const Listing& listing, std::vector<std::string>& out,
                                   std::size_t& skipped);
  // Whether the policy withholds the entry of list `key` whose identity is `identity`.
  bool withheld(std::string_view key, std::string_view identity) const;
  bool fail(std::string reason);
  // Replaces the tool list and its index by name.
  void set_tools(std::vector<ToolEntry> tools);
  // Keeps serverInfo's name and version from an initialize result (short printable strings
  // only; else empty).
  void read_server_info(std::string_view initialize_result);

  // The 2026-07-28 side (peer_modern.cpp). The probe: true when the server is modern.
  asio::awaitable<bool> discover();
  // `params` with sluice's _meta when the server is modern; as it is otherwise. `caller`: the
  // tasks extension is declared too when the caller declared it and the server offers it, and
  // the caller's own log level replaces the one clients set with logging/setLevel.
  std::string dress(std::string params, const CallerMeta& caller = {}) const;
  // While `reply` is an input_required result of `method` (tools/call, prompts/get,
  // resources/read) from a modern server: each of its inputRequests relayed to the client
  // (DownstreamEvents::relay_request, which asks only what the client declared), and the
  // request sent again with their inputResponses and the server's requestState byte for byte,
  // at most kMaxInputRounds times. A request the client cannot answer ends it with that
  // answer (an error).
  asio::awaitable<mcp::Reply> complete_input(std::string method, const std::string& params,
                                             mcp::Reply reply, std::chrono::milliseconds timeout,
                                             core::CancelSignal* cancel,
                                             const mcp::CallTracking* tracking);
  // A 2025 server's own tasks (peer_tasks.cpp). Whether `tool` runs only as a task there (its
  // execution.taskSupport "required", the server declaring tasks for tools/call): it is then
  // called task-augmented.
  bool augments_tasks(std::string_view tool) const;
  // The result of the task a task-augmented call `created` (its CreateTaskResult), from
  // tasks/result (without the result's related-task _meta); the server is told to cancel the
  // task when the wait is given up. Any other answer is returned as it is.
  asio::awaitable<mcp::Reply> follow_task(mcp::Reply created, std::chrono::milliseconds timeout,
                                          core::CancelSignal* cancel,
                                          const mcp::CallTracking* tracking);
  // What a modern server has instead of a removed method (logging/setLevel,
  // resources/subscribe, resources/unsubscribe); nullopt for any other method.
  std::optional<mcp::Reply> modern_instead(std::string_view method, std::string_view params);
  // Opens a subscriptions/listen stream for the list changes the server declares, and one
  // for the resources subscribed (reopened at each change of that set).
  void open_listen(std::string filter, std::shared_ptr<core::CancelSignal> cancel);
  void reopen_resource_listen();

  asio::io_context& io_;
  std::string name_;
  const core::Limits& limits_;
  const DownstreamEvents& events_;
  const config::AccessPolicy* access_ = nullptr;
  std::function<void(std::string_view)> list_changed_;
  DownstreamTransport* transport_ = nullptr;
  std::shared_ptr<mcp::Session> session_;
  std::unique_ptr<Handler> handler_;
  std::string error_;
  std::string protocol_version_;
  std::string server_capabilities_;  // the server's initialize capabilities (JSON text)
  bool tools_known_ = false;
  bool lists_cached_ = false;
  std::int64_t listed_at_ms_ = 0;
  std::int64_t list_ttl_ms_ = -1;
  std::int64_t fetched_ttl_ms_ = -1;  // the last fetch_all's least ttlMs (-1: none)
  std::string server_name_, server_version_;
  bool asked_for_roots_ = false;
  bool modern_ = false;
  std::shared_ptr<const mcp::ParamHeaders> param_headers_;  // of the last live tool listing
  std::string log_level_;                  // a modern server's logLevel (set by setLevel)
  std::set<std::string> subscribed_uris_;  // a modern server's resource subscriptions
  // Ends the current resource listen (shared with the listen's own coroutine).
  std::shared_ptr<core::CancelSignal> resource_listen_;
  // Listen requests pending on this generation's session: waiting, not activity.
  std::shared_ptr<std::size_t> listens_open_ = std::make_shared<std::size_t>(0);
  std::vector<ToolEntry> tools_;
  std::vector<std::uint32_t> tool_index_;  // positions in tools_, in the order of their names
  std::vector<std::string> prompts_, resources_, resource_templates_;
  SkippedEntries skipped_;
};

}  // namespace sluice::gateway
