#include "gateway/aggregate/client_relay.hpp"

#include "core/json.hpp"
#include "core/log.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace sluice::gateway {
namespace cj = core::json;

namespace {

bool gone(const std::weak_ptr<mcp::Session>& weak) {
  auto s = weak.lock();
  return !s || s->closed();
}

}  // namespace

void ClientRelay::add(std::shared_ptr<mcp::Session> client) {
  std::erase_if(clients_, gone);
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    std::erase_if(it->second.sessions, gone);
    it = it->second.empty() ? subscriptions_.erase(it) : std::next(it);
  }
  clients_.push_back(std::move(client));
}

namespace {

// `params` (an object, or empty for none) with _meta's subscriptionId set to `id`.
std::string tagged(std::string_view params, std::string_view id) {
  std::string meta =
      R"({"io.modelcontextprotocol/subscriptionId":)" + std::string(cj::trim(id)) + "}";
  std::string_view body = cj::trim(params);
  if (body.size() < 2 || cj::member_span(body, "_meta")) {
    // No params, or a _meta of the sender's own: the tag is what the stream needs.
    return R"({"_meta":)" + meta + "}";
  }
  std::string_view inner = cj::trim(body.substr(1, body.size() - 2));
  return R"({"_meta":)" + meta + (inner.empty() ? "" : ",") + std::string(inner) + "}";
}

}  // namespace

