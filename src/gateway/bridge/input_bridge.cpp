#include "gateway/bridge/input_bridge.hpp"

#include "core/json.hpp"
#include "core/log.hpp"
#include "rpc/message.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

namespace {

// What a requestState is bound to besides its caller: the method and what it names.
std::string subject_of(const rpc::Message& message) {
  const bj::object* params = message.params_object();
  std::string_view key = message.method() == "resources/read" ? "uri" : "name";
  const bj::value* v = params ? params->if_contains(key) : nullptr;
  std::string_view name = v && v->is_string() ? std::string_view(v->get_string()) : "";
  return message.method() + " " + std::string(name);
}

// The raw text of `_meta.<key>` of a request's params, when present.
std::optional<std::string_view> meta_member(const rpc::Message& message, std::string_view key) {
  auto meta = message.params_member("_meta");
  return meta ? cj::member_span(*meta, key) : std::nullopt;
}

std::string_view caller_of(const mcp::IncomingRequest& request) {
  return request.session()->peer();
}

}  // namespace

// One bridged request: the bridge session doing its work, and what that session sends.
class InputBridge::Exchange : public mcp::Outbox, public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(asio::io_context& io, std::uint64_t id, std::string subject, std::string caller)
      : id(id), subject(std::move(subject)), caller(std::move(caller)), wake(io), expiry(io) {}

  struct Ask {
    std::string key;     // its name in inputRequests
    std::string method;  // sampling/createMessage, elicitation/create or roots/list
    std::string params;  // raw JSON, as the downstream sent them
    std::string id;      // the raw id the bridge session sent it with
  };

  const std::uint64_t id;
  const std::string subject;
  const std::string caller;
  std::shared_ptr<mcp::Session> session;
  std::unique_ptr<mcp::Handler> handler;
  std::deque<Ask> asks;               // not shown to the client yet
  std::vector<Ask> shown;             // in the latest input_required, waiting for their responses
  std::optional<std::string> answer;  // the work's response frame
  bool work_ended = false;            // the work ended without an answer (cancelled)
  bool gathered = false;              // the asks sent together have all arrived
  bool gather_posted = false;
  bool ended = false;
  std::uint32_t round = 0;  // input_required results sent so far
  std::uint64_t next_key = 1;
  core::Timer wake;    // wakes the request waiting for this exchange
  core::Timer expiry;  // the bound on the client's retry
  // The client request of the current round, while one waits.
  mcp::IncomingRequest* current = nullptr;
  std::string log_level;       // its _meta logLevel (empty: no log messages)
  std::string progress_token;  // its progressToken, raw (empty: no progress)

  // The bridge session's answer to the work: it answers the waiting request.
  void send_response(std::string frame, std::string_view /*request_id*/) override {
    answer = std::move(frame);
    wake.cancel();
  }
  void request_finished(std::string_view /*request_id*/) override {
    work_ended = true;
    wake.cancel();
  }
  void send(std::string frame) override { from_work(frame); }
  void send_related(std::string frame, std::string_view /*related*/) override { from_work(frame); }

  // Hands the bridge session a response frame (an answer to one of its requests).
  void deliver(std::string frame, const core::Limits& limits) {
    auto parsed =
        rpc::parse(std::move(frame), cj::ParseLimits{limits.max_json_depth}, rpc::Strictness::peer);
    if (auto* m = std::get_if<rpc::Message>(&parsed)) session->on_message(std::move(*m));
  }

  // Puts back the shown questions taken out to be walked, before any shown meanwhile.
  void keep_shown(std::vector<Ask> kept) {
    for (auto& ask : shown) kept.push_back(std::move(ask));
    shown = std::move(kept);
  }

  const core::Limits* limits = nullptr;

 private:
  // A request or notification the bridge session sends its client.
  void from_work(std::string_view frame) {
    std::string scratch;
    auto method_literal = cj::member_span(frame, "method");
    auto method = method_literal ? cj::string_value(*method_literal, scratch) : std::nullopt;
    if (!method) return;
    std::string name(*method);
    std::string params(cj::member_span(frame, "params").value_or("{}"));
    if (auto id_text = cj::member_span(frame, "id")) {
      take_ask(std::move(name), std::move(params), std::string(cj::trim(*id_text)));
      return;
    }
    if (!current || current->answered()) return;
    if (name == "notifications/message") {
      // Only for a request that asked for log messages, at its level or above.
      std::string level_scratch;
      auto level_literal = cj::member_span(params, "level");
      auto level = level_literal ? cj::string_value(*level_literal, level_scratch) : std::nullopt;
      auto rank = level ? mcp::log_level_rank(*level) : std::nullopt;
      if (log_level.empty() || !rank || *rank < mcp::log_level_rank(log_level).value_or(0)) return;
    } else if (name == "notifications/progress") {
      // Under the waiting request's own token (a retry names a new one, or none).
      auto token = cj::member_span(params, "progressToken");
      if (progress_token.empty() || !token) return;
      std::string_view t = cj::trim(*token);
      std::size_t at = static_cast<std::size_t>(t.data() - params.data());
      params.replace(at, t.size(), progress_token);
    } else {
      return;  // list changes and resource updates reach subscribers, not a request
    }
    current->session()->notify(name, params, current->message().id());
  }

  void take_ask(std::string method, std::string params, std::string id) {
    std::string_view need = mcp::required_client_capability(method);
    if (need.empty()) {
      // Nothing a client serves: refused at once, as a 2025 client would.
      deliver(rpc::make_error(id, rpc::code::kMethodNotFound, "Method not found"), *limits);
      return;
    }
    std::string key = fmt::format("{}-{}", need, next_key++);
    asks.push_back(Ask{std::move(key), std::move(method), std::move(params), std::move(id)});
    // The requests the downstream sent together arrive in one turn of the loop: the waiting
    // request is woken after it, so that one input_required carries them all.
    if (gather_posted) return;
    gather_posted = true;
    asio::post(wake.get_executor(), [alive = weak_from_this()] {
      auto self = alive.lock();
      if (!self) return;
      self->gather_posted = false;
      self->gathered = true;
      self->wake.cancel();
    });
  }
};

