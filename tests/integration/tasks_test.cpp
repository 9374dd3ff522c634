// The tasks extension (io.modelcontextprotocol/tasks) brokered by sluice, through the real binary
// over HTTP, with the conformance fixture in its 2026-07-28 form behind it: a task created for a
// caller that declared the extension is shown under a gateway id and followed to its end, its
// questions answered with tasks/update; a caller without the extension gets plain calls and
// -32021; unknown ids -32602; the operator sees tasks in gateway.list_pending and cancels them
// with gateway.cancel; a task lost with its server reports failed. With the fixture's 2025 form,
// sluice runs the task itself (OwnTasks). Also the Mcp-Param headers a listed tool's
// x-mcp-header asks for, checked on the front end.
#include "harness.hpp"
#include "http_fixture.hpp"

#include <thread>

namespace sluice::test {
namespace {

const std::string kVersion = R"("io.modelcontextprotocol/protocolVersion":"2026-07-28")";
// _meta of a caller with the tasks extension (and elicitation), and of one without.
const std::string kWithTasks = R"("_meta":{)" + kVersion +
                               R"(,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},)"
                               R"("extensions":{"io.modelcontextprotocol/tasks":{}}}})";
const std::string kWithout =
    R"("_meta":{)" + kVersion + R"(,"io.modelcontextprotocol/clientCapabilities":{}})";

class Tasks : public HttpFrontEnd {
 protected:
  // The fixture in its 2026-07-28 form (`era`), which runs tasks itself, or its 2025 form.
  void SetUp() override { serve("2026-07-28"); }
  void serve(const std::string& era) {
    bj::array args;
    if (!era.empty()) args = bj::array{"--era", era};
    entry_ = bj::serialize(bj::object{{"command", CONFORMANCE_SERVER},
                                      {"args", args},
                                      {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}});
    // A cancelled call the fixture never answers is not waited for long at shutdown.
    policy_ = R"("sluice":{"drainMs":500})";
    start({"--expose", "meta,all"}, "c");
  }
  Headers modern(const std::string& method, const std::string& name = "") const {
    Headers h = headers();
    h.emplace_back("MCP-Protocol-Version", "2026-07-28");
    h.emplace_back("Mcp-Method", method);
    if (!name.empty()) h.emplace_back("Mcp-Name", name);
    return h;
  }
  // A stateless request; its whole answer (result or error) and the HTTP status.
  std::pair<int, bj::value> send(const std::string& method, const std::string& params,
                                 const std::string& name = "", Headers extra = {}) {
    Headers h = modern(method, name);
    h.insert(h.end(), extra.begin(), extra.end());
    auto r = post(rpc(std::to_string(++id_), method, params), h);
    return {r.status, r.body.empty() ? bj::value() : bj::parse(r.body)};
  }
  bj::value call(const std::string& tool, const std::string& args, const std::string& meta) {
    return send("tools/call", R"({"name":")" + tool + R"(","arguments":)" + args + "," + meta + "}",
                tool)
        .second;
  }
  bj::value task_request(const std::string& method, const std::string& task,
                         const std::string& meta = kWithTasks, const std::string& more = "") {
    return send(method, R"({"taskId":")" + task + R"(")" + more + "," + meta + "}", task).second;
  }
  // tasks/get until the task's status is `status` or an end (bounded by the guard).
  bj::value wait_status(const std::string& task, std::string_view status) {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    for (;;) {
      bj::value got = task_request("tasks/get", task);
      const auto* result = got.as_object().if_contains("result");
      std::string now = result ? std::string(result->at("status").as_string()) : "";
      if (now == status || now == "completed" || now == "failed" || now == "cancelled" ||
          std::chrono::steady_clock::now() > deadline) {
        return got;
      }
      std::this_thread::sleep_for(20ms);  // the fixture's task runs on; nothing to block on
    }
  }
  bj::value meta_tool(const std::string& tool, const std::string& args) {
    bj::value answer = call(tool, args, kWithout);
    EXPECT_TRUE(answer.as_object().contains("result")) << tool << ": " << answer;
    return answer.as_object().contains("result") ? answer.at("result") : bj::value(bj::object());
  }
  int id_ = 0;
};

TEST_F(Tasks, ACallerWithTheExtensionGetsATaskUnderAGatewayIdFollowedToItsResult) {
  auto created = call("c__slow_compute", R"({"seconds":0.2,"label":"sum"})", kWithTasks);
  const auto& task = created.at("result").as_object();
  EXPECT_EQ(task.at("resultType"), "task") << created;
  std::string id(task.at("taskId").as_string());
  EXPECT_TRUE(id.starts_with("task-")) << "the gateway's id, not the server's: " << id;
  EXPECT_EQ(id.find("fixture"), std::string::npos) << id;
  EXPECT_TRUE(task.contains("createdAt") && task.contains("ttlMs")) << created;

  auto done = wait_status(id, "completed");
  const auto& result = done.at("result").as_object();
  EXPECT_EQ(result.at("status"), "completed") << done;
  EXPECT_EQ(result.at("taskId").as_string(), id) << "the answer names the gateway's id again";
  EXPECT_EQ(text_of(result.at("result")), "Computed sum after 0.2 s") << done;
}

TEST_F(Tasks, WithoutTheExtensionACallRunsPlainAndTheTasksRequestsAreRefused) {
  auto plain = call("c__slow_compute", R"({"seconds":0,"label":"now"})", kWithout);
  EXPECT_EQ(plain.at("result").at("resultType"), "complete") << plain;
  EXPECT_EQ(text_of(plain.at("result")), "Computed now after 0 s") << plain;

  // A tool that runs only as a task: the server's -32021 reaches the caller as the error it is.
  auto required = call("c__failing_job", "{}", kWithout);
  ASSERT_TRUE(required.as_object().contains("error")) << required;
  EXPECT_EQ(required.at("error").at("code"), -32021) << required;
  EXPECT_TRUE(required.at("error")
                  .at("data")
                  .at("requiredCapabilities")
                  .at("extensions")
                  .as_object()
                  .contains("io.modelcontextprotocol/tasks"))
      << required;

  auto created = call("c__slow_compute", R"({"seconds":0})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());
  for (std::string method : {"tasks/get", "tasks/cancel"}) {
    auto refused = task_request(method, id, kWithout);
    EXPECT_EQ(refused.at("error").at("code"), -32021) << method << ": " << refused;
  }
}

TEST_F(Tasks, AnIdSluiceDidNotIssueIsUnknownAndTheRemovedMethodsAreNotFound) {
  for (std::string id : {"task-forged", "fixture-task-1"}) {
    auto unknown = task_request("tasks/get", id);
    EXPECT_EQ(unknown.at("error").at("code"), -32602) << unknown;
  }
  auto [status, removed] = send("tasks/list", "{" + kWithTasks + "}");
  EXPECT_EQ(status, 404);
  EXPECT_EQ(removed.at("error").at("code"), -32601) << removed;
  // The routing header names the task: one that differs is refused before anything runs.
  auto created = call("c__slow_compute", R"({"seconds":0})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());
  auto [mismatch_status, mismatch] =
      send("tasks/get", R"({"taskId":")" + id + R"(",)" + kWithTasks + "}", "task-other");
  EXPECT_EQ(mismatch_status, 400);
  EXPECT_EQ(mismatch.at("error").at("code"), -32020) << mismatch;
}

TEST_F(Tasks, ATaskWaitingForInputShowsItsQuestionsAndResumesWithTasksUpdate) {
  auto created = call("c__confirm_delete", R"({"filename":"notes.txt"})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());
  auto waiting = wait_status(id, "input_required");
  const auto& asked = waiting.at("result").as_object();
  ASSERT_EQ(asked.at("status"), "input_required") << waiting;
  const auto& questions = asked.at("inputRequests").as_object();
  ASSERT_EQ(questions.size(), 1u) << waiting;
  EXPECT_EQ(questions.begin()->value().at("method"), "elicitation/create") << waiting;

  std::string key(questions.begin()->key());
  auto ack = task_request(
      "tasks/update", id, kWithTasks,
      R"(,"inputResponses":{")" + key + R"(":{"action":"accept","content":{"confirm":true}}})");
  EXPECT_EQ(ack.at("result").at("resultType"), "complete") << ack;
  EXPECT_FALSE(ack.at("result").as_object().contains("taskId")) << "an empty ack: " << ack;
  auto done = wait_status(id, "completed");
  EXPECT_EQ(text_of(done.at("result").at("result")), "Deleted notes.txt") << done;
}

TEST_F(Tasks, TheOperatorSeesATaskInListPendingAndCancelsItOnlyWithForce) {
  auto created = call("c__slow_compute", R"({"seconds":60,"label":"long"})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());

  auto pending = meta_tool("gateway.list_pending", "{}");
  const auto& rows = pending.at("structuredContent").at("tasks").as_array();
  ASSERT_EQ(rows.size(), 1u) << pending;
  EXPECT_EQ(rows[0].at("task_id").as_string(), id);
  EXPECT_EQ(rows[0].at("tool_id"), "c::slow_compute");
  EXPECT_EQ(rows[0].at("status"), "working");
  EXPECT_EQ(pending.at("structuredContent").at("task_count"), 1);

  auto refused = meta_tool("gateway.cancel", R"({"request_id":")" + id + R"("})");
  EXPECT_TRUE(is_error(refused)) << refused;
  EXPECT_NE(text_of(refused).find("force: true"), std::string::npos) << refused;
  EXPECT_EQ(task_request("tasks/get", id).at("result").at("status"), "working")
      << "refused: still running";

  auto cancelled = meta_tool("gateway.cancel", R"({"request_id":")" + id + R"(","force":true})");
  EXPECT_FALSE(is_error(cancelled)) << cancelled;
  EXPECT_EQ(cancelled.at("structuredContent").at("cancelled"), true) << cancelled;
  EXPECT_EQ(wait_status(id, "cancelled").at("result").at("status"), "cancelled");
}

TEST_F(Tasks, ATaskLostWithItsServerReportsFailed) {
  auto created = call("c__slow_compute", R"({"seconds":60})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());
  auto restarted = meta_tool("gateway.restart_server", R"({"server_name":"c","force":true})");
  EXPECT_FALSE(is_error(restarted)) << restarted;
  auto lost = task_request("tasks/get", id);
  const auto& result = lost.at("result").as_object();
  EXPECT_EQ(result.at("status"), "failed") << lost;
  EXPECT_EQ(result.at("taskId").as_string(), id);
  EXPECT_NE(std::string(result.at("error").at("message").as_string()).find("restarted"),
            std::string::npos)
      << lost;
}

TEST_F(Tasks, AToolsMcpParamHeaderIsRequiredAndMustMatchItsArgument) {
  // As a client does: the listing says which argument travels as a header.
  auto listed = send("tools/list", "{" + kWithout + "}").second;
  bool annotated = false;
  for (const auto& tool : listed.at("result").at("tools").as_array()) {
    if (tool.at("name") != "c__test_param_header") continue;
    annotated = tool.at("inputSchema").at("properties").at("region").at("x-mcp-header") == "Region";
  }
  EXPECT_TRUE(annotated) << listed;
  const std::string params =
      R"({"name":"c__test_param_header","arguments":{"region":"eu west"},)" + kWithout + "}";
  auto [missing_status, missing] = send("tools/call", params, "c__test_param_header");
  EXPECT_EQ(missing_status, 400) << missing;
  EXPECT_EQ(missing.at("error").at("code"), -32020) << missing;

  auto [wrong_status, wrong] =
      send("tools/call", params, "c__test_param_header", {{"Mcp-Param-Region", "us"}});
  EXPECT_EQ(wrong_status, 400) << wrong;
  auto [bad_status, bad] = send("tools/call", params, "c__test_param_header",
                                {{"Mcp-Param-Region", "=?base64?ZXUgd2VzdA?=" /* no padding */}});
  EXPECT_EQ(bad_status, 400) << bad;

  // Plain, and in the Base64 form ("eu west").
  for (std::string sent : {"eu west", "=?base64?ZXUgd2VzdA==?="}) {
    auto [ok_status, ok] =
        send("tools/call", params, "c__test_param_header", {{"Mcp-Param-Region", sent}});
    EXPECT_EQ(ok_status, 200) << sent << ": " << ok;
    EXPECT_EQ(text_of(ok.at("result")), "Region: eu west") << ok;
  }
}

// The same tools in the fixture's 2025 form: a 2025 server has no tasks, so sluice runs a call
// of a tool that declares execution.taskSupport as a task itself.
class OwnTasks : public Tasks {
 protected:
  void SetUp() override { serve(""); }
};

TEST_F(OwnTasks, SluiceRunsA2025ToolsCallAsATaskFollowedToItsResult) {
  auto created = call("c__slow_compute", R"({"seconds":0.2,"label":"sum"})", kWithTasks);
  const auto& task = created.at("result").as_object();
  ASSERT_EQ(task.at("resultType"), "task") << created;
  std::string id(task.at("taskId").as_string());
  EXPECT_TRUE(id.starts_with("task-")) << id;
  EXPECT_EQ(task.at("status"), "working");
  auto done = wait_status(id, "completed");
  EXPECT_EQ(done.at("result").at("status"), "completed") << done;
  EXPECT_EQ(text_of(done.at("result").at("result")), "Computed sum after 0.2 s") << done;
  // Ended, it stays readable for its ttlMs.
  EXPECT_EQ(task_request("tasks/get", id).at("result").at("status"), "completed");
}

TEST_F(OwnTasks, TheServersQuestionIsTheTasksInputRequestAnsweredByTasksUpdate) {
  auto created = call("c__confirm_delete", R"({"filename":"notes.txt"})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());
  auto waiting = wait_status(id, "input_required");
  const auto& questions = waiting.at("result").at("inputRequests").as_object();
  ASSERT_EQ(questions.size(), 1u) << waiting;
  EXPECT_EQ(questions.begin()->value().at("method"), "elicitation/create");
  std::string key(questions.begin()->key());
  auto ack = task_request(
      "tasks/update", id, kWithTasks,
      R"(,"inputResponses":{")" + key + R"(":{"action":"accept","content":{"confirm":true}}})");
  EXPECT_EQ(ack.at("result").at("resultType"), "complete") << ack;
  auto done = wait_status(id, "completed");
  EXPECT_EQ(text_of(done.at("result").at("result")), "Deleted notes.txt") << done;
}

TEST_F(OwnTasks, AProtocolErrorFailsTheTaskWhereAToolErrorCompletesIt) {
  auto crashed = call("c__protocol_error_job", "{}", kWithTasks);
  auto failed = wait_status(std::string(crashed.at("result").at("taskId").as_string()), "failed");
  const auto& f = failed.at("result").as_object();
  EXPECT_EQ(f.at("status"), "failed") << failed;
  EXPECT_TRUE(f.at("error").at("code").is_int64()) << failed;
  EXPECT_FALSE(f.contains("result")) << failed;

  auto tool_error = call("c__failing_job", "{}", kWithTasks);
  auto completed =
      wait_status(std::string(tool_error.at("result").at("taskId").as_string()), "completed");
  EXPECT_EQ(completed.at("result").at("status"), "completed") << completed;
  EXPECT_TRUE(is_error(completed.at("result").at("result"))) << completed;
}

TEST_F(OwnTasks, AToolThatRunsOnlyAsATaskRefusesACallerWithoutTheExtension) {
  auto refused = call("c__failing_job", "{}", kWithout);
  ASSERT_TRUE(refused.as_object().contains("error")) << refused;
  EXPECT_EQ(refused.at("error").at("code"), -32021) << refused;
  // A tool that may run either way runs as a plain call.
  auto plain = call("c__slow_compute", R"({"seconds":0,"label":"now"})", kWithout);
  EXPECT_EQ(text_of(plain.at("result")), "Computed now after 0 s") << plain;
}

TEST_F(OwnTasks, CancellingEndsTheCallAndTheOperatorSeesTheTask) {
  auto created = call("c__slow_compute", R"({"seconds":60})", kWithTasks);
  std::string id(created.at("result").at("taskId").as_string());
  auto pending = meta_tool("gateway.list_pending", "{}");
  EXPECT_EQ(pending.at("structuredContent").at("count"), 1) << "the call runs: " << pending;
  EXPECT_EQ(pending.at("structuredContent").at("task_count"), 1) << pending;
  auto ack = task_request("tasks/cancel", id);
  EXPECT_EQ(ack.at("result").at("resultType"), "complete") << ack;
  EXPECT_EQ(task_request("tasks/get", id).at("result").at("status"), "cancelled");
  EXPECT_EQ(task_request("tasks/cancel", id).at("result").at("resultType"), "complete")
      << "cancelling an ended task is the same ack";
}

TEST_F(OwnTasks, AQuestionNeedingACapabilityTheCallerDidNotDeclareIsRefusedToTheServer) {
  const std::string no_elicitation =
      R"("_meta":{)" + kVersion +
      R"(,"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})";
  auto created = call("c__confirm_delete", R"({"filename":"x"})", no_elicitation);
  std::string id(created.at("result").at("taskId").as_string());
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  bj::value got;
  do {
    got = task_request("tasks/get", id, no_elicitation);
    EXPECT_NE(got.at("result").at("status"), "input_required") << "never asked: " << got;
    std::this_thread::sleep_for(20ms);  // until the server has its answer
  } while (got.at("result").at("status") == "working" &&
           std::chrono::steady_clock::now() < deadline);
  // The server was answered as by a client without elicitation, and decided: a tool error.
  EXPECT_EQ(got.at("result").at("status"), "completed") << got;
  EXPECT_TRUE(is_error(got.at("result").at("result"))) << got;
  EXPECT_NE(text_of(got.at("result").at("result")).find("Method not found"), std::string::npos)
      << got;
}

}  // namespace
}  // namespace sluice::test
