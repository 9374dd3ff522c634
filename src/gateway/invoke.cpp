// gateway.invoke end to end: validation, admission, the downstream call as work that owns
// its permits, and the ledger of pending calls (GATEWAY-INVARIANTS §2-§3).
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"
#include "gateway/results.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <array>
#include <typeinfo>

namespace sluice::gateway {
namespace bj = boost::json;
namespace cj = core::json;

namespace {

constexpr const char* kCancelledByOperator =
    " was cancelled by an operator (gateway.cancel, or a forced restart_server, "
    "disconnect_server or refresh)";

std::int64_t age_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

}  // namespace

// The downstream request as work: it owns the permits and its pending record, and runs to
// its own end even when the caller has stopped waiting for it.
struct Gateway::CallTask {
  CallTask(asio::io_context& io) : settled(io) {}
  Downstream* server = nullptr;
  ToolAdmission* admission = nullptr;
  std::list<PendingCall>::iterator record;
  bool record_live = false;  // the record is still in pending_
  Permit permit;
  std::string tool_name;
  std::string arguments;
  std::string progress_token;
  std::chrono::milliseconds timeout{0};
  std::chrono::steady_clock::time_point last_progress{};  // of the downstream's progress
  mcp::Reply reply;
  bool ended = false;
  bool operator_cancel = false;
  mcp::Reply::Status abandoned_because = mcp::Reply::Status::closed;
  core::Event settled;  // the caller may answer: the call ended or was abandoned
};

asio::awaitable<InvokeOutcome> Gateway::invoke(std::string_view tool_id,
                                               std::string_view arguments_json,
                                               std::optional<std::chrono::milliseconds> asked,
                                               core::CancelSignal* cancel,
                                               std::string_view client_progress_token,
                                               std::weak_ptr<mcp::Session> client,
                                               Budget* client_budget, std::string client_label,
                                               const bj::value* parsed_arguments,
                                               std::string client_request_id) {
  auto refuse = [](std::string text) { return InvokeOutcome{true, error_result(text), true}; };
  ResolvedTool resolved = co_await resolve_tool(tool_id, true);
  if (!resolved.server) co_return refuse(resolved.refusal);
  Downstream* d = resolved.server;
  const std::chrono::milliseconds timeout = call_timeout(*d, asked);
  // The tool list may be replaced while this call waits (list_changed, refresh, restart):
  // nothing from the entry is used after the first suspension below.
  const ToolEntry* tool = resolved.tool;
  const std::string tool_name = tool->name;
  std::string tool_label = d->name() + "::" + tool_name;
  if (!tool->validator && !tool->schema_problem.empty()) {
    // A schema sluice cannot compile (a regex RE2 refuses, a remote $ref): the arguments
    // cannot be checked, so the call is refused unless the operator allows it.
    if (!config_->policy.allow_unvalidated_tools) {
      co_return refuse(fmt::format(
          "{} cannot be validated: its input schema is not usable ({}); sluice does not call a "
          "tool it cannot validate (the operator may allow it with "
          "sluice.allowUnvalidatedTools)",
          tool_label, tool->schema_problem));
    }
    core::log::debug("calling {} without validation (sluice.allowUnvalidatedTools)", tool_label);
  }
  if (tool->validator) {
    boost::system::result<bj::value, cj::ParseError> args = bj::value();
    if (!parsed_arguments) {
      args = cj::parse_strict(arguments_json.empty() ? "{}" : arguments_json,
                              cj::ParseLimits{options_.limits.max_json_depth});
      if (!args) co_return refuse("arguments are not valid JSON: " + args.error().message);
    }
    auto problems = tool->validator->validate(parsed_arguments ? *parsed_arguments : *args);
    if (!problems.empty()) {
      std::string text = fmt::format("arguments do not match the input schema of {}:", tool_label);
      for (const auto& p : problems) text += "\n" + core::schema::format(p);
      core::log::info("refused a call to {}: {} schema problem(s)", tool_label, problems.size());
      co_return refuse(text);
    }
  }

  // Admission (A1-A3): the tool's budget, then the client's cap, each with the queue.
  ToolAdmission& admission = d->admission(*tool);
  Budget* write_lane = d->write_lane(*tool);
  tool = nullptr;
  const config::GatewayPolicy& policy = config_->policy;
  auto record = pending_.emplace(pending_.end());
  record->request_id = fmt::format("{}::{}", d->name(), next_request_++);
  record->server = d->name();
  record->tool_id = tool_label;
  record->client = std::move(client_label);
  record->client_session = client;
  record->client_request_id = client_request_id;
  record->timeout = timeout;
  const auto admitted_at = record->started_at;
  auto task = std::make_shared<CallTask>(io_);
  task->record = record;
  task->record_live = true;
  // The caller's cancel and gateway.cancel both cancel the work. The record can end (and
  // be erased) before this coroutine resumes to unregister, so the relay checks it lives.
  std::uint64_t relay = 0;
  if (cancel) {
    relay = cancel->on_cancel([weak = std::weak_ptr<CallTask>(task)] {
      if (auto t = weak.lock(); t && t->record_live) t->record->work_cancel.cancel();
    });
  }
  auto unregister = [&] {
    if (cancel) cancel->remove(relay);
  };
  struct Stage {
    Budget* budget;
    const char* name;
  };
  // A named array: no initializer_list temporary lives across the co_await below.
  const std::array<Stage, 3> stages{Stage{&admission.budget, "tool"},
                                     Stage{write_lane, "server's write"},
                                     Stage{client_budget, "client"}};
  for (const Stage& stage : stages) {
    if (!stage.budget) continue;
    auto outcome =
        co_await stage.budget->acquire(policy.queue_timeout, &record->work_cancel, task->permit);
    if (outcome == Budget::Outcome::granted) continue;
    task->permit.release();
    audit_.record({"refusal", record->client, d->name(), tool_name,
                   outcome == Budget::Outcome::cancelled  ? "cancelled_while_queued"
                   : outcome == Budget::Outcome::overflow ? "rejected_overflow"
                                                          : "rejected_queue_timeout",
                   -1, d->generation()});
    bool by_operator = record->cancelled_by_operator;
    task->record_live = false;
    pending_.erase(record);
    unregister();
    if (pending_.empty() && idle_) idle_->set();
    switch (outcome) {
      case Budget::Outcome::cancelled:
        ++admission.counters.cancelled_while_queued;
        if (by_operator) co_return refuse(tool_label + kCancelledByOperator);
        co_return InvokeOutcome{false, {}, true};
      case Budget::Outcome::overflow:
        ++admission.counters.rejected_overflow;
        co_return refuse(fmt::format(
            "server {}, tool {}: the {} budget of {} calls in flight is full and its queue "
            "({} waiting) is full; retry later",
            d->name(), tool_name, stage.name, stage.budget->capacity(), policy.queue_size));
      default:
        ++admission.counters.rejected_queue_timeout;
        co_return refuse(fmt::format(
            "server {}, tool {}: the {} budget of {} calls in flight stayed full for {} ms; "
            "retry later",
            d->name(), tool_name, stage.name, stage.budget->capacity(),
            policy.queue_timeout.count()));
    }
  }

  record->state = PendingCall::State::running;
  ++admission.counters.in_flight;
  task->server = d;
  task->admission = &admission;
  task->tool_name = tool_name;
  task->arguments = std::string(arguments_json);
  task->timeout = timeout;
  const std::uint64_t route = next_progress_token_++;
  task->progress_token = std::to_string(route);
  progress_routes_[route] = ProgressRoute{std::move(client), std::string(client_progress_token),
                                          std::move(client_request_id), &task->last_progress};
  // Should run_call die of an exception, its caller is still answered (the call ends as
  // transport_lost) and neither its record nor its permits outlive it.
  core::spawn(io_, run_call(task), "a downstream call", [this, task] {
    task->permit.release();
    if (task->record_live) {
      task->record_live = false;
      if (task->admission && task->admission->counters.in_flight > 0) {
        --task->admission->counters.in_flight;
      }
      pending_.erase(task->record);
      if (pending_.empty() && idle_) idle_->set();
    }
    task->ended = true;
    task->settled.set();
  });
  co_await task->settled.wait();
  unregister();
  progress_routes_.erase(route);

  if (!task->ended) {
    // Abandoned: the work goes on (and keeps its permits) without this caller.
    if (task->abandoned_because == mcp::Reply::Status::timeout) {
      if (std::chrono::steady_clock::now() - admitted_at >= policy.max_call) {
        co_return refuse(fmt::format(
            "{} did not finish within the ceiling of {} ms for any call (sluice.maxCallMs), "
            "progress or not",
            tool_label, policy.max_call.count()));
      }
      co_return refuse(fmt::format(
          "{} did not answer within {} ms (a timeout that each progress notification restarts)",
          tool_label, timeout.count()));
    }
    if (task->operator_cancel) co_return refuse(tool_label + kCancelledByOperator);
    co_return InvokeOutcome{false, {}, true};
  }
  const mcp::Reply& reply = task->reply;
  switch (reply.status) {
    case mcp::Reply::Status::result:
      co_return InvokeOutcome{true, std::string(reply.message->result()), false};
    case mcp::Reply::Status::error: {
      std::string message;
      auto m = cj::member_span(reply.message->error(), "message");
      bj::error_code ec;
      bj::value mv = m ? bj::parse(*m, ec) : bj::value();
      if (!ec && mv.is_string()) message = safe_peer_message(mv.get_string());
      co_return refuse(fmt::format("{} answered with an error{}{}", tool_label,
                                   message.empty() ? "" : ": ", message));
    }
    case mcp::Reply::Status::closed:
      co_return refuse(fmt::format("server {} closed the connection during the call of {}",
                                   d->name(), tool_label));
    case mcp::Reply::Status::cancelled:
      // Cancelled after admission, before the request was sent.
      if (task->operator_cancel) co_return refuse(tool_label + kCancelledByOperator);
      co_return InvokeOutcome{false, {}, true};
    default:
      co_return refuse(fmt::format("{} did not answer within {} ms", tool_label, timeout.count()));
  }
}

asio::awaitable<void> Gateway::run_call(std::shared_ptr<CallTask> task) {
  ToolAdmission& admission = *task->admission;
  PendingCall& record = *task->record;
  const config::GatewayPolicy& policy = config_->policy;
  mcp::CallTracking tracking;
  tracking.abandon_bound = policy.abandon_bound;
  tracking.hold_after_expiry = true;  // stdio: the slot stays until the answer or the exit
  tracking.last_progress = &task->last_progress;
  tracking.ceiling = record.started_at + policy.max_call;
  bool expired = false;
  tracking.on_abandoned = [&](mcp::Reply::Status why) {
    record.state = PendingCall::State::abandoned;
    record.abandoned_at = std::chrono::steady_clock::now();
    ++admission.counters.abandoned_in_flight;
    task->abandoned_because = why;
    task->operator_cancel = record.cancelled_by_operator;
    task->settled.set();
  };
  tracking.on_expired = [&] {
    expired = true;
    ++admission.counters.expired;
    ++admission.counters.expired_holding_permit;
  };
  try {
    task->reply = co_await task->server->call_tool(task->tool_name, task->arguments, task->timeout,
                                                   &record.work_cancel, task->progress_token,
                                                   &tracking);
  } catch (const std::exception& e) {
    core::log::error("call of {} failed ({})", record.tool_id, typeid(e).name());
    task->reply = mcp::Reply{mcp::Reply::Status::closed, std::nullopt};
  }
  // Exactly one outcome per call (C3); an expired call was counted when it expired.
  if (!expired) {
    switch (task->reply.status) {
      case mcp::Reply::Status::result: ++admission.counters.completed; break;
      case mcp::Reply::Status::error: ++admission.counters.errored; break;
      case mcp::Reply::Status::expired: ++admission.counters.expired; break;
      case mcp::Reply::Status::cancelled: ++admission.counters.cancelled_while_queued; break;
      default: ++admission.counters.transport_lost; break;
    }
  }
  if (task->reply.abandoned) {
    if (admission.counters.abandoned_in_flight > 0) --admission.counters.abandoned_in_flight;
    core::log::info("abandoned call {} of {} ended ({})", record.request_id, record.tool_id,
                    task->reply.status == mcp::Reply::Status::result ? "answered, dropped"
                                                                      : "not answered");
  }
  const char* outcome = expired ? "expired"
                        : task->reply.status == mcp::Reply::Status::result ? "completed"
                        : task->reply.status == mcp::Reply::Status::error  ? "errored"
                        : task->reply.status == mcp::Reply::Status::expired ? "expired"
                                                                           : "transport_lost";
  const auto took = std::chrono::steady_clock::now() - record.started_at;
  latency_.observe(std::chrono::duration<double>(took).count());
  audit_.record({task->reply.abandoned ? "abandoned_call" : "call", record.client,
                 record.server, task->tool_name, outcome,
                 std::chrono::duration_cast<std::chrono::milliseconds>(took).count(),
                 task->server->generation()});
  if (admission.counters.in_flight > 0) --admission.counters.in_flight;
  task->operator_cancel = task->operator_cancel || record.cancelled_by_operator;
  task->permit.release();
  task->record_live = false;
  pending_.erase(task->record);  // `record` is gone from here on
  if (pending_.empty() && idle_) idle_->set();
  task->ended = !task->reply.abandoned;
  task->settled.set();
}

std::chrono::milliseconds Gateway::call_timeout(
    const Downstream& server, std::optional<std::chrono::milliseconds> asked) const {
  std::chrono::milliseconds t = asked.value_or(server.config().timeout.value_or(
      config_->policy.call_timeout));
  return std::min(t, config_->policy.max_call);
}

std::string Gateway::list_pending(std::optional<std::string_view> server) const {
  bj::array calls;
  for (const auto& c : pending_) {
    if (server && c.server != *server) continue;
    bj::object row;
    row["request_id"] = c.request_id;
    row["tool_id"] = c.tool_id;
    row["state"] = to_string(c.state);
    row["age_ms"] = age_ms(c.started_at);
    row["client"] = c.client;
    row["timeout_ms"] = c.timeout.count();
    if (c.state == PendingCall::State::abandoned) row["abandoned_ms"] = age_ms(c.abandoned_at);
    calls.push_back(std::move(row));
  }
  bj::object out;
  out["count"] = calls.size();
  out["calls"] = std::move(calls);
  return structured_result(out);
}

std::string Gateway::cancel_call(std::string_view request_id, bool force) {
  for (auto& c : pending_) {
    if (c.request_id != request_id) continue;
    bool healthy = c.state == PendingCall::State::running &&
                   std::chrono::steady_clock::now() - c.started_at < c.timeout;
    if (force) {
      std::string instead =
          healthy ? fmt::format("{} is running within its timeout: wait for it to end (or to "
                                "pass its timeout, then cancel it without force)",
                                c.request_id)
                  : fmt::format("{} can be cancelled without force", c.request_id);
      if (std::string why = force_refusal("gateway.cancel", instead); !why.empty()) {
        return error_result(why);
      }
    }
    if (healthy && !force) {
      return error_result(fmt::format(
          "{} is running within its timeout; cancel it anyway with force: true", c.request_id));
    }
    if (c.state == PendingCall::State::abandoned) {
      return error_result(fmt::format(
          "{} is already abandoned: the downstream was told to cancel and its slot is held "
          "until it answers or exits",
          c.request_id));
    }
    c.cancelled_by_operator = true;
    std::string id = c.request_id;
    audit_.record({"cancel", "operator", c.server, c.tool_id, "cancelled", -1, 0});
    c.work_cancel.cancel();  // may end the call (and erase `c`) synchronously when queued
    return structured_result(bj::object{{"request_id", id}, {"cancelled", true}});
  }
  return error_result("no pending call has that request_id; see gateway.list_pending");
}

asio::awaitable<void> Gateway::drain(std::chrono::milliseconds bound) {
  if (pending_.empty()) co_return;
  idle_ = std::make_unique<core::Event>(io_);
  co_await idle_->wait_for(bound);
  if (!pending_.empty()) {
    core::log::info("drain: {} call(s) still pending after the drain bound", pending_.size());
  }
}

}  // namespace sluice::gateway
