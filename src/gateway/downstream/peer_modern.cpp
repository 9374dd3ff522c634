// The 2026-07-28 side of DownstreamPeer: the server/discover probe, sluice's _meta on every
// request, input_required completed through the client, and the subscriptions/listen streams
// that replace a modern server's unsolicited notifications and resources/subscribe.
#include "core/event.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "core/version.hpp"
#include "gateway/downstream/peer.hpp"
#include "mcp/era.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

namespace {

// How long the probe of a child waits for server/discover before falling back to initialize:
// a 2025 server answers an unknown method at once, and one that ignores it must not stall its
// start. A remote server's HTTP stack answers every POST, so its probe waits as long as
// initialize would.
constexpr std::chrono::milliseconds kProbeTimeout{5000};
// Rounds of input one request may take before sluice gives up on it.
constexpr int kMaxInputRounds = 16;
// A listen stream waits as long as the session lasts.
constexpr auto kNoTimeout = std::chrono::milliseconds::max();

mcp::Reply made_reply(mcp::Reply::Status status, std::string_view member, std::string_view json) {
  std::string frame = R"({"jsonrpc":"2.0","id":0,")";
  frame += member;
  frame += "\":";
  frame += json;
  frame += '}';
  auto parsed = rpc::parse(std::move(frame), cj::ParseLimits{}, rpc::Strictness::peer);
  auto* message = std::get_if<rpc::Message>(&parsed);
  if (!message) return mcp::Reply(mcp::Reply::Status::closed);
  return mcp::Reply(status, std::move(*message));
}

mcp::Reply error_reply(int code, std::string_view message) {
  return made_reply(mcp::Reply::Status::error, "error",
                    fmt::format(R"({{"code":{},"message":{}}})", code, cj::quote(message)));
}

// Whether `reply` refuses the version asked for (-32022) while naming 2026-07-28 among the
// ones the server supports: a server may refuse a first request so, to see the client retry.
bool retry_named(const mcp::Reply& reply) {
  if (reply.status != mcp::Reply::Status::error || !reply.message) return false;
  std::string_view error = reply.message->error();
  auto code = cj::member_span(error, "code");
  auto data = cj::member_span(error, "data");
  auto supported = data ? cj::member_span(*data, "supported") : std::nullopt;
  return code && cj::trim(*code) == std::to_string(mcp::era_code::kUnsupportedProtocolVersion) &&
         supported && supported->find(cj::quote(mcp::kStatelessVersion)) != std::string_view::npos;
}

// Runs every one of `work` at once; resumes with their replies, in the same order, once all
// have one (one that ended by an exception counts as closed).
asio::awaitable<std::vector<mcp::Reply>> all_of(asio::io_context& io,
                                                std::vector<asio::awaitable<mcp::Reply>> work) {
  struct Gather {
    explicit Gather(asio::io_context& io, std::size_t n) : replies(n), left(n), done(io) {}
    std::vector<mcp::Reply> replies;
    std::size_t left;
    core::Event done;
    void one_done() {
      if (--left == 0) done.set();
    }
  };
  auto gather = std::make_shared<Gather>(io, work.size());
  for (std::size_t i = 0; i < work.size(); ++i) {
    gather->replies[i] = mcp::Reply(mcp::Reply::Status::closed);
    core::spawn(
        io,
        [](std::shared_ptr<Gather> g, std::size_t at,
           asio::awaitable<mcp::Reply> one) -> asio::awaitable<void> {
          g->replies[at] = co_await std::move(one);
          g->one_done();
        }(gather, i, std::move(work[i])),
        "an input request relayed to the client", [gather] { gather->one_done(); });
  }
  if (!work.empty()) co_await gather->done.wait();
  co_return std::move(gather->replies);
}

}  // namespace

