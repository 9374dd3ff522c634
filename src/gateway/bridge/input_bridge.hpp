#pragma once
// InputBridge: the era bridge between a 2026-07-28 client and 2025-era downstreams, for the
// requests the revision lets a server answer with input_required (tools/call, prompts/get,
// resources/read).
//
// A 2025 downstream asks its client for sampling, elicitation or roots with a request of its
// own in the middle of a call; a 2026 client takes no server-to-client requests and expects
// an input_required result instead, then retries with `inputResponses` and the echoed
// `requestState`. So each such request is served as an exchange: the work runs in a session
// of its own (a bridge session, served by the gateway's usual client handler), and whatever
// that session would send its client is caught here:
//  - its answer answers the client's request (of whichever round is waiting);
//  - a request the downstream sends (relayed to the bridge session as to any client) becomes
//    an entry of `inputRequests`; the requests sent together are gathered into one
//    input_required, with a sealed requestState (request_state.hpp) naming the exchange and
//    the round. The downstream's request stays waiting; the work keeps its permit;
//  - the retry opens the requestState (refused with -32602 when it is forged, altered, another
//    caller's or request's, expired, or already used), hands each response to the request it
//    answers, re-requests what is missing, and waits again;
//  - a request needing a capability the retry's clientCapabilities do not declare ends the
//    exchange with -32021 (data.requiredCapabilities), so only declared capabilities are ever
//    requested of the client;
//  - progress goes to the waiting request under its own token, and log messages only when it
//    set `_meta` logLevel, at that level or above.
// A client that does not retry within the bound (the requestState's expiry: the call timeout
// when it was minted) has its exchange ended: the work is cancelled as any cancelled call (its
// permit kept by the downstream request until it answers), and the ending is counted. Closing
// the request (HTTP stream closed, notifications/cancelled) cancels the work the same way.
//
// Ownership: the Gateway owns the bridge; the bridge owns its exchanges, each with its session
// and handler, until their work lets go of them. Threading: the gateway's loop thread.
#include "core/clock.hpp"
#include "core/limits.hpp"
#include "gateway/bridge/request_state.hpp"
#include "mcp/era.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::gateway {

namespace asio = boost::asio;

class InputBridge {
 public:
  // The handler of an exchange's session; `task`: the exchange runs a task (see start_task).
  using MakeHandler =
      std::function<std::unique_ptr<mcp::Handler>(std::shared_ptr<mcp::Session>, bool task)>;
  struct Counters {
    std::uint64_t input_required = 0;      // input_required results sent
    std::uint64_t resumed = 0;             // retries that continued an exchange
    std::uint64_t refused_states = 0;      // requestStates refused (-32602)
    std::uint64_t missing_capability = 0;  // exchanges ended with -32021
    std::uint64_t abandoned = 0;           // exchanges whose client did not retry in time
  };

  InputBridge(asio::io_context& io, const core::Limits& limits, MakeHandler make_handler);
  ~InputBridge();
  InputBridge(const InputBridge&) = delete;
  InputBridge& operator=(const InputBridge&) = delete;

  // The methods a 2026-07-28 request is bridged for.
  static bool bridges(std::string_view method);
  // Who a 2026-07-28 caller is, from the session its request came on: the client key of its
  // exchanges' sessions, and what its tasks are bound to (gateway/tasks.cpp).
  static std::string caller_key(const mcp::Session& front);
  // Serves stateless `request` (a method bridges() names; `era` its classification): a new
  // exchange, or, with a requestState, the next round of one. `wait_bound` bounds how long
  // an input_required waits for its retry.
  asio::awaitable<void> serve(mcp::IncomingRequest& request, const mcp::RequestEra& era,
                              std::chrono::milliseconds wait_bound);
  // Ends every exchange (at shutdown): their work is cancelled.
  void end_all();

  // The tasks extension for a tool whose server does not broker tasks itself (a 2025 server's
  // tool that declares execution.taskSupport): the call `request` (a stateless tools/call) is
  // started as an exchange that is the task, and not waited for. Its state is read with
  // task_state (tasks/get), its questions answered with task_update (tasks/update), and it is
  // ended with task_cancel (tasks/cancel) or after `keep`. Returns the exchange's id.
  std::uint64_t start_task(mcp::IncomingRequest& request, std::chrono::milliseconds keep);
  // A task's status ("working", "input_required", "completed", "failed") and the members a
  // DetailedTask adds for it (",\"inputRequests\":{...}", ",\"result\":{...}" or
  // ",\"error\":{...}"; empty for working). A question needing a capability `request` (the
  // tasks/get) does not declare is never shown: the server gets "method not found", as from a
  // client without it, and decides. Once the status is final the exchange is let go: nullopt
  // for an exchange not held (ended, cancelled, expired).
  struct TaskState {
    std::string status;
    std::string members;
  };
  std::optional<TaskState> task_state(std::uint64_t id, const rpc::Message& request);
  // Hands each of `responses` (a JSON object, raw) to the question of that key still open;
  // others are ignored. False when the exchange is not held.
  bool task_update(std::uint64_t id, std::string_view responses);
  // Ends the task's exchange: its work is cancelled.
  void task_cancel(std::uint64_t id);

  const Counters& counters() const { return counters_; }
  // Exchanges waiting for their client's retry.
  std::size_t waiting() const { return exchanges_.size(); }

 private:
  class Exchange;
  // A new exchange running `request` in a bridge session of its own.
  std::shared_ptr<Exchange> open(mcp::IncomingRequest& request, bool task);
  asio::awaitable<void> start(mcp::IncomingRequest& request, const mcp::RequestEra& era,
                              std::chrono::milliseconds wait_bound);
  asio::awaitable<void> resume(mcp::IncomingRequest& request, const mcp::RequestEra& era,
                               std::chrono::milliseconds wait_bound);
  // Waits for the exchange's answer or its next questions, and answers `request` with it.
  asio::awaitable<void> run_round(std::shared_ptr<Exchange> exchange, mcp::IncomingRequest& request,
                                  const mcp::RequestEra& era, std::chrono::milliseconds wait_bound);
  void ask_for_input(Exchange& exchange, mcp::IncomingRequest& request,
                     std::chrono::milliseconds wait_bound);
  // Ends `exchange`: its work is cancelled (nothing when it already answered).
  void end(Exchange& exchange);
  // Destroys the ended exchanges whose work has let go.
  void reap();

  asio::io_context& io_;
  const core::Limits& limits_;
  MakeHandler make_handler_;
  StateSealer sealer_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::shared_ptr<Exchange>> exchanges_;  // open ones
  std::vector<std::shared_ptr<Exchange>> ended_;  // kept while their work holds them
  Counters counters_;
};

}  // namespace sluice::gateway