asio::awaitable<void> ClientRelay::listen(mcp::IncomingRequest& request, bool tools_change,
                                          std::vector<std::string> resources) {
  const boost::json::object* params = request.message().params_object();
  const boost::json::value* filter_value = params ? params->if_contains("notifications") : nullptr;
  const boost::json::object* filter = filter_value ? filter_value->if_object() : nullptr;
  if (!filter) {
    request.respond_error(rpc::code::kInvalidParams,
                          "Invalid params: notifications must be an object");
    co_return;
  }
  auto asked = [filter](std::string_view key) {
    const boost::json::value* v = filter->if_contains(key);
    return v && v->is_bool() && v->get_bool();
  };
  core::Timer wake(request.session()->io());
  Listener& self = listeners_.emplace_back(Listener{
      &request, std::string(request.message().id()), asked("toolsListChanged") && tools_change,
      asked("promptsListChanged"), asked("resourcesListChanged"), &wake, std::move(resources)});
  auto me = std::prev(listeners_.end());
  // The acknowledgement first: what this stream will carry.
  std::string honoured = "{";
  for (auto [key, on] :
       {std::pair{"toolsListChanged", self.tools}, std::pair{"promptsListChanged", self.prompts},
        std::pair{"resourcesListChanged", self.resources}}) {
    if (!on) continue;
    honoured += (honoured.size() > 1 ? "," : "") + fmt::format(R"("{}":true)", key);
  }
  if (!self.uris.empty()) {
    std::string list;
    for (const auto& uri : self.uris) list += (list.empty() ? "" : ",") + cj::quote(uri);
    if (honoured.size() > 1) honoured += ",";
    honoured += R"("resourceSubscriptions":[)" + list + "]";
  }
  honoured += "}";
  request.session()->notify("notifications/subscriptions/acknowledged",
                            tagged(R"({"notifications":)" + honoured + "}", self.id), self.id);
  const std::uint64_t registration = request.cancel_signal().on_cancel([&wake] { wake.cancel(); });
  while (!request.cancelled() && !self.ended) {
    boost::system::error_code ec;
    wake.expires_at(core::Clock::time_point::max());
    co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  request.cancel_signal().remove(registration);
  if (self.ended && !request.cancelled()) {
    request.respond_result(tagged("{}", self.id));
  }
  listeners_.erase(me);
}

void ClientRelay::end_listens() {
  for (auto& listener : listeners_) {
    listener.ended = true;
    listener.wake->cancel();
  }
}

void ClientRelay::broadcast(std::string_view method) {
  for (auto& listener : listeners_) {
    const bool wanted = method == "notifications/tools/list_changed"       ? listener.tools
                        : method == "notifications/prompts/list_changed"   ? listener.prompts
                        : method == "notifications/resources/list_changed" ? listener.resources
                                                                           : false;
    if (wanted && !listener.ended) {
      listener.request->session()->notify(method, tagged("", listener.id), listener.id);
    }
  }
  for (auto it = clients_.begin(); it != clients_.end();) {
    if (auto client = it->lock()) {
      // A 2026-07-28 client hears of list changes on its listen stream only.
      if (client->initialized()) client->notify(method, "");
      ++it;
    } else {
      it = clients_.erase(it);
    }
  }
}

bool ClientRelay::update_subscription(std::string_view server, const std::string& uri,
                                      const std::shared_ptr<mcp::Session>& client, bool subscribe) {
  // Updates go to the sessions that subscribed; the server is told to stop only when the
  // last one unsubscribes.
  Subscription& subscription = subscriptions_[uri];
  subscription.server = server;
  auto& subscribers = subscription.sessions;
  std::erase_if(subscribers, [&](const std::weak_ptr<mcp::Session>& w) {
    auto s = w.lock();
    return !s || s->closed() || s == client;
  });
  if (subscribe) {
    subscribers.push_back(client);
  } else if (!subscription.empty()) {
    return false;
  }
  if (subscription.empty()) subscriptions_.erase(uri);
  return true;
}

bool ClientRelay::update_listener_subscription(std::string_view server, const std::string& uri,
                                               const void* listener, bool subscribe) {
  Subscription& subscription = subscriptions_[uri];
  subscription.server = server;
  std::erase(subscription.listeners, listener);
  std::erase_if(subscription.sessions, gone);
  if (subscribe) {
    subscription.listeners.push_back(listener);
  } else if (!subscription.empty()) {
    return false;
  }
  if (subscription.empty()) subscriptions_.erase(uri);
  return true;
}

bool ClientRelay::subscribed(std::string_view server) const {
  return std::any_of(subscriptions_.begin(), subscriptions_.end(), [&](const auto& entry) {
    return entry.second.server == server &&
           (!entry.second.listeners.empty() ||
            !std::all_of(entry.second.sessions.begin(), entry.second.sessions.end(), gone));
  });
}

bool ClientRelay::join(Route& route, std::shared_ptr<mcp::Session> client,
                       const std::string& related, bool& related_found) {
  // One client: the same session, or sessions that speak for the same client.
  const bool same =
      !route.client || client == route.client ||
      (!client->client_key().empty() && client->client_key() == route.client->client_key());
  if (!same) {
    route = Route{nullptr, {}, true};
    return false;
  }
  // The newest running call's session carries it (else the newest pending one's).
  if (!related_found && !related.empty()) {
    route.client = std::move(client);
    route.related = related;
    related_found = true;
  } else if (!route.client) {
    route.client = std::move(client);
  }
  return true;
}

ClientRelay::Route ClientRelay::route_to(std::string_view server) const {
  // Every call and forwarded request pending on `server`, newest first.
  struct Pending {
    std::shared_ptr<mcp::Session> client;
    const std::string* related;  // empty when not running
    core::Clock::time_point since;
  };
  static const std::string kNone;
  std::vector<Pending> pending;
  const auto& records = calls_.records();
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    const CallRecord& record = *it;
    if (record.server != server) continue;
    auto client = record.client_session.lock();
    if (!client || client->closed()) continue;
    pending.push_back(
        {std::move(client),
         record.state == CallRecord::State::running ? &record.client_request_id : &kNone,
         record.started_at});
  }
  for (auto it = forwards_.rbegin(); it != forwards_.rend(); ++it) {
    const ForwardEntry& forward = *it;
    if (forward.server != server) continue;
    auto client = forward.client.lock();
    if (!client || client->closed()) continue;
    pending.push_back({std::move(client), &forward.related, forward.since});
  }
  // Stable: among equal times, the order above (newest first in each list) holds.
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Pending& a, const Pending& b) { return a.since > b.since; });
  Route route;
  bool related_found = false;
  for (auto& p : pending) {
    if (!join(route, std::move(p.client), *p.related, related_found)) return route;
  }
  if (route.client) return route;
  // Nothing pending there: only a lone client session is unambiguous (stdio, or one HTTP
  // session), and only one that initialized (a 2026-07-28 client takes nothing outside its
  // requests and listen streams).
  for (const auto& weak : clients_) {
    auto client = weak.lock();
    if (!client || client->closed() || !client->initialized()) continue;
    if (route.client) return Route{nullptr, {}, true};
    route.client = std::move(client);
  }
  return route;
}

