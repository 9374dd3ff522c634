// A downstream's start (single-flight, one generation per start), the calls and
// notifications it passes to its peer, and the admission of its tools.
#include "gateway/downstream/downstream.hpp"

#include "config/trust_store.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/downstream/child_transport.hpp"
#include "gateway/downstream/remote_transport.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <typeinfo>

namespace sluice::gateway {

Downstream::Downstream(asio::io_context& io, config::ServerConfig config,
                       const core::Limits& limits, const config::GatewayPolicy& policy,
                       DownstreamEvents events)
    : io_(io),
      config_(std::move(config)),
      limits_(limits),
      policy_(policy),
      events_(std::move(events)),
      phase_(config_.name),
      restart_policy_(limits),
      peer_(io, config_.name, limits, events_,
            [this](std::string_view method) { on_list_changed(method); }),
      idle_timer_(io) {
  peer_.withhold(&policy_.access);  // the operator's policy: withheld entries are left out
  if (config_.disabled) {
    disabled_reason_ = fmt::format(
        "disabled in {} (\"disabled\": true); sluice does not start it: set \"disabled\": "
        "false there to use it",
        config_.source_file);
    phase_.transition(Phase::disabled);
  } else if (config_.untrusted) {
    disabled_reason_ = fmt::format(
        "{} is a project file whose exact content you have not approved, so sluice "
        "does not start its servers; review it, then run: {}",
        config_.source_file, config::approve_command(config_.source_file));
    phase_.transition(Phase::untrusted);
  }
  // Environment hygiene: an entry whose env sets a refused variable shows as failed, with the
  // reason, from the start, and is never started (start_impl refuses it on every path).
  if (phase() == Phase::lazy && !config_.env_refusal.empty()) {
    last_error_ = env_refused_reason();
    phase_.transition(Phase::failed);
  }
}

std::string Downstream::env_refused_reason() const {
  return fmt::format("not started: {} in {}", config_.env_refusal, config_.source_file);
}

Downstream::~Downstream() {
  peer_.disconnect();
  // transport_'s destructor closes the stream; the child's SIGKILLs the group and reaps.
}

const ToolEntry* Downstream::find_tool(std::string_view name) const {
  return peer_.find_tool(name);
}

std::string Downstream::spawn_token() const {
  return fmt::format("{}.{}.{}", ::getpid(), config_.name, generation_);
}

void Downstream::record_error(std::string reason) {
  last_error_ = std::move(reason);
  core::log::warn("server {}: {}", config_.name, last_error_);
}

void Downstream::fail(std::string reason) {
  phase_.transition(Phase::failed);
  record_error(std::move(reason));
}

void Downstream::settle_offline() {
  if (phase() != Phase::disabled && phase() != Phase::untrusted) {
    phase_.transition(Phase::offline);
  }
}

std::optional<bool> Downstream::started_now() {
  // Whoever asks, an operator's connect included.
  if (config_.disabled || config_.untrusted) return false;
  if (!config_.env_refusal.empty()) return false;  // its last error says why
  if (phase() != Phase::online && !shutting_down_) return std::nullopt;
  ++requests_;  // a call or a listing is on its way: activity for the idle watch
  return phase() == Phase::online;
}

asio::awaitable<bool> Downstream::ensure_started(bool explicit_request) {
  if (auto now = started_now()) co_return *now;
  ++requests_;  // as started_now counts it
  if (phase() == Phase::restarting && restart_done_) {
    co_await restart_done_->wait();
    co_return phase() == Phase::online;
  }
  if (phase() == Phase::starting && started_) {
    co_await started_->wait();
    co_return phase() == Phase::online;
  }
  if (explicit_request) {
    held_ = false;
    external_signal_ = 0;
    restart_policy_.reset();
  } else if (held_ ||
             (phase() == Phase::failed && !restart_policy_.may_retry_start(core::Clock::now()))) {
    co_return false;
  }
  co_return co_await start();
}

asio::awaitable<bool> Downstream::start() {
  // Whatever goes wrong inside (EMFILE, bad_alloc), waiters are released and the child
  // does not outlive the failure.
  bool threw = false;
  bool ok = false;
  try {
    ok = co_await start_impl();
  } catch (const std::exception& e) {
    threw = true;
    core::log::error("server {}: start failed ({})", config_.name, typeid(e).name());
  }
  if (threw) {
    fail("internal error while starting");
    if (transport_) co_await teardown(false);
    phase_.transition(Phase::failed);
    if (started_) started_->set();
  }
  co_return ok;
}

core::Result<std::unique_ptr<DownstreamTransport>> Downstream::open_transport() {
  // The one place a server's process or connection is opened: an untrusted one never is.
  if (config_.untrusted) return core::Error{disabled_reason_};
  if (const auto* remote = std::get_if<config::RemoteServer>(&config_.transport)) {
    if (!transport::is_usable_http_url(remote->url)) {
      return core::Error{
          "its url is not one sluice can connect to: an http:// or https:// URL with a host "
          "and a valid port, without user:password@ (credentials go in \"headers\")"};
    }
    if (!remote->allow_http && !transport::is_https_url(remote->url) &&
        !transport::is_loopback_url(remote->url)) {
      return core::Error{
          "plain http:// is refused for a host other than loopback: use "
          "https://, or set \"allowHttp\": true in the server's entry"};
    }
    return std::unique_ptr<DownstreamTransport>(
        std::make_unique<RemoteTransport>(io_, config_, limits_, events_.state_dir));
  }
  const auto& stdio = std::get<config::StdioServer>(config_.transport);
  auto child = ChildTransport::open(io_, stdio, config_.name, spawn_token(), limits_);
  if (!child) return child.error();
  return std::unique_ptr<DownstreamTransport>(std::move(*child));
}

void Downstream::start_failed(std::string reason) {
  fail(std::move(reason));
  restart_policy_.start_failed(core::Clock::now());
}

asio::awaitable<bool> Downstream::start_impl() {
  if (!config_.env_refusal.empty()) {
    fail(env_refused_reason());
    co_return false;
  }
  if (!config_.missing_variables.empty()) {
    // The names only (they are the file's, never a value).
    fail(
        fmt::format("not connected: its configuration refers to unset variables ({}); set "
                    "them in sluice's environment or with `sluice secrets set NAME`",
                    fmt::join(config_.missing_variables, ", ")));
    co_return false;
  }
  // Leftovers of a previous run (a crash) are torn down before a new spawn.
  while (tearing_down_) co_await teardown_done_->wait();
  if (transport_) co_await teardown(false);
  if (shutting_down_) co_return false;
  phase_.transition(Phase::starting);
  started_ = std::make_unique<core::Event>(io_);
  ++generation_;
  last_foreign_signal_ = 0;

  auto transport = open_transport();
  if (!transport) {
    start_failed("could not start: " + transport.error().message);
    started_->set();
    co_return false;
  }
  transport_ = std::move(*transport);
  connect_peer();

  bool ok = co_await handshake_and_list();
  if (ok) {
    phase_.transition(Phase::online);
    restart_policy_.came_online(core::Clock::now());
    last_error_.clear();
    failure_class_.clear();
    core::log::info("server {}: online, {} tools, protocol {}", config_.name, peer_.tools().size(),
                    peer_.protocol_version());
    watch_idle();
  } else {
    co_await teardown(false);
    phase_.transition(Phase::failed);
    restart_policy_.start_failed(core::Clock::now());
  }
  started_->set();
  if (ok) listed_now();
  co_return ok;
}

void Downstream::connect_peer() {
  const std::uint64_t generation = generation_;
  // The child exited: a run that was serving is handled as an unexpected end.
  transport_->on_end([this, generation] {
    if (generation != generation_ || tearing_down_ || phase() != Phase::online) return;
    handle_unexpected_end("the server exited unexpectedly");
  });
  peer_.connect(*transport_, [this, generation] {
    // The server closed its stdout (it crashed or quit): its calls already failed with the
    // session; it cannot serve again, so it is torn down now rather than when its exit is
    // noticed. While starting, the failed handshake or listing reports it instead.
    if (generation != generation_ || tearing_down_ || !transport_ || phase() != Phase::online) {
      return;
    }
    failure_class_ = transport_->problem().substr(0, transport_->problem().find(':'));
    std::string why = transport_->protocol_violation() ? peer_.overlong_line_reason()
                      : !transport_->problem().empty()
                          ? transport_->problem()
                          : "the server closed its output (it exited or crashed)";
    handle_unexpected_end(std::move(why));
  });
}

asio::awaitable<bool> Downstream::handshake_and_list() {
  bool ok = co_await peer_.handshake();
  if (ok) ok = co_await peer_.list_tools();
  // Prompts and resources, when a client is relayed to (both modes list them).
  if (ok && events_.relay_request) {
    bool listed = co_await peer_.list_other();
    ok = listed;
  }
  if (!ok) {
    const std::string problem = transport_ ? transport_->problem() : std::string();
    failure_class_ = problem.substr(0, problem.find(':'));
    fail(problem.empty() ? peer_.error() : problem);
    co_return false;
  }
  if (!peer_.connected()) {
    fail("the server exited while starting");
    co_return false;
  }
  co_return true;
}

void Downstream::notify(std::string_view method, std::string_view params) {
  // Starting counts: a server may ask for roots while it starts, and hear of a change then.
  if (!tearing_down_) peer_.notify(method, params);
}

namespace {

// The answer to a call or a forward when the server is not online.
asio::awaitable<mcp::Reply> closed_reply() {
  mcp::Reply reply;
  reply.status = mcp::Reply::Status::closed;
  co_return reply;
}

}  // namespace

// Not coroutines themselves: the peer's coroutine is the one frame a call costs.
asio::awaitable<mcp::Reply> Downstream::forward(std::string method, std::string params,
                                                std::chrono::milliseconds timeout,
                                                core::CancelSignal* cancel) {
  if (!peer_.has_session() || phase() != Phase::online) return closed_reply();
  ++requests_;
  index_only_ = false;  // a client uses it: its own idle timeout applies again
  return peer_.forward(std::move(method), std::move(params), timeout, cancel);
}

asio::awaitable<mcp::Reply> Downstream::call_tool(
    std::string_view tool, std::string_view arguments_json, std::chrono::milliseconds timeout,
    core::CancelSignal* cancel, std::string_view progress_token, const mcp::CallTracking* tracking,
    CallerMeta caller) {
  if (!peer_.has_session() || phase() != Phase::online) return closed_reply();
  ++requests_;
  index_only_ = false;  // a client uses it: its own idle timeout applies again
  return peer_.call_tool(tool, arguments_json, timeout, cancel, progress_token, tracking, caller);
}

void Downstream::on_list_changed(std::string_view method) {
  if (method == "notifications/tools/list_changed") {
    if (phase() != Phase::online || relist_pending_) return;
    relist_pending_ = true;
    core::spawn(
        io_,
        [this]() -> asio::awaitable<void> {
          relist_pending_ = false;
          if (phase() != Phase::online) co_return;
          bool listed = co_await peer_.list_tools();
          if (!listed) fail(peer_.error());
          if (listed) listed_now();
        },
        "a server's tool relisting");
    return;
  }
  if (phase() != Phase::online || !events_.relay_request) return;
  core::spawn(io_, relist_other(std::string(method)), "a server's prompt or resource relisting");
}

asio::awaitable<void> Downstream::relist_other(std::string notification) {
  bool listed = co_await peer_.list_other();
  if (!listed) fail(peer_.error());
  if (listed && events_.listed) events_.listed();
  if (listed && events_.relay_notification) events_.relay_notification(notification, "");
}

asio::awaitable<bool> Downstream::relist() {
  if (phase() != Phase::online || !peer_.has_session()) co_return false;
  bool ok = co_await peer_.list_tools();
  if (!ok) fail(peer_.error());
  if (ok) listed_now();
  co_return ok;
}

std::size_t Downstream::resolved_budget(const ToolEntry& tool) const {
  // A1: tool override, then the server's default, then the class default.
  std::size_t budget = tool.read_only ? policy_.read_budget : policy_.mutating_budget;
  if (config_.policy.budget) budget = *config_.policy.budget;
  for (const auto& [name, value] : config_.policy.tool_budgets) {
    if (name == tool.name) budget = value;
  }
  return budget;
}

Budget* Downstream::write_lane(const ToolEntry& tool) {
  if (tool.read_only || !std::holds_alternative<config::StdioServer>(config_.transport)) {
    return nullptr;
  }
  if (config_.policy.budget) return nullptr;
  for (const auto& [name, value] : config_.policy.tool_budgets) {
    if (name == tool.name) return nullptr;
  }
  if (!write_lane_) {
    write_lane_ = std::make_unique<Budget>(
        io_, config_.policy.writes.value_or(policy_.writes_per_server), policy_.queue_size);
  }
  return write_lane_.get();
}

ToolAdmission& Downstream::admission(const ToolEntry& tool) {
  auto it = admissions_.find(tool.name);
  if (it != admissions_.end()) return *it->second;
  auto admission = std::make_unique<ToolAdmission>(io_, resolved_budget(tool), policy_.queue_size);
  ToolAdmission& ref = *admission;
  admissions_.emplace(tool.name, std::move(admission));
  return ref;
}

std::uint64_t Downstream::work_in_flight() const {
  std::uint64_t n = 0;
  for (const auto& [name, a] : admissions_) n += a->counters.in_flight;
  return n;
}

}  // namespace sluice::gateway
