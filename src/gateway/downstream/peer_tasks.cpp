// A 2025-11-25 server's own tasks (its experimental `tasks` capability): a tool it runs only as
// a task (execution.taskSupport "required") is refused as a plain call, so sluice calls it
// task-augmented and waits for its result with tasks/result, which the server answers once the
// task ends (the questions it asks meanwhile arrive as its requests, relayed as any other). To
// sluice's caller it is one call, as for any other tool (a 2026-07-28 caller may still follow
// it as a task of sluice's: gateway/tasks.cpp).
#include "core/json.hpp"
#include "core/spawn.hpp"
#include "gateway/downstream/peer.hpp"
#include "mcp/era.hpp"

namespace sluice::gateway {
namespace cj = core::json;

namespace {

// How long the tasks/cancel sent for an abandoned task may wait for its answer.
constexpr std::chrono::milliseconds kCancelTimeout{5000};
// The metadata a task's result repeats (its taskId): nothing to sluice's callers.
constexpr std::string_view kRelatedTask = "io.modelcontextprotocol/related-task";

std::string task_id_of(std::string_view create_result) {
  auto task = cj::member_span(create_result, "task");
  return task ? cj::string_member(*task, "taskId").value_or("") : std::string();
}

}  // namespace

bool DownstreamPeer::augments_tasks(std::string_view tool) const {
  if (modern_) return false;
  const ToolEntry* entry = find_tool(tool);
  if (!entry || entry->task_support != TaskSupportLevel::required) return false;
  auto tasks = cj::member_span(server_capabilities_, "tasks");
  auto requests = tasks ? cj::member_span(*tasks, "requests") : std::nullopt;
  auto tools = requests ? cj::member_span(*requests, "tools") : std::nullopt;
  return tools && cj::member_span(*tools, "call").has_value();
}

asio::awaitable<mcp::Reply> DownstreamPeer::follow_task(mcp::Reply created,
                                                        std::chrono::milliseconds timeout,
                                                        core::CancelSignal* cancel,
                                                        const mcp::CallTracking* tracking) {
  if (!created.ok()) co_return created;
  const std::string id = task_id_of(created.message->result());
  if (id.empty()) co_return created;  // answered at once, not as a task
  auto session = session_;            // keeps the session alive across a teardown
  const std::string params = R"({"taskId":)" + cj::quote(id) + "}";
  mcp::Reply reply =
      co_await session->request("tasks/result", params, timeout, cancel, nullptr, tracking);
  if (reply.status == mcp::Reply::Status::cancelled ||
      reply.status == mcp::Reply::Status::timeout) {
    // The caller gave up: so does the server's task.
    core::spawn(
        io_,
        [](std::shared_ptr<mcp::Session> s, std::string p) -> asio::awaitable<void> {
          co_await s->request("tasks/cancel", std::move(p), kCancelTimeout);
        }(session, params),
        "a server task's cancel");
  }
  if (!reply.ok()) co_return reply;
  std::string result = mcp::without_meta_member(reply.message->result(), kRelatedTask);
  auto frame = rpc::parse(R"({"jsonrpc":"2.0","id":0,"result":)" + result + "}",
                          cj::ParseLimits{limits_.max_json_depth}, rpc::Strictness::peer);
  auto* message = std::get_if<rpc::Message>(&frame);
  if (!message) co_return reply;
  co_return mcp::Reply(mcp::Reply::Status::result, std::move(*message));
}

}  // namespace sluice::gateway
