// gateway.invoke end to end: validation, admission, the downstream request and the answer to
// the caller (invariants A1-A3, C1-C4). The call itself (its ledger record, its permits, its
// outcome, what happens once its caller gives up) is a Call (calls/call.hpp).
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/calls/call.hpp"
#include "gateway/gateway.hpp"
#include "gateway/results.hpp"
#include "mcp/era.hpp"
#include "mcp/tool_result.hpp"

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <array>
#include <typeinfo>

namespace sluice::gateway {
namespace bj = boost::json;
namespace cj = core::json;

namespace {

// Invariant C2: past the abandon bound, a stdio child is still doing the work and keeps its
// permit; a remote server's work has no process sluice can watch end, so its call expires at
// the bound and gives the permit back (counted expired).
bool holds_after_expiry(const Downstream& d) {
  return std::holds_alternative<config::StdioServer>(d.config().transport);
}

constexpr const char* kCancelledByOperator =
    " was cancelled by an operator (gateway.cancel, or a forced restart_server, "
    "disconnect_server or refresh)";

InvokeOutcome refuse(const std::string& text) {
  return InvokeOutcome{true, mcp::error_result(text), true};
}
// The caller cancelled: nothing may be sent to it.
InvokeOutcome silent() { return InvokeOutcome{false, {}, true}; }

// The caller's cancel, passed on to the call's one work cancel while invoke waits.
class CancelLink {
 public:
  CancelLink(core::CancelSignal* from, core::CancelSignal& to) : from_(from) {
    if (from_) registration_ = from_->on_cancel([&to] { to.cancel(); });
  }
  ~CancelLink() {
    if (from_) from_->remove(registration_);
  }
  CancelLink(const CancelLink&) = delete;
  CancelLink& operator=(const CancelLink&) = delete;

