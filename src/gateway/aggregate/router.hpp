#pragma once
// AggregateRouter: the downstreams' tools, prompts and resources as the gateway's own.
// Tools and prompts are named `server__name` (the bare name with passthrough, for a single
// server); resources and templates are listed as their servers give them and routed back by
// URI. Each routed request is one named route: the lists (paged by the one pagination codec),
// prompts/get, the resource requests (read, subscribe, unsubscribe), completion/complete, and
// logging/setLevel (to every server online that offers logging).
//
// Two modes. Aggregate mode (`--expose all`) lists every tool too, and starts every server
// before it answers (a name or URI can be routed only once every list is known). Meta mode
// (`--expose meta`, the default) routes prompts and resources only, and starts nothing to list
// them: the lists hold what is known (servers running, or listed earlier), and only the server
// a prompts/get, resources/* or completion/complete is routed to is started, when it must be.
//
// Ownership: a part of the Gateway, holding a back-reference to it (the fleet, the client
// relay, the policy). Threading: the gateway's loop thread. Errors: a request it cannot
// route is answered with a JSON-RPC error (invalid params, resource not found, a server that
// cannot start); a downstream's answer is passed through as sent (mcp::answer).
#include "gateway/downstream/downstream.hpp"
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::gateway {

class Gateway;

class AggregateRouter {
 public:
  explicit AggregateRouter(Gateway& gateway) : gateway_(gateway) {}
  AggregateRouter(const AggregateRouter&) = delete;
  AggregateRouter& operator=(const AggregateRouter&) = delete;

  // prompts/*, resources/*, completion/complete and logging/setLevel, routed to the owning
  // server(s) and answered. False (and unanswered) when `request` is none of them.
  asio::awaitable<bool> route(mcp::IncomingRequest& request);
  // One page of tools/list: the meta-tools when exposed (`meta_tools_json`, their list
  // text), then each server's tools under their public names. `cursor`: a nextCursor given.
  std::string tools_page(std::string_view cursor, const std::string& meta_tools_json) const;

  // The public name of `server`'s tool or prompt `name`.
  std::string public_name(const Downstream& server, std::string_view name) const;
  // The server and its own name for a public name (server nullptr when none).
  std::pair<Downstream*, std::string> resolve_public(std::string_view name) const;

  // A listen stream's resource subscriptions (subscriptions/listen, `listener` its identity):
  // each URI a server owns, that the policy does not withhold and whose server takes the
  // subscription (resources/subscribe, started when needed) is subscribed; returns those.
  asio::awaitable<std::vector<std::string>> subscribe_listener(std::vector<std::string> uris,
                                                               const void* listener);
  // Ends them: a server is told to unsubscribe a URI no other client is subscribed to.
  asio::awaitable<void> unsubscribe_listener(std::vector<std::string> uris, const void* listener);

 private:
  std::string list_prompts(std::string_view cursor) const;
  std::string list_resources(std::string_view cursor, bool templates) const;
  asio::awaitable<void> get_prompt(mcp::IncomingRequest& request);
  asio::awaitable<void> resource_request(mcp::IncomingRequest& request);
  asio::awaitable<void> complete(mcp::IncomingRequest& request);
  asio::awaitable<void> set_level(mcp::IncomingRequest& request);
  // Starts `server` when it is not online; false (and the request answered with why) when
  // it cannot serve.
  asio::awaitable<bool> started(mcp::IncomingRequest& request, Downstream& server);
  // Forwards the request to `server` with `params` and answers with its reply.
  asio::awaitable<void> forward(mcp::IncomingRequest& request, Downstream& server,
                                std::string params);
  // The server listing resource `uri`, else the first whose template prefix matches it.
  Downstream* owner_of_uri(std::string_view uri) const;

  Gateway& gateway_;
};

}  // namespace sluice::gateway