asio::awaitable<bool> DownstreamPeer::discover() {
  const auto bound = transport_ && transport_->remote()
                         ? limits_.initialize_timeout
                         : std::min(kProbeTimeout, limits_.initialize_timeout);
  modern_ = true;           // the probe itself carries the revision's _meta
  auto session = session_;  // a teardown during the probe resets session_
  auto reply = co_await session->request("server/discover", dress("{}"), bound);
  if (retry_named(reply)) reply = co_await session->request("server/discover", dress("{}"), bound);
  modern_ = false;
  if (!reply.ok()) co_return false;
  std::string_view result = reply.message->result();
  auto versions = cj::member_span(result, "supportedVersions");
  bj::error_code ec;
  bj::value list = versions ? bj::parse(*versions, ec) : bj::value();
  if (ec || !list.is_array()) co_return false;
  bool speaks = false;
  for (const auto& v : list.get_array()) {
    speaks = speaks || (v.is_string() && v.get_string() == mcp::kStatelessVersion);
  }
  if (!speaks) co_return false;
  modern_ = true;
  protocol_version_ = std::string(mcp::kStatelessVersion);
  auto caps = cj::member_span(result, "capabilities");
  server_capabilities_ = caps ? std::string(cj::trim(*caps)) : "{}";
  // serverInfo is in the result's _meta in this revision; a server that puts it beside the
  // capabilities is read too.
  auto meta = cj::member_span(result, "_meta");
  auto info = meta ? cj::member_span(*meta, mcp::meta_key::kServerInfo) : std::nullopt;
  read_server_info(info ? "{\"serverInfo\":" + std::string(*info) + "}" : std::string(result));
  // The list changes the server declares arrive only on a listen stream.
  std::string filter;
  for (auto [capability, key] :
       {std::pair{"tools", "toolsListChanged"}, std::pair{"prompts", "promptsListChanged"},
        std::pair{"resources", "resourcesListChanged"}}) {
    auto declared = cj::member_span(server_capabilities_, capability);
    auto changes = declared ? cj::member_span(*declared, "listChanged") : std::nullopt;
    if (!changes || cj::trim(*changes) != "true") continue;
    filter += (filter.empty() ? "" : ",") + fmt::format(R"("{}":true)", key);
  }
  if (!filter.empty()) open_listen("{" + filter + "}", nullptr);
  subscribed_uris_.clear();
  resource_listen_.reset();
  co_return true;
}

bool DownstreamPeer::offers_tasks() const {
  if (!modern_) return false;
  auto extensions = cj::member_span(server_capabilities_, "extensions");
  return extensions && cj::member_span(*extensions, mcp::kTasksExtension).has_value();
}

std::vector<std::pair<std::string, std::string>> DownstreamPeer::param_headers(
    std::string_view tool) const {
  if (!param_headers_) return {};
  auto it = param_headers_->find(std::string(tool));
  return it == param_headers_->end() ? std::vector<std::pair<std::string, std::string>>()
                                     : it->second;
}

std::string DownstreamPeer::dress(std::string params, const CallerMeta& caller) const {
  if (!modern_) return params;
  bj::object meta;
  meta[mcp::meta_key::kProtocolVersion] = mcp::kStatelessVersion;
  // What sluice can ask its clients for (the same as it offers in initialize).
  bj::object capabilities;
  if (events_.relay_request) {
    capabilities["sampling"] = bj::object();
    capabilities["elicitation"] = bj::object();
    capabilities["roots"] = bj::object();
  }
  // The tasks extension only for a caller that declared it, to a server that offers it: any
  // other call runs as it would without tasks.
  if (caller.tasks && offers_tasks()) {
    capabilities["extensions"] = bj::object{{mcp::kTasksExtension, bj::object()}};
  }
  meta[mcp::meta_key::kClientCapabilities] = std::move(capabilities);
  meta[mcp::meta_key::kClientInfo] = bj::object{{"name", "sluice"}, {"version", core::kVersion}};
  std::string_view level = caller.log_level.empty() ? log_level_ : caller.log_level;
  if (!level.empty()) meta[mcp::meta_key::kLogLevel] = level;
  return mcp::with_request_meta(params, meta);
}

