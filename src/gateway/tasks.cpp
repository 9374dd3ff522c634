// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) brokered between sluice's
// 2026-07-28 clients and the servers that offer it.
//  - A call of a caller that declared the extension declares it to the server too (only when the
//    server offers it: DownstreamPeer::dress); a server that answers with a CreateTaskResult has
//    its task held in the TaskTable under a gateway id bound to that caller (broker_task), and
//    the call ends there: its permits are given back, the task runs on in the server.
//  - tasks/get, tasks/update and tasks/cancel name the gateway id; each is sent to the server
//    under the server's id, and the answer carries the gateway id again (serve_task_request). The
//    result a completed task inlines is guarded (redaction, output cap) as any tool result.
//  - A task whose server stopped or restarted since is lost: tasks/get reports it failed.
//  - The operator sees every task in gateway.list_pending and cancels one through
//    gateway.cancel (cancel_task).
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "core/wall_clock.hpp"
#include "gateway/gateway.hpp"
#include "gateway/results.hpp"
#include "mcp/era.hpp"
#include "mcp/tool_result.hpp"

#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <charconv>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

namespace {

// A string member's value, or empty when it is absent or not a string.
std::string string_member(std::string_view object_text, std::string_view key) {
  return cj::string_member(object_text, key).value_or("");
}

// The server's ttlMs (an integer of milliseconds); nullopt when it said none (absent or null).
std::optional<std::chrono::milliseconds> ttl_of(std::string_view result) {
  auto ttl = cj::member_span(result, "ttlMs");
  if (!ttl) return std::nullopt;
  std::string_view text = cj::trim(*ttl);
  std::int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return std::chrono::milliseconds(ms);
}

InvokeOutcome refused(std::string text) {
  return InvokeOutcome{true, mcp::error_result(text), true};
}

// Tells `server` to cancel its task `server_task`, without waiting for the answer.
void cancel_at_server(asio::io_context& io, Downstream& server, const std::string& server_task,
                      std::chrono::milliseconds timeout) {
  std::string params = R"({"taskId":)" + cj::quote(server_task) + "}";
  core::spawn(
      io,
      [](asio::awaitable<mcp::Reply> sent) -> asio::awaitable<void> {
        co_await std::move(sent);
      }(server.forward("tasks/cancel", std::move(params), timeout, nullptr)),
      "a task's cancel");
}

// How long sluice keeps a task it runs itself, and how often its client is asked to look.
constexpr std::chrono::milliseconds kOwnTaskKept{3600000};
constexpr int kOwnTaskPollMs = 500;

std::string now_text() { return core::utc_text(std::chrono::system_clock::now()); }

// A DetailedTask (tasks/get's result) of `task` in `status`, with `members` (",\"result\":..."
// and the like) after its Task fields.
std::string detailed(const BrokeredTask& task, std::string_view status, std::string_view members) {
  return fmt::format(R"({{"taskId":{},"status":{},"createdAt":{},"lastUpdatedAt":{},"ttlMs":{},)"
                     R"("pollIntervalMs":{}{}}})",
                     cj::quote(task.id), cj::quote(status), cj::quote(task.created_at),
                     cj::quote(task.updated_at.empty() ? now_text() : task.updated_at),
                     task.ttl_ms > 0 ? std::to_string(task.ttl_ms) : "null", kOwnTaskPollMs,
                     members);
}

// tasks/get of a task its server no longer holds (it stopped or restarted since): failed.
std::string lost_task(const BrokeredTask& task) {
  const std::string why = fmt::format(
      "server {} stopped or restarted after it created this task, which was lost with it",
      task.server);
  return detailed(task, "failed",
                  fmt::format(R"(,"error":{{"code":{},"message":{}}})", rpc::code::kInternalError,
                              cj::quote(why)));
}

}  // namespace

InvokeOutcome Gateway::broker_task(Downstream& server, const std::string& tool_label,
                                   const std::string& caller, const std::string& client_label,
                                   InvokeOutcome answer) {
  const std::string server_task = string_member(answer.result(), "taskId");
  if (server_task.empty()) {
    return refused(tool_label + " answered with a task that has no taskId");
  }
  const auto timeout = config_->policy.call_timeout;
  if (caller.empty()) {
    // Declared to no server for this caller: a server that makes a task anyway is told to
    // cancel it, and the caller, which could not follow it, is told why.
    cancel_at_server(io_, server, server_task, timeout);
    return refused(tool_label + " answered with a task, which its caller did not ask for");
  }
  BrokeredTask task;
  task.server = server.name();
  task.server_task = server_task;
  task.tool_id = tool_label;
  task.caller = caller;
  task.client = client_label;
  task.generation = server.generation();
  task.status = string_member(answer.result(), "status");
  task.created_at = string_member(answer.result(), "createdAt");
  const auto ttl = ttl_of(answer.result());
  task.ttl_ms = ttl ? ttl->count() : 0;
  std::optional<std::string> id = tasks_.add(std::move(task), ttl);
  if (!id) {
    cancel_at_server(io_, server, server_task, timeout);
    return refused(fmt::format(
        "{} answered with a task, but sluice holds as many running tasks as it may ({}); "
        "retry once some have ended",
        tool_label, TaskTable::kDefaultCapacity));
  }
  core::log::info("{} created task {} for {}", tool_label, *id, client_label);
  cj::replace_member(answer.result_text(), "taskId", cj::quote(*id));
  return answer;
}

