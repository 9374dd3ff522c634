#pragma once
// ClientRelay: the client sessions connected to the gateway, and what downstreams send
// them (in both modes): list_changed notifications (to every session), resource updates
// (to the sessions subscribed to that URI), and a downstream's own requests and logs
// (sampling, elicitation, roots, notifications/message) to the one session they belong to.
//
// A downstream's request or log does not name the call it serves. It belongs to the one
// client session with calls pending on that server (queued, running or abandoned) or requests
// forwarded to it (prompts, resources, completion: forwarding()), on the stream of its newest
// running one; with calls of several sessions pending, or none while
// several sessions are open, it cannot be attributed and goes to nobody: one client's prompt
// must never reach another client. Sessions that speak for one client (the exchanges of one
// 2026-07-28 caller, Session::client_key) count as that one client.
//
// Ownership: holds sessions weakly (their transports own them); borrows the call ledger and
// the policy, which outlive it. Threading: the gateway's loop thread. Guarantees: a closed
// session is never sent anything; a request that cannot be relayed is answered with a
// value-free error, never dropped.
#include "config/gateway_config.hpp"
#include "core/limits.hpp"
#include "gateway/calls/ledger.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::gateway {

struct ForwardEntry {
  std::string server;
  std::weak_ptr<mcp::Session> client;
  std::string related;
  core::Clock::time_point since;
};

class ClientRelay {
 public:
  ClientRelay(const CallLedger& calls, const config::GatewayPolicy& policy,
              const core::Limits& limits)
      : calls_(calls), policy_(policy), limits_(limits) {}
  ClientRelay(const ClientRelay&) = delete;
  ClientRelay& operator=(const ClientRelay&) = delete;

  // subscriptions/listen (2026-07-28): the stream a stateless client opens for list changes.
  // It is acknowledged at once (notifications/subscriptions/acknowledged, with the part of
  // its filter sluice honours: toolsListChanged when every tool is exposed,
  // promptsListChanged, resourcesListChanged), then every list change it opted in to goes
  // on it, tagged with its subscriptionId (the listen request's id), until the request is
  // cancelled (its stream closed, notifications/cancelled) or end_listens() answers it.
  // `tools_change`: whether the tool list clients see can change (aggregate mode).
  // `resources`: the URIs subscribed for it (AggregateRouter::subscribe_listener, with the
  // request as the listener); their notifications/resources/updated go on it too.
  asio::awaitable<void> listen(mcp::IncomingRequest& request, bool tools_change,
                               std::vector<std::string> resources);
  // Answers every open listen (the graceful end, at shutdown).
  void end_listens();
  std::size_t listens() const { return listeners_.size(); }

  // A new client session; what was kept for sessions that ended is dropped here (sessions
  // come and go over HTTP).
  void add(std::shared_ptr<mcp::Session> client);
  // Every live client session told `method` (list_changed notifications).
  void broadcast(std::string_view method);
  // resources/subscribe (`subscribe`) or unsubscribe of `uri`, a resource of `server`, by
  // `client`. Whether the server must be told: always for a subscribe; for an unsubscribe
  // only when no other session stays subscribed.
  bool update_subscription(std::string_view server, const std::string& uri,
                           const std::shared_ptr<mcp::Session>& client, bool subscribe);
  // The same for a listen stream (`listener`, AggregateRouter::subscribe_listener): whether
  // the server must be told (always for a subscribe; for an unsubscribe when nobody else is
  // subscribed to `uri`).
  bool update_listener_subscription(std::string_view server, const std::string& uri,
                                    const void* listener, bool subscribe);
  // Whether an open client session or listen stream is subscribed to a resource of `server`
  // (it is then not idle-stopped).
  bool subscribed(std::string_view server) const;

  // A request of `client` (raw id `related`) forwarded to `server` while the returned scope
  // lives: what the server sends meanwhile is attributed to that client as for a call.
  class Forwarding {
   public:
    Forwarding(ClientRelay& relay, std::list<ForwardEntry>::iterator entry)
        : relay_(&relay), entry_(entry) {}
    Forwarding(const Forwarding&) = delete;
    Forwarding& operator=(const Forwarding&) = delete;
    ~Forwarding();

   private:
    ClientRelay* relay_;
    std::list<ForwardEntry>::iterator entry_;
  };
  Forwarding forwarding(std::string server, std::weak_ptr<mcp::Session> client,
                        std::string related);

  // A downstream's request to the client (sampling/createMessage, elicitation/create,
  // roots/list), relayed to the session it belongs to, which must have declared the
  // capability it needs.
  asio::awaitable<mcp::Reply> relay_request(std::string server, std::string method,
                                            std::string params);
  // A downstream's notification: list_changed to every session, resources/updated to the
  // sessions subscribed to its URI, anything else to the session it belongs to.
  void relay_notification(std::string_view server, std::string_view method,
                          std::string_view params);

 private:
  struct Route {
    std::shared_ptr<mcp::Session> client;
    std::string related;     // raw id of the client's request, empty when none
    bool ambiguous = false;  // several sessions could be the one: no client
  };
  Route route_to(std::string_view server) const;
  // Adds `client` (its request `related`, empty when not running) to `route`; false when the
  // route became ambiguous.
  static bool join(Route& route, std::shared_ptr<mcp::Session> client, const std::string& related,
                   bool& related_found);
  // Why `route` cannot take `method`, else empty.
  static std::string refusal(const Route& route, std::string_view method);

  const CallLedger& calls_;
  const config::GatewayPolicy& policy_;
  const core::Limits& limits_;
  // Client sessions, told when the aggregated lists change.
  std::vector<std::weak_ptr<mcp::Session>> clients_;
  // resources/subscribe per URI: the server it belongs to and the client sessions subscribed.
  struct Subscription {
    std::string server;
    std::vector<std::weak_ptr<mcp::Session>> sessions;
    std::vector<const void*> listeners;  // listen streams (2026-07-28)
    bool empty() const { return sessions.empty() && listeners.empty(); }
  };
  std::map<std::string, Subscription, std::less<>> subscriptions_;
  std::list<ForwardEntry> forwards_;  // forwarding() scopes, oldest first
  // Open subscriptions/listen requests and what each opted in to.
  struct Listener {
    mcp::IncomingRequest* request;
    std::string id;  // the listen request's raw id: its subscriptionId
    bool tools = false, prompts = false, resources = false;
    core::Timer* wake;
    std::vector<std::string> uris;  // resources/updated of these
    bool ended = false;
  };
  std::list<Listener> listeners_;
};

}  // namespace sluice::gateway