ClientRelay::Forwarding ClientRelay::forwarding(std::string server,
                                                std::weak_ptr<mcp::Session> client,
                                                std::string related) {
  forwards_.push_back(
      ForwardEntry{std::move(server), std::move(client), std::move(related), core::Clock::now()});
  return Forwarding(*this, std::prev(forwards_.end()));
}

ClientRelay::Forwarding::~Forwarding() { relay_->forwards_.erase(entry_); }

std::string ClientRelay::refusal(const Route& route, std::string_view method) {
  if (route.ambiguous) {
    return "several clients could have caused this request, so sluice cannot tell which "
           "client it is for";
  }
  if (!route.client) return "no client is connected";
  std::string_view needs = mcp::required_client_capability(method);
  if (!needs.empty() && !route.client->peer_declares(needs)) {
    return fmt::format("the client did not declare the {} capability", needs);
  }
  return {};
}

asio::awaitable<mcp::Reply> ClientRelay::relay_request(std::string server, std::string method,
                                                       std::string params) {
  Route route = route_to(server);
  if (std::string why = refusal(route, method); !why.empty()) {
    core::log::info("server {}: {} not relayed: {}", server, method, why);
    auto parsed = rpc::parse(rpc::make_error("0", rpc::code::kMethodNotFound, why),
                             cj::ParseLimits{limits_.max_json_depth}, rpc::Strictness::peer);
    co_return mcp::Reply{mcp::Reply::Status::error, std::move(std::get<rpc::Message>(parsed))};
  }
  mcp::Reply reply =
      co_await route.client->request(std::move(method), std::move(params), policy_.call_timeout,
                                     nullptr, nullptr, nullptr, std::move(route.related));
  co_return reply;
}

void ClientRelay::relay_notification(std::string_view server, std::string_view method,
                                     std::string_view params) {
  if (method == "notifications/prompts/list_changed" ||
      method == "notifications/resources/list_changed") {
    broadcast(method);
    return;
  }
  if (method == "notifications/resources/updated") {
    // Only to the clients that subscribed to that URI.
    auto uri_literal = cj::member_span(params, "uri");
    std::string scratch;
    auto uri = uri_literal ? core::json::string_value(*uri_literal, scratch) : std::nullopt;
    if (!uri) return;
    auto it = subscriptions_.find(*uri);
    if (it == subscriptions_.end()) return;
    for (const auto& weak : it->second.sessions) {
      if (auto client = weak.lock(); client && !client->closed()) client->notify(method, params);
    }
    for (auto& listener : listeners_) {
      if (listener.ended ||
          std::find(listener.uris.begin(), listener.uris.end(), *uri) == listener.uris.end()) {
        continue;
      }
      listener.request->session()->notify(method, tagged(params, listener.id), listener.id);
    }
    return;
  }
  Route route = route_to(server);
  if (route.client) {
    route.client->notify(method, params, route.related);
  } else if (route.ambiguous) {
    core::log::debug("server {}: {} not relayed: several clients could have caused it", server,
                     method);
  }
}

}  // namespace sluice::gateway