std::string Gateway::task_caller(const mcp::IncomingRequest& request) {
  if (!mcp::declares_tasks(request.message())) return {};
  return request.session()->client_key();
}

asio::awaitable<Gateway::TaskSupport> Gateway::task_support(std::string tool) {
  if (!options_.expose_all) co_return TaskSupport{};
  auto [server, own_name] = aggregate_.resolve_public(tool);
  if (!server) co_return TaskSupport{};
  // Started (and listed) when it is not yet: only its listing says.
  ResolvedTool resolved =
      co_await fleet_.resolve_tool(server->name() + "::" + own_name, Fleet::Need::online);
  if (!resolved.server || !resolved.tool) co_return TaskSupport{};
  co_return TaskSupport{resolved.tool->task_support, resolved.server->peer().offers_tasks()};
}

asio::awaitable<void> Gateway::start_task(mcp::IncomingRequest& request, std::string caller) {
  const auto* params = request.message().params_object();
  auto [server, own_name] = aggregate_.resolve_public(params->at("name").get_string());
  BrokeredTask task;
  task.server = server->name();
  task.tool_id = server->name() + "::" + own_name;
  task.caller = std::move(caller);
  task.client = request.session()->label();
  task.generation = server->generation();
  task.status = "working";
  task.created_at = task.updated_at = now_text();
  task.ttl_ms = kOwnTaskKept.count();
  task.exchange = bridge_.start_task(request, kOwnTaskKept);
  const std::uint64_t exchange = task.exchange;
  const std::string tool_id = task.tool_id;
  std::optional<std::string> id = tasks_.add(std::move(task), kOwnTaskKept);
  if (!id) {
    bridge_.task_cancel(exchange);
    request.respond_result(mcp::error_result(fmt::format(
        "{} was not started: sluice holds as many running tasks as it may ({}); retry once "
        "some have ended",
        tool_id, TaskTable::kDefaultCapacity)));
    co_return;
  }
  core::log::info("{} runs as task {} for {}", tool_id, *id, request.session()->label());
  const BrokeredTask& held = *tasks_.find(*id);
  std::string created = detailed(held, "working", "");
  created.insert(1, R"("resultType":"task",)");
  request.respond_result(created);
}

void Gateway::serve_own_task(mcp::IncomingRequest& request, BrokeredTask& task) {
  const rpc::Message& m = request.message();
  const std::string& method = m.method();
  const bool ended = TaskTable::ended(task.status);
  if (method == "tasks/update") {
    if (!ended) bridge_.task_update(task.exchange, m.params_member("inputResponses").value());
    request.respond_result("{}");
    return;
  }
  if (method == "tasks/cancel") {
    if (!ended) {
      bridge_.task_cancel(task.exchange);
      task.status = "cancelled";
      task.updated_at = now_text();
    }
    request.respond_result("{}");
    return;
  }
  if (!ended) {
    std::optional<InputBridge::TaskState> state = bridge_.task_state(task.exchange, m);
    if (!state) state = InputBridge::TaskState{"failed", {}};  // ended by its bound
    if (state->status != task.status) task.updated_at = now_text();
    task.status = state->status;
    if (TaskTable::ended(task.status)) {
      task.final_members = std::move(state->members);
    } else {
      request.respond_result(detailed(task, task.status, state->members));
      return;
    }
  }
  request.respond_result(detailed(task, task.status, task.final_members));
}

std::vector<std::pair<std::string, std::string>> Gateway::param_headers(
    std::string_view tool) const {
  if (!options_.expose_all) return {};
  auto [server, own_name] = aggregate_.resolve_public(tool);
  return server ? server->peer().param_headers(own_name)
                : std::vector<std::pair<std::string, std::string>>();
}

asio::awaitable<void> Gateway::serve_task_request(mcp::IncomingRequest& request, std::string caller,
                                                  bool declared) {
  if (!declared) {
    request.respond_error_raw(mcp::refusal_error(mcp::tasks_not_declared()));
    co_return;
  }
  const rpc::Message& m = request.message();
  const std::string method = m.method();
  const bj::object* params = m.params_object();
  const bj::value* id = params ? params->if_contains("taskId") : nullptr;
  if (!id || !id->is_string()) {
    request.respond_error(rpc::code::kInvalidParams, "Invalid params: taskId must be a string");
    co_return;
  }
  if (method == "tasks/update") {
    const bj::value* responses = params->if_contains("inputResponses");
    if (!responses || !responses->is_object()) {
      request.respond_error(rpc::code::kInvalidParams,
                            "Invalid params: inputResponses must be an object");
      co_return;
    }
  }
  BrokeredTask* found = tasks_.find(id->get_string(), caller);
  if (!found) {
    request.respond_error(rpc::code::kInvalidParams, "Invalid params: no task has that taskId");
    co_return;
  }
  if (found->exchange != 0) {
    serve_own_task(request, *found);
    co_return;
  }
  // Copied: the table may change while the server answers.
  const BrokeredTask task = *found;
  Downstream* d = fleet_.find(task.server);
  if (!d || d->generation() != task.generation || d->phase() != Phase::online) {
    if (method == "tasks/get") {
      found->status = "failed";
      request.respond_result(lost_task(task));
    } else if (method == "tasks/cancel") {
      request.respond_result("{}");
    } else {
      request.respond_error(rpc::code::kInvalidParams,
                            "Invalid params: the task was lost with its server");
    }
    co_return;
  }
  std::string sent(m.params());
  cj::replace_member(sent, "taskId", cj::quote(task.server_task));
  mcp::Reply reply = co_await d->forward(method, std::move(sent), config_->policy.call_timeout,
                                         &request.cancel_signal());
  if (reply.status == mcp::Reply::Status::cancelled) co_return;  // the caller left
  answer_server_task(request, task, *d, std::move(reply));
}

