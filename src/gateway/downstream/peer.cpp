#include "gateway/downstream/peer.hpp"

#include "core/json.hpp"
#include "core/log.hpp"
#include "core/version.hpp"
#include "mcp/answer.hpp"
#include "mcp/era.hpp"
#include "mcp/protocol.hpp"

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

// Requests and notifications the downstream sends to sluice.
class DownstreamPeer::Handler : public mcp::Handler {
 public:
  explicit Handler(DownstreamPeer& owner) : owner_(owner) {}
  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    // Server-to-client requests (sampling, elicitation, roots) are relayed to the client
    // when the gateway relays them (it does in both modes); else nothing is advertised.
    if (!owner_.events_.relay_request) {
      request.respond_error(rpc::code::kMethodNotFound, "Method not found");
      co_return;
    }
    const auto& m = request.message();
    // Named locals, not temporaries: GCC 12 destroys a temporary of a conditional expression
    // inside a co_await twice.
    std::string method = m.method();
    std::string params = m.params().empty() ? std::string("{}") : std::string(m.params());
    if (method == "roots/list") owner_.asked_for_roots_ = true;
    auto relayed = owner_.events_.relay_request(std::move(method), std::move(params));
    mcp::Reply reply = co_await std::move(relayed);
    mcp::answer(request, reply, "the client did not answer");
  }

  void on_notification(const rpc::Message& message) override {
    const std::string_view method = message.method();
    if (owner_.modern_) {
      // What came on sluice's own listen stream goes on without that stream's id.
      std::string params =
          mcp::without_meta_member(message.params(), mcp::meta_key::kSubscriptionId);
      if (params.size() != message.params().size()) {
        relay(method, params);
        return;
      }
    }
    relay(method, message.params());
  }

  void relay(std::string_view method, std::string_view params) {
    if (method == "notifications/tools/list_changed" ||
        method == "notifications/prompts/list_changed" ||
        method == "notifications/resources/list_changed") {
      owner_.list_changed_(method);
    } else if (method == "notifications/progress") {
      if (owner_.events_.progress) owner_.events_.progress(params);
    } else if (method == "notifications/message" || method == "notifications/resources/updated") {
      if (owner_.events_.relay_notification) owner_.events_.relay_notification(method, params);
    }
  }

 private:
  DownstreamPeer& owner_;
};

DownstreamPeer::DownstreamPeer(asio::io_context& io, std::string name, const core::Limits& limits,
                               const DownstreamEvents& events,
                               std::function<void(std::string_view method)> list_changed)
    : io_(io),
      name_(std::move(name)),
      limits_(limits),
      events_(events),
      list_changed_(std::move(list_changed)) {}

DownstreamPeer::~DownstreamPeer() {
  if (session_) session_->detach();
}

void DownstreamPeer::connect(DownstreamTransport& transport, std::function<void()> on_closed) {
  transport_ = &transport;
  mcp::SessionOptions opts;
  opts.label = name_;
  opts.strictness = rpc::Strictness::peer;
  opts.limits = &limits_;
  session_ = mcp::Session::create(io_, opts);
  listens_open_ = std::make_shared<std::size_t>(0);
  handler_ = std::make_unique<Handler>(*this);
  session_->attach(&transport.outbox(), handler_.get());
  transport.start(session_, std::move(on_closed));
}

void DownstreamPeer::close_session() {
  if (session_) session_->on_closed();
}

void DownstreamPeer::disconnect() {
  if (session_) session_->detach();
  session_.reset();
  transport_ = nullptr;
}

bool DownstreamPeer::fail(std::string reason) {
  error_ = std::move(reason);
  return false;
}

std::string DownstreamPeer::overlong_line_reason() const {
  return fmt::format(
      "it sent a message over the {} byte limit (a protocol violation), so sluice stopped "
      "reading it",
      limits_.max_message_bytes);
}

asio::awaitable<bool> DownstreamPeer::handshake() {
  // The session as it was when the handshake began: a teardown meanwhile (disconnect())
  // resets session_, and this one is then detached, so its requests end as closed.
  auto session = session_;
  if (co_await discover()) co_return true;
  if (session->closed() || session != session_) {
    co_return fail("the server exited during server/discover");
  }
  // When the gateway relays sampling, elicitation and roots requests to its client (both
  // modes), sluice offers them; otherwise it offers nothing.
  std::string capabilities =
      events_.relay_request ? R"({"sampling":{},"elicitation":{},"roots":{}})" : "{}";
  std::string params = R"({"protocolVersion":)" + cj::quote(mcp::kLatestVersion) +
                       R"(,"capabilities":)" + capabilities +
                       R"(,"clientInfo":{"name":"sluice","version":)" + cj::quote(core::kVersion) +
                       "}}";
  auto reply = co_await session->request("initialize", params, limits_.initialize_timeout);
  if (!reply.ok()) {
    co_return fail(reply.status == mcp::Reply::Status::timeout ? "initialize timed out"
                   : reply.status == mcp::Reply::Status::error
                       ? "initialize was refused"
                       : "the server exited during initialize");
  }
  auto version = cj::member_span(reply.message->result(), "protocolVersion");
  bj::error_code ec;
  bj::value v = version ? bj::parse(*version, ec) : bj::value();
  if (ec || !v.is_string() || !mcp::is_supported_version(v.get_string())) {
    co_return fail("the server answered initialize with an unsupported protocol version");
  }
  protocol_version_ = std::string(v.get_string());
  auto caps = cj::member_span(reply.message->result(), "capabilities");
  server_capabilities_ = caps ? std::string(cj::trim(*caps)) : "{}";
  read_server_info(reply.message->result());
  session->notify("notifications/initialized", "");
  co_return true;
}