 private:
  core::CancelSignal* from_;
  std::uint64_t registration_ = 0;
};

// The arguments checked against the tool's input schema: empty when they may be sent, else
// why not (value-free).
std::string check_arguments(const ToolEntry& tool, const std::string& tool_label,
                            const Gateway::InvokeRequest& request, bool allow_unvalidated,
                            std::size_t max_json_depth) {
  if (!tool.validator() && !tool.schema_problem().empty()) {
    // A schema sluice cannot compile (a regex RE2 refuses, a remote $ref): the arguments
    // cannot be checked, so the call is refused unless the operator allows it.
    if (!allow_unvalidated) {
      return fmt::format(
          "{} cannot be validated: its input schema is not usable ({}); sluice does not call a "
          "tool it cannot validate (the operator may allow it with "
          "sluice.allowUnvalidatedTools)",
          tool_label, tool.schema_problem());
    }
    core::log::debug("calling {} without validation (sluice.allowUnvalidatedTools)", tool_label);
  }
  if (!tool.validator()) return {};
  boost::system::result<bj::value, cj::ParseError> args = bj::value();
  if (!request.parsed_arguments) {
    args = cj::parse_strict(request.arguments_json.empty() ? "{}" : request.arguments_json,
                            cj::ParseLimits{max_json_depth});
    if (!args) return "arguments are not valid JSON: " + args.error().message;
  }
  auto problems =
      tool.validator()->validate(request.parsed_arguments ? *request.parsed_arguments : *args);
  if (problems.empty()) return {};
  std::string text = fmt::format("arguments do not match the input schema of {}:", tool_label);
  for (const auto& p : problems) text += "\n" + schema::format(p);
  core::log::info("refused a call to {}: {} schema problem(s)", tool_label, problems.size());
  return text;
}

struct Stage {
  Budget* budget;
  const char* name;
};

// Admission (A1-A3) as far as it goes without a wait: each stage's slot taken in turn while
// one is free. The index of the first stage not granted (stages.size() when all were), for
// admit to go on from; a call admitted at once costs no coroutine frame.
std::size_t admit_now(Call& call, const std::array<Stage, 3>& stages) {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (!stages[i].budget) continue;
    auto now = stages[i].budget->try_acquire(&call.work_cancel(), call.permit());
    if (now != Budget::Outcome::granted) return i;
  }
  return stages.size();
}

// Admission (A1-A3) from stage `first` on: each stage's budget in turn, each with its queue.
// Empty when every slot was granted (into the call's permit), else the answer to the caller;
// the call has then ended.
asio::awaitable<std::optional<InvokeOutcome>> admit(Call& call, const std::array<Stage, 3>& stages,
                                                    std::size_t first,
                                                    const config::GatewayPolicy& policy,
                                                    const std::string& tool_label) {
  const CallRecord& record = call.record();
  for (std::size_t i = first; i < stages.size(); ++i) {
    const Stage& stage = stages[i];
    if (!stage.budget) continue;
    auto outcome =
        co_await stage.budget->acquire(policy.queue_timeout, &call.work_cancel(), call.permit());
    if (outcome == Budget::Outcome::granted) continue;
    const bool by_operator = record.cancelled_by_operator;
    const std::string server = record.server;
    const std::string tool(std::string_view(record.tool_id).substr(server.size() + 2));
    switch (outcome) {
      case Budget::Outcome::cancelled:
        call.refused(Call::Outcome::cancelled_while_queued);
        if (by_operator) co_return refuse(tool_label + kCancelledByOperator);
        co_return silent();
      case Budget::Outcome::overflow:
        call.refused(Call::Outcome::rejected_overflow);
        co_return refuse(fmt::format(
            "server {}, tool {}: the {} budget of {} calls in flight is full and its queue "
            "({} waiting) is full; retry later",
            server, tool, stage.name, stage.budget->capacity(), policy.queue_size));
      default:
        call.refused(Call::Outcome::rejected_queue_timeout);
        co_return refuse(fmt::format(
            "server {}, tool {}: the {} budget of {} calls in flight stayed full for {} ms; "
            "retry later",
            server, tool, stage.name, stage.budget->capacity(), policy.queue_timeout.count()));
    }
  }
  co_return std::nullopt;
}

// The answer to a caller whose downstream request settled (the call has ended).
// A result is taken with the frame it came in (InvokeOutcome::downstream), not copied out.
InvokeOutcome answer_of(mcp::Reply& reply, bool by_operator, const std::string& server,
                        const std::string& tool_label, std::chrono::milliseconds timeout) {
  switch (reply.status) {
    case mcp::Reply::Status::result: {
      InvokeOutcome outcome{true, {}, false};
      outcome.downstream = std::move(reply.message);
      return outcome;
    }
    case mcp::Reply::Status::error: {
      // A capability the caller must declare is the caller's to know, as a protocol error.
      auto code = cj::member_span(reply.message->error(), "code");
      if (code &&
          cj::trim(*code) == std::to_string(mcp::era_code::kMissingRequiredClientCapability)) {
        InvokeOutcome outcome = refuse(tool_label + " needs a client capability not declared");
        outcome.error_json = mcp::refusal_error(mcp::tasks_not_declared());
        return outcome;
      }
      std::string message;
      auto m = cj::member_span(reply.message->error(), "message");
      bj::error_code ec;
      bj::value mv = m ? bj::parse(*m, ec) : bj::value();
      if (!ec && mv.is_string()) message = safe_peer_message(mv.get_string());
      std::string text = fmt::format("{} answered with an error{}{}", tool_label,
                                     message.empty() ? "" : ": ", message);
      InvokeOutcome outcome = refuse(text);
      // The server's code when it is an integer (a number says nothing of the caller's values).
      bj::value cv = code ? bj::parse(*code, ec) : bj::value();
      outcome.protocol_error_json = fmt::format(
          R"({{"code":{},"message":{}}})",
          !ec && cv.is_int64() ? cv.get_int64() : rpc::code::kInternalError, cj::quote(text));
      return outcome;
    }
    case mcp::Reply::Status::closed:
      return refuse(
          fmt::format("server {} closed the connection during the call of {}", server, tool_label));
    case mcp::Reply::Status::cancelled:
      // Cancelled after admission, before the request was sent.
      if (by_operator) return refuse(tool_label + kCancelledByOperator);
      return silent();
    default:
      return refuse(fmt::format("{} did not answer within {} ms", tool_label, timeout.count()));
  }
}

// The answer to a caller whose call was abandoned: it cancelled (nothing is sent, unless an
// operator cancelled), or the timeout or the ceiling passed.
InvokeOutcome abandoned_answer(mcp::Reply::Status status, bool by_operator, bool past_ceiling,
                               const std::string& tool_label, const config::GatewayPolicy& policy,
                               std::chrono::milliseconds timeout) {
  if (status == mcp::Reply::Status::cancelled) {
    return by_operator ? refuse(tool_label + kCancelledByOperator) : silent();
  }
  if (past_ceiling) {
    return refuse(fmt::format(
        "{} did not finish within the ceiling of {} ms for any call (sluice.maxCallMs), "
        "progress or not",
        tool_label, policy.max_call.count()));
  }
  return refuse(fmt::format(
      "{} did not answer within {} ms (a timeout that each progress notification restarts)",
      tool_label, timeout.count()));
}

// A downstream's result with its secrets redacted and its text cut to its cap (ResultGuard);
// spliced as it came when neither applies.
void guard_result(InvokeOutcome& answer, const mcp::Reply& reply, ResultGuard& guard,
                  const config::ServerConfig& server, std::string_view tool) {
  if (reply.status != mcp::Reply::Status::result) return;
  if (auto rewritten = guard.apply(server, tool, answer.result())) {
    answer.downstream.reset();
    answer.result_json = std::move(*rewritten);
  }
}

// The refusal of a tool id that did not resolve; one the operator's policy withholds is a
// governance action, recorded in the audit (names only).
std::string audited(AuditRing& audit, const ResolvedTool& resolved, const std::string& client) {
  if (resolved.withheld) {
    audit.record({"refusal", client, resolved.withheld->first, resolved.withheld->second,
                  "withheld by policy", -1, 0});
  }
  return resolved.refusal;
}

// The record of a call of `tool_label` on server `server`, as `request` asked it.
CallRecord call_record(const std::string& server, const std::string& tool_label,
                       const Gateway::InvokeRequest& request, std::chrono::milliseconds timeout) {
  CallRecord record;
  record.server = server;
  record.tool_id = tool_label;
  record.client = request.client_label;  // kept for a task it may create
  record.client_session = request.client;
  record.client_request_id = request.client_request_id;
  record.timeout = timeout;
  return record;
}

}  // namespace