InputBridge::InputBridge(asio::io_context& io, const core::Limits& limits, MakeHandler make_handler)
    : io_(io), limits_(limits), make_handler_(std::move(make_handler)) {}

InputBridge::~InputBridge() {
  for (auto& [id, exchange] : exchanges_) exchange->session->detach();
  for (auto& exchange : ended_) exchange->session->detach();
}

std::string InputBridge::caller_key(const mcp::Session& front) {
  return "stateless " + front.peer();
}

bool InputBridge::bridges(std::string_view method) {
  return method == "tools/call" || method == "prompts/get" || method == "resources/read";
}

asio::awaitable<void> InputBridge::serve(mcp::IncomingRequest& request, const mcp::RequestEra& era,
                                         std::chrono::milliseconds wait_bound) {
  reap();
  if (request.message().params_member("requestState")) {
    co_await resume(request, era, wait_bound);
  } else {
    co_await start(request, era, wait_bound);
  }
}

asio::awaitable<void> InputBridge::start(mcp::IncomingRequest& request, const mcp::RequestEra& era,
                                         std::chrono::milliseconds wait_bound) {
  co_await run_round(open(request, false), request, era, wait_bound);
}

std::shared_ptr<InputBridge::Exchange> InputBridge::open(mcp::IncomingRequest& request, bool task) {
  const rpc::Message& m = request.message();
  // The work's request is the client's as it came (its arguments byte-exact). The
  // inputResponses of a first call answer nothing yet: the work never reads them (a tool's
  // call sends only its arguments on).
  rpc::Message work = m;
  auto exchange =
      std::make_shared<Exchange>(io_, next_id_++, subject_of(m), std::string(caller_of(request)));
  exchange->limits = &limits_;
  mcp::SessionOptions options;
  options.label = request.session()->label();
  options.strictness = rpc::Strictness::client;
  options.limits = &limits_;
  exchange->session = mcp::Session::create(io_, options);
  // A 2026-07-28 client has no session: its exchanges are one client, its caller, when a
  // downstream's request is attributed (aggregate/client_relay.hpp).
  exchange->session->set_client_key(caller_key(*request.session()));
  // Every request the downstream sends reaches the exchange, which checks it against the
  // capabilities of the request waiting at the time.
  exchange->session->set_peer_capabilities(R"({"sampling":{},"elicitation":{},"roots":{}})");
  exchange->handler = make_handler_(exchange->session, task);
  exchange->session->attach(exchange.get(), exchange->handler.get());
  exchanges_.emplace(exchange->id, exchange);
  exchange->session->on_message(std::move(work));
  return exchange;
}