bool DownstreamPeer::offers(std::string_view capability) const {
  return cj::member_span(server_capabilities_, capability).has_value();
}

void DownstreamPeer::notify(std::string_view method, std::string_view params) {
  // The stateless revision removed the roots change notification (roots are asked per request).
  if (modern_ && method == "notifications/roots/list_changed") return;
  if (session_ && !session_->closed()) session_->notify(method, params);
}

asio::awaitable<mcp::Reply> DownstreamPeer::forward(std::string method, std::string params,
                                                    std::chrono::milliseconds timeout,
                                                    core::CancelSignal* cancel) {
  if (auto instead = modern_instead(method, params)) co_return std::move(*instead);
  auto session = session_;  // keeps the session alive across a teardown
  params = dress(std::move(params), CallerMeta{method.starts_with("tasks/"), {}});
  mcp::Reply reply = co_await session->request(method, params, timeout, cancel);
  if (modern_ &&
      (method == "tools/call" || method == "prompts/get" || method == "resources/read")) {
    reply = co_await complete_input(method, params, std::move(reply), timeout, cancel, nullptr);
  }
  co_return reply;
}

asio::awaitable<mcp::Reply> DownstreamPeer::call_tool(
    std::string_view tool, std::string_view arguments_json, std::chrono::milliseconds timeout,
    core::CancelSignal* cancel, std::string_view progress_token, const mcp::CallTracking* tracking,
    CallerMeta caller) {
  // A 2025 server's tool that runs only as a task is called as one (peer_tasks.cpp).
  const bool as_task = augments_tasks(tool);
  // {"name":TOOL,"arguments":ARGS[,"task":{"ttl":MS}][,"_meta":{"progressToken":TOKEN}]}
  const auto write_params = [&](std::string& out) {
    out += R"({"name":)";
    out += cj::quote(tool);
    out += R"(,"arguments":)";
    out += arguments_json.empty() ? std::string_view("{}") : arguments_json;
    if (as_task) out += R"(,"task":{"ttl":)" + std::to_string(timeout.count()) + "}";
    if (!progress_token.empty()) {
      out += R"(,"_meta":{"progressToken":)";
      out += progress_token;
      out += '}';
    }
    out += '}';
  };
  const std::size_t params_bytes = 64 + tool.size() + arguments_json.size() + progress_token.size();
  auto session = session_;  // keeps the session alive across a teardown
  // A 2026 server's params, dressed with its per-request _meta: kept for its rounds of input
  // (complete_input replays them). A 2025 server's are written into the request's frame
  // itself: a large call's arguments are copied once on their way through.
  const bool modern = modern_;
  std::string params;
  if (modern) {
    params.reserve(params_bytes);
    write_params(params);
    params = dress(std::move(params), caller);
  }
  const std::uint64_t id = session->take_request_id();
  std::string frame =
      rpc::request_head(std::to_string(id), "tools/call", modern ? params.size() : params_bytes);
  if (modern) {
    frame += params;
  } else {
    write_params(frame);
  }
  frame += '}';
  mcp::Reply reply = co_await session->request_frame(id, "tools/call", std::move(frame), timeout,
                                                     cancel, nullptr, tracking);
  if (as_task) co_return co_await follow_task(std::move(reply), timeout, cancel, tracking);
  if (!modern) co_return reply;  // a 2025 server asks with requests of its own
  co_return co_await complete_input("tools/call", params, std::move(reply), timeout, cancel,
                                    tracking);
}

const ToolEntry* DownstreamPeer::find_tool(std::string_view name) const {
  auto it =
      std::lower_bound(tool_index_.begin(), tool_index_.end(), name,
                       [this](std::uint32_t i, std::string_view n) { return tools_[i].name < n; });
  return it != tool_index_.end() && tools_[*it].name == name ? &tools_[*it] : nullptr;
}

void DownstreamPeer::set_tools(std::vector<ToolEntry> tools) {
  tools_ = std::move(tools);
  tool_index_.resize(tools_.size());
  for (std::size_t i = 0; i < tools_.size(); ++i) tool_index_[i] = static_cast<std::uint32_t>(i);
  // Stable: of two tools with one name (a listing skips repeats) the first is found.
  std::stable_sort(
      tool_index_.begin(), tool_index_.end(),
      [this](std::uint32_t a, std::uint32_t b) { return tools_[a].name < tools_[b].name; });
  tool_index_.shrink_to_fit();
}

}  // namespace sluice::gateway