asio::awaitable<InvokeOutcome> Gateway::invoke(InvokeRequest request) {
  ResolvedTool resolved;
  if (auto now = fleet_.resolve_tool_now(request.tool_id, Fleet::Need::online)) {
    resolved = std::move(*now);
  } else {
    resolved = co_await fleet_.resolve_tool(request.tool_id, Fleet::Need::online);
  }
  if (!resolved.server) co_return refuse(audited(audit_, resolved, request.client_label));
  Downstream* d = resolved.server;
  const config::GatewayPolicy& policy = config_->policy;
  const std::chrono::milliseconds timeout = call_timeout(*d, request.timeout);
  // The tool list may be replaced while this call waits (list_changed, refresh, restart):
  // nothing from the entry is used after the first suspension below.
  const std::string tool_name = resolved.tool->name;
  const std::string tool_label = d->name() + "::" + tool_name;
  if (std::string why =
          check_arguments(*resolved.tool, tool_label, request, policy.allow_unvalidated_tools,
                          options_.limits.max_json_depth);
      !why.empty()) {
    co_return refuse(why);
  }
  ToolAdmission& admission = d->admission(*resolved.tool);
  Budget* write_lane = d->write_lane(*resolved.tool);
  Call call(calls_, audit_, admission, call_record(d->name(), tool_label, request, timeout),
            [d] { return d->generation(); });
  std::optional<CancelLink> link(std::in_place, request.cancel, call.work_cancel());
  // A named array: no initializer_list temporary lives across the co_await below.
  const std::array<Stage, 3> stages{Stage{&admission.budget, "tool"},
                                    Stage{write_lane, "server's write"},
                                    Stage{request.client_budget, "client"}};
  if (const std::size_t waits = admit_now(call, stages); waits < stages.size()) {
    if (auto refused = co_await admit(call, stages, waits, policy, tool_label)) {
      co_return *refused;
    }
  }
  call.admitted();

  // Every call sends sluice's own progress token; its progress restarts the timeout.
  std::chrono::steady_clock::time_point last_progress{};
  const std::uint64_t route = next_progress_token_++;
  progress_routes_[route] = ProgressRoute{request.client, std::string(request.progress_token),
                                          std::move(request.client_request_id), &last_progress};
  mcp::CallTracking tracking;
  tracking.last_progress = &last_progress;
  tracking.ceiling = call.record().started_at + policy.max_call;
  mcp::Reply reply;
  try {
    reply = co_await d->call_tool(tool_name, request.arguments_json, timeout, &call.work_cancel(),
                                  std::to_string(route), &tracking,
                                  CallerMeta{!request.task_caller.empty(), request.log_level});
  } catch (const std::exception& e) {
    core::log::error("call of {} failed ({})", tool_label, typeid(e).name());
    reply = mcp::Reply{mcp::Reply::Status::closed};
  }
  progress_routes_.erase(route);
  const bool by_operator = call.record().cancelled_by_operator;
  if (!reply.late) {
    call.end(Call::outcome_of(reply.status));
    InvokeOutcome answer = answer_of(reply, by_operator, d->name(), tool_label, timeout);
    if (reply.status == mcp::Reply::Status::result &&
        cj::string_member(answer.result(), "resultType") == "task") {
      // The work goes on as a task: its result is guarded when tasks/get inlines it.
      co_return broker_task(*d, tool_label, request.task_caller, request.client_label,
                            std::move(answer));
    }
    guard_result(answer, reply, results_, d->config(), tool_name);
    co_return std::move(answer);
  }
  // Abandoned (a cancel or the timeout): the work goes on, and keeps its permits, without
  // this caller.
  call.abandon();
  const bool past_ceiling = core::Clock::now() - call.record().started_at >= policy.max_call;
  link.reset();
  core::spawn(io_,
              Call::follow(std::move(call), std::move(reply.late),
                           AbandonPolicy{policy.abandon_bound, holds_after_expiry(*d)}),
              "an abandoned call");
  co_return abandoned_answer(reply.status, by_operator, past_ceiling, tool_label, policy, timeout);
}