asio::awaitable<mcp::Reply> DownstreamPeer::complete_input(std::string method,
                                                           const std::string& params,
                                                           mcp::Reply reply,
                                                           std::chrono::milliseconds timeout,
                                                           core::CancelSignal* cancel,
                                                           const mcp::CallTracking* tracking) {
  auto session = session_;  // keeps the session alive across a teardown
  for (int round = 0; modern_ && reply.ok(); ++round) {
    std::string_view result = reply.message->result();
    if (cj::string_member(result, "resultType") != "input_required") co_return reply;
    if (round == kMaxInputRounds) {
      co_return error_reply(
          rpc::code::kInternalError,
          fmt::format("the server asked for input more than {} times", kMaxInputRounds));
    }
    auto requests = cj::member_span(result, "inputRequests");
    auto state = cj::member_span(result, "requestState");
    bj::error_code ec;
    bj::value asked = requests ? bj::parse(*requests, ec) : bj::value(bj::object());
    if (ec || !asked.is_object()) {
      co_return error_reply(rpc::code::kInternalError,
                            "the server asked for input in a malformed inputRequests");
    }
    // Every question at once, as the server asked them: a client reached through the era
    // bridge sees them in one input_required.
    std::vector<std::string> keys;
    std::vector<asio::awaitable<mcp::Reply>> relays;
    for (const auto& [key, request] : asked.get_object()) {
      const bj::object* r = request.if_object();
      const bj::value* m = r ? r->if_contains("method") : nullptr;
      const bj::value* p = r ? r->if_contains("params") : nullptr;
      std::string_view name = m && m->is_string() ? std::string_view(m->get_string()) : "";
      if (mcp::required_client_capability(name).empty() || !events_.relay_request) {
        co_return error_reply(rpc::code::kMethodNotFound,
                              "the server asked for input sluice cannot relay to its client");
      }
      keys.emplace_back(key);
      relays.push_back(events_.relay_request(std::string(name), p ? bj::serialize(*p) : "{}"));
    }
    std::vector<mcp::Reply> answers = co_await all_of(io_, std::move(relays));
    std::string responses = "{";
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (!answers[i].ok()) co_return std::move(answers[i]);  // the client could not or would not
      responses += (responses.size() > 1 ? "," : "") + cj::quote(keys[i]) + ":" +
                   std::string(answers[i].message->result());
    }
    responses += '}';
    std::vector<mcp::ResultMember> retry{{"inputResponses", responses}};
    if (state) retry.push_back({"requestState", std::string(cj::trim(*state))});
    reply = co_await session->request(method, mcp::with_members(params, retry), timeout, cancel,
                                      nullptr, tracking);
  }
  co_return reply;
}

std::optional<mcp::Reply> DownstreamPeer::modern_instead(std::string_view method,
                                                         std::string_view params) {
  if (!modern_) return std::nullopt;
  if (method == "logging/setLevel") {
    log_level_ = cj::string_member(params, "level").value_or("");
    return made_reply(mcp::Reply::Status::result, "result", "{}");
  }
  if (method != "resources/subscribe" && method != "resources/unsubscribe") return std::nullopt;
  std::string uri = cj::string_member(params, "uri").value_or("");
  if (method == "resources/subscribe") {
    subscribed_uris_.insert(uri);
  } else {
    subscribed_uris_.erase(uri);
  }
  reopen_resource_listen();
  return made_reply(mcp::Reply::Status::result, "result", "{}");
}

void DownstreamPeer::reopen_resource_listen() {
  if (resource_listen_) resource_listen_->cancel();
  resource_listen_.reset();
  if (subscribed_uris_.empty()) return;
  std::string uris;
  for (const auto& uri : subscribed_uris_) uris += (uris.empty() ? "" : ",") + cj::quote(uri);
  resource_listen_ = std::make_shared<core::CancelSignal>();
  open_listen(R"({"resourceSubscriptions":[)" + uris + "]}", resource_listen_);
}

void DownstreamPeer::open_listen(std::string filter, std::shared_ptr<core::CancelSignal> cancel) {
  auto session = session_;
  auto open = listens_open_;
  std::string params = dress(R"({"notifications":)" + filter + "}");
  ++*open;
  // Only what the coroutine holds is used after its wait: the peer may have moved on.
  core::spawn(
      io_,
      [](std::shared_ptr<mcp::Session> session, std::shared_ptr<std::size_t> open,
         std::string params, std::shared_ptr<core::CancelSignal> cancel) -> asio::awaitable<void> {
        co_await session->request("subscriptions/listen", std::move(params), kNoTimeout,
                                  cancel.get());
        --*open;
      }(session, open, std::move(params), std::move(cancel)),
      "a listen stream to a server");
}

}  // namespace sluice::gateway