void Gateway::answer_server_task(mcp::IncomingRequest& request, const BrokeredTask& task,
                                 const Downstream& d, mcp::Reply reply) {
  const std::string& method = request.message().method();
  if (reply.status == mcp::Reply::Status::error) {
    auto code = cj::member_span(reply.message->error(), "code");
    if (code && cj::trim(*code) == std::to_string(rpc::code::kInvalidParams)) {
      tasks_.erase(task.id);  // the server no longer knows it (expired there)
      request.respond_error(rpc::code::kInvalidParams, "Invalid params: no task has that taskId");
    } else {
      request.respond_error(
          rpc::code::kInternalError,
          fmt::format("server {} refused {} of the task: {}", task.server, method,
                      safe_peer_message(string_member(reply.message->error(), "message"))));
    }
    return;
  }
  if (!reply.ok()) {
    request.respond_error(
        rpc::code::kInternalError,
        fmt::format("server {} did not answer {} of the task", task.server, method));
    return;
  }
  std::string result(reply.message->result());
  cj::replace_member(result, "taskId", cj::quote(task.id));
  std::string status = string_member(result, "status");
  // A cancel the server acknowledged ends the task for sluice (its server may not hold it up).
  if (method == "tasks/cancel" && !TaskTable::ended(task.status)) status = "cancelled";
  if (BrokeredTask* held = tasks_.find(task.id); held && !status.empty()) held->status = status;
  if (auto inlined = cj::member_span(result, "result")) {
    // A completed task's tool result: redacted and cut as it would be from the call itself.
    if (auto guarded = results_.apply(d.config(),
                                      std::string_view(task.tool_id).substr(task.server.size() + 2),
                                      cj::trim(*inlined))) {
      cj::replace_member(result, "result", *guarded);
    }
  }
  request.respond_result(result);
}

asio::awaitable<std::string> Gateway::cancel_task(std::string task_id, bool force) {
  BrokeredTask* found = tasks_.find(task_id);
  if (!found) {
    co_return mcp::error_result("no pending call or task has that id; see gateway.list_pending");
  }
  if (TaskTable::ended(found->status)) {
    co_return mcp::error_result(
        fmt::format("task {} has already ended ({})", task_id, found->status));
  }
  if (!force) {
    co_return mcp::error_result(
        fmt::format("task {} is {} at its server; cancel it anyway with force: true", task_id,
                    found->status.empty() ? "running" : found->status));
  }
  if (std::string why = governance_.force_refusal(
          "gateway.cancel", fmt::format("task {} is running: wait for it to end", task_id));
      !why.empty()) {
    co_return mcp::error_result(why);
  }
  if (found->exchange != 0) {
    bridge_.task_cancel(found->exchange);
    found->status = "cancelled";
    found->updated_at = now_text();
    audit_.record({"cancel", "operator", found->server,
                   found->tool_id.substr(found->server.size() + 2), "task cancelled", -1,
                   found->generation});
    co_return mcp::structured_result(bj::object{{"task_id", task_id}, {"cancelled", true}});
  }
  const BrokeredTask task = *found;
  Downstream* d = fleet_.find(task.server);
  if (!d || d->generation() != task.generation || d->phase() != Phase::online) {
    found->status = "failed";
    co_return mcp::error_result(
        fmt::format("task {} was lost with server {}, which stopped since", task_id, task.server));
  }
  std::string tool(std::string_view(task.tool_id).substr(task.server.size() + 2));
  audit_.record(
      {"cancel", "operator", task.server, std::move(tool), "task cancelled", -1, task.generation});
  mcp::Reply reply =
      co_await d->forward("tasks/cancel", R"({"taskId":)" + cj::quote(task.server_task) + "}",
                          config_->policy.call_timeout, nullptr);
  if (!reply.ok()) {
    co_return mcp::error_result(
        fmt::format("server {} did not accept the cancel of task {}", task.server, task_id));
  }
  if (BrokeredTask* held = tasks_.find(task_id)) held->status = "cancelled";
  co_return mcp::structured_result(bj::object{{"task_id", task_id}, {"cancelled", true}});
}

}  // namespace sluice::gateway