std::chrono::milliseconds Gateway::call_timeout(
    const Downstream& server, std::optional<std::chrono::milliseconds> asked) const {
  std::chrono::milliseconds t =
      asked.value_or(server.config().timeout.value_or(config_->policy.call_timeout));
  return std::min(t, config_->policy.max_call);
}

std::string Gateway::list_pending(std::optional<std::string_view> server) const {
  bj::object pending = calls_.list(server);
  bj::array tasks = tasks_.list(server);
  pending["task_count"] = tasks.size();
  pending["tasks"] = std::move(tasks);
  return mcp::structured_result(pending);
}

std::string Gateway::cancel_call(std::string_view request_id, bool force) {
  CallRecord* c = calls_.find(request_id);
  if (!c) return mcp::error_result("no pending call has that request_id; see gateway.list_pending");
  bool healthy =
      c->state == CallRecord::State::running && core::Clock::now() - c->started_at < c->timeout;
  if (force) {
    std::string instead = healthy
                              ? fmt::format(
                                    "{} is running within its timeout: wait for it to end (or to "
                                    "pass its timeout, then cancel it without force)",
                                    c->request_id)
                              : fmt::format("{} can be cancelled without force", c->request_id);
    if (std::string why = governance_.force_refusal("gateway.cancel", instead); !why.empty()) {
      return mcp::error_result(why);
    }
  }
  if (healthy && !force) {
    return mcp::error_result(fmt::format(
        "{} is running within its timeout; cancel it anyway with force: true", c->request_id));
  }
  if (c->state == CallRecord::State::abandoned) {
    return mcp::error_result(fmt::format(
        "{} is already abandoned: the downstream was told to cancel and its slot is held "
        "until it answers or exits",
        c->request_id));
  }
  c->cancelled_by_operator = true;
  std::string id = c->request_id;
  audit_.record({"cancel", "operator", c->server, c->tool_id, "cancelled", -1, 0});
  c->work_cancel.cancel();  // may end the call (and close `c`) synchronously when queued
  return mcp::structured_result(bj::object{{"request_id", id}, {"cancelled", true}});
}

}  // namespace sluice::gateway