asio::awaitable<void> InputBridge::resume(mcp::IncomingRequest& request, const mcp::RequestEra& era,
                                          std::chrono::milliseconds wait_bound) {
  const rpc::Message& m = request.message();
  const bj::object* params = m.params_object();
  const bj::value* token = params ? params->if_contains("requestState") : nullptr;
  std::optional<SealedState> state;
  if (token && token->is_string()) {
    state = sealer_.open(token->get_string(), subject_of(m), caller_of(request));
  }
  std::shared_ptr<Exchange> exchange;
  if (state && core::Clock::now() < state->expires) {
    auto it = exchanges_.find(state->exchange);
    if (it != exchanges_.end() && it->second->round == state->round && !it->second->current) {
      exchange = it->second;
    }
  }
  if (!exchange) {
    // One answer for every refusal: which check failed is not the client's to probe.
    ++counters_.refused_states;
    request.respond_error(rpc::code::kInvalidParams,
                          "Invalid params: requestState is not a valid, unexpired state of a "
                          "request waiting for this client's input");
    co_return;
  }
  ++counters_.resumed;
  exchange->expiry.cancel();
  // Each response to the request it answers; what is missing is asked again.
  auto responses = m.params_member("inputResponses");
  std::vector<Exchange::Ask> shown = std::move(exchange->shown);
  exchange->shown.clear();
  for (auto it = shown.rbegin(); it != shown.rend(); ++it) {
    auto response = responses ? cj::member_span(*responses, it->key) : std::nullopt;
    if (response && cj::trim(*response).front() == '{') {
      exchange->deliver(rpc::make_result(it->id, cj::trim(*response)), limits_);
    } else {
      exchange->asks.push_front(std::move(*it));
    }
  }
  exchange->gathered = !exchange->asks.empty();
  co_await run_round(exchange, request, era, wait_bound);
}

