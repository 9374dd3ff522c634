#include "gateway/aggregate/client_relay.hpp"

#include "core/json.hpp"
#include "core/log.hpp"

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
    it = it->second.sessions.empty() ? subscriptions_.erase(it) : std::next(it);
  }
  clients_.push_back(std::move(client));
}

void ClientRelay::broadcast(std::string_view method) {
  for (auto it = clients_.begin(); it != clients_.end();) {
    if (auto client = it->lock()) {
      client->notify(method, "");
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
  } else if (!subscribers.empty()) {
    return false;
  }
  if (subscribers.empty()) subscriptions_.erase(uri);
  return true;
}

bool ClientRelay::subscribed(std::string_view server) const {
  return std::any_of(subscriptions_.begin(), subscriptions_.end(), [&](const auto& entry) {
    return entry.second.server == server &&
           !std::all_of(entry.second.sessions.begin(), entry.second.sessions.end(), gone);
  });
}

ClientRelay::Route ClientRelay::route_to(std::string_view server) const {
  Route route;
  bool related_found = false;
  const auto& records = calls_.records();
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->server != server) continue;
    auto client = it->client_session.lock();
    if (!client || client->closed()) continue;
    if (route.client && client != route.client) return Route{nullptr, {}, true};
    route.client = std::move(client);
    if (!related_found && it->state == CallRecord::State::running) {
      route.related = it->client_request_id;
      related_found = true;
    }
  }
  if (route.client) return route;
  // No call pending there: only a lone client session is unambiguous (stdio, or one HTTP
  // session).
  for (const auto& weak : clients_) {
    auto client = weak.lock();
    if (!client || client->closed()) continue;
    if (route.client) return Route{nullptr, {}, true};
    route.client = std::move(client);
  }
  return route;
}

std::string ClientRelay::refusal(const Route& route, std::string_view method) {
  if (route.ambiguous) {
    return "several clients could have caused this request, so sluice cannot tell which "
           "client it is for";
  }
  if (!route.client) return "no client is connected";
  const char* needs = method == "sampling/createMessage" ? "sampling"
                      : method == "elicitation/create"   ? "elicitation"
                      : method == "roots/list"           ? "roots"
                                                         : nullptr;
  if (needs && !route.client->peer_declares(needs)) {
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