asio::awaitable<void> InputBridge::run_round(std::shared_ptr<Exchange> exchange,
                                             mcp::IncomingRequest& request,
                                             const mcp::RequestEra& era,
                                             std::chrono::milliseconds wait_bound) {
  Exchange& ex = *exchange;
  ex.current = &request;
  ex.log_level = era.log_level;
  ex.progress_token = std::string(meta_member(request.message(), "progressToken").value_or(""));
  // The client leaving (stream closed, notifications/cancelled) ends the exchange.
  const std::uint64_t registration =
      request.cancel_signal().on_cancel([this, exchange] { end(*exchange); });
  while (!request.answered() && !request.cancelled()) {
    if (ex.answer) {
      std::string_view frame = *ex.answer;
      if (auto result = cj::member_span(frame, "result")) {
        request.respond_result(cj::trim(*result));
      } else if (auto error = cj::member_span(frame, "error")) {
        request.respond_error_raw(cj::trim(*error));
      }
      end(ex);
      break;
    }
    if (ex.ended || ex.work_ended) {
      request.respond_error(rpc::code::kInternalError, "the request ended before its answer");
      end(ex);
      break;
    }
    if (ex.gathered && !ex.asks.empty()) {
      ask_for_input(ex, request, wait_bound);
      break;
    }
    boost::system::error_code ec;
    ex.wake.expires_at(core::Clock::time_point::max());
    co_await ex.wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  request.cancel_signal().remove(registration);
  ex.current = nullptr;
}

void InputBridge::ask_for_input(Exchange& ex, mcp::IncomingRequest& request,
                                std::chrono::milliseconds wait_bound) {
  // Only what the client declared is ever asked of it.
  auto declared = meta_member(request.message(), mcp::meta_key::kClientCapabilities);
  bj::object missing;
  for (const auto& ask : ex.asks) {
    std::string_view need = mcp::required_client_capability(ask.method);
    if (!declared || !cj::member_span(*declared, need)) missing[need] = bj::object();
  }
  if (!missing.empty()) {
    ++counters_.missing_capability;
    std::string names;
    for (const auto& [name, value] : missing)
      names += (names.empty() ? "" : ", ") + std::string(name);
    request.respond_error_raw(fmt::format(
        R"({{"code":{},"message":{},"data":{{"requiredCapabilities":{}}}}})",
        mcp::era_code::kMissingRequiredClientCapability,
        cj::quote("Missing required client capability: " + names), bj::serialize(missing)));
    end(ex);
    return;
  }
  ++ex.round;
  const auto expires = core::Clock::now() + wait_bound;
  std::string inputs;
  for (auto& ask : ex.asks) {
    inputs += inputs.empty() ? "{" : ",";
    inputs += fmt::format(R"({}:{{"method":{},"params":{}}})", cj::quote(ask.key),
                          cj::quote(ask.method), ask.params);
    ex.shown.push_back(std::move(ask));
  }
  inputs += "}";
  ex.asks.clear();
  ex.gathered = false;
  std::string state = sealer_.seal(SealedState{ex.id, ex.round, expires}, ex.subject, ex.caller);
  ++counters_.input_required;
  request.respond_result(
      fmt::format(R"({{"resultType":"input_required","inputRequests":{},"requestState":{}}})",
                  inputs, cj::quote(state)));
  // A client that does not come back by the expiry has its exchange ended.
  ex.expiry.expires_at(expires);
  ex.expiry.async_wait([this, id = ex.id, round = ex.round](boost::system::error_code ec) {
    if (ec) return;
    auto it = exchanges_.find(id);
    if (it == exchanges_.end() || it->second->round != round || it->second->current) return;
    ++counters_.abandoned;
    core::log::info(
        "a request waiting for its client's input was not resumed in time: its "
        "work is cancelled");
    end(*it->second);
  });
}

void InputBridge::end(Exchange& ex) {
  if (ex.ended) return;
  ex.ended = true;
  ex.expiry.cancel();
  ex.wake.cancel();
  auto it = exchanges_.find(ex.id);
  if (it == exchanges_.end()) return;
  std::shared_ptr<Exchange> kept = std::move(it->second);
  exchanges_.erase(it);
  // Closing the session cancels the work (the call keeps its permit until the downstream
  // answers) and fails the requests still waiting for the client.
  kept->session->on_closed();
  ended_.push_back(std::move(kept));
}

void InputBridge::reap() {
  std::erase_if(ended_, [](const std::shared_ptr<Exchange>& ex) {
    if (ex->session->pending_incoming() > 0 || ex->handler->has_work()) return false;
    ex->session->detach();
    return true;
  });
}

std::uint64_t InputBridge::start_task(mcp::IncomingRequest& request,
                                      std::chrono::milliseconds keep) {
  reap();
  std::shared_ptr<Exchange> exchange = open(request, true);
  // A task nobody follows to its end is ended when it is no longer kept.
  exchange->expiry.expires_after(keep);
  exchange->expiry.async_wait([this, id = exchange->id](boost::system::error_code ec) {
    if (ec) return;
    if (auto it = exchanges_.find(id); it != exchanges_.end()) end(*it->second);
  });
  return exchange->id;
}

std::optional<InputBridge::TaskState> InputBridge::task_state(std::uint64_t id,
                                                              const rpc::Message& request) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return std::nullopt;
  // Held, and its questions walked as a list of their own: an answer delivered below may
  // resume the relay that waits for it at once (core::Wakeup), before deliver() returns.
  const std::shared_ptr<Exchange> held = it->second;
  Exchange& ex = *held;
  TaskState state;
  if (ex.answer) {
    std::string_view frame = *ex.answer;
    if (auto error = cj::member_span(frame, "error")) {
      state = TaskState{"failed", R"(,"error":)" + std::string(cj::trim(*error))};
    } else {
      auto result = cj::member_span(frame, "result");
      state =
          TaskState{"completed", R"(,"result":)" + std::string(cj::trim(result.value_or("{}")))};
    }
    end(ex);
    return state;
  }
  if (ex.work_ended) {
    end(ex);
    return TaskState{
        "failed", fmt::format(R"(,"error":{{"code":{},"message":{}}})", rpc::code::kInternalError,
                              cj::quote("the call ended without an answer"))};
  }
  // Every open question, under the key it keeps until answered.
  for (auto& ask : ex.asks) ex.shown.push_back(std::move(ask));
  ex.asks.clear();
  if (ex.shown.empty()) return TaskState{"working", {}};
  // A question needing a capability the caller does not declare is answered to the server as
  // a client without it would answer (the server decides what then): it is never shown.
  auto declared = meta_member(request, mcp::meta_key::kClientCapabilities);
  std::vector<Exchange::Ask> asked = std::exchange(ex.shown, {});
  std::vector<Exchange::Ask> shown;
  for (auto& ask : asked) {
    std::string_view need = mcp::required_client_capability(ask.method);
    if (declared && cj::member_span(*declared, need)) {
      shown.push_back(std::move(ask));
      continue;
    }
    ++counters_.missing_capability;
    ex.deliver(rpc::make_error(ask.id, rpc::code::kMethodNotFound, "Method not found"), limits_);
  }
  ex.keep_shown(std::move(shown));
  if (ex.shown.empty()) return TaskState{"working", {}};
  std::string inputs;
  for (const auto& ask : ex.shown) {
    inputs += inputs.empty() ? "{" : ",";
    inputs += fmt::format(R"({}:{{"method":{},"params":{}}})", cj::quote(ask.key),
                          cj::quote(ask.method), ask.params);
  }
  return TaskState{"input_required", R"(,"inputRequests":)" + inputs + "}"};
}

bool InputBridge::task_update(std::uint64_t id, std::string_view responses) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return false;
  const std::shared_ptr<Exchange> held = it->second;  // as in task_state
  Exchange& ex = *held;
  std::vector<Exchange::Ask> asked = std::exchange(ex.shown, {});
  std::vector<Exchange::Ask> still;
  for (auto& ask : asked) {
    auto response = cj::member_span(responses, ask.key);
    if (response && cj::trim(*response).front() == '{') {
      ex.deliver(rpc::make_result(ask.id, cj::trim(*response)), limits_);
    } else {
      still.push_back(std::move(ask));
    }
  }
  ex.keep_shown(std::move(still));
  return true;
}

void InputBridge::task_cancel(std::uint64_t id) {
  if (auto it = exchanges_.find(id); it != exchanges_.end()) end(*it->second);
}

void InputBridge::end_all() {
  std::vector<std::uint64_t> ids;
  for (const auto& [id, exchange] : exchanges_) ids.push_back(id);
  for (auto id : ids) {
    if (auto it = exchanges_.find(id); it != exchanges_.end()) end(*it->second);
  }
}

}  // namespace sluice::gateway
