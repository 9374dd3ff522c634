#include "gateway/gateway.hpp"

#include "core/describe.hpp"
#include "core/file_identity.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "gateway/results.hpp"
#include "process/child.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace sluice::gateway {
namespace bj = boost::json;
namespace cj = core::json;

namespace {

constexpr std::size_t kShortDescription = 160;

// The first sentence or line of a description, cut at a character boundary.
std::string short_description(std::string_view text) {
  std::size_t end = text.find('\n');
  if (end == std::string_view::npos) end = text.size();
  std::string_view first = text.substr(0, end);
  if (first.size() <= kShortDescription) return std::string(first);
  std::size_t cut = kShortDescription - 3;
  while (cut > 0 && (static_cast<unsigned char>(first[cut]) & 0xC0) == 0x80) --cut;
  return std::string(first.substr(0, cut)) + "...";
}

std::pair<std::string_view, std::string_view> split_tool_id(std::string_view id) {
  std::size_t sep = id.find("::");
  if (sep == std::string_view::npos) return {{}, {}};
  return {id.substr(0, sep), id.substr(sep + 2)};
}

}  // namespace

Gateway::Gateway(asio::io_context& io, std::shared_ptr<const config::GatewayConfig> config,
                 GatewayOptions options)
    : io_(io),
      config_(std::move(config)),
      options_(std::move(options)),
      started_at_(std::chrono::steady_clock::now()) {
  // gw_binary_stale compares the file at this path with what it was at start.
  self_exe_ = core::executable_of(0);
  by_name_.reserve(config_->servers.size());
  for (const auto& server : config_->servers) {
    DownstreamEvents events;
    events.tools_changed = [this] { rebuild_catalog(); };
    events.progress = [this](std::string_view params) { relay_progress(params); };
    if (options_.expose_all) {
      // A plain lambda returning the member coroutine (GCC 12 mishandles by-value
      // parameters of coroutine lambdas).
      events.relay_request = [this, name = server.name](std::string method, std::string params) {
        return relay_to_client(name, std::move(method), std::move(params));
      };
      events.relay_notification = [this, name = server.name](std::string_view method,
                                                             std::string_view params) {
        relay_notification(name, method, params);
      };
    }
    events.lifecycle = [this, name = server.name](std::string_view kind, std::string_view outcome,
                                                  std::uint64_t generation) {
      audit_.record({std::string(kind), "sluice", name, "", std::string(outcome), -1, generation});
    };
    downstreams_.push_back(
        std::make_unique<Downstream>(io_, server, options_.limits, config_->policy,
                                     std::move(events)));
    by_name_.emplace(downstreams_.back()->name(), downstreams_.back().get());
  }
}

Gateway::~Gateway() = default;

Downstream* Gateway::find(std::string_view server) {
  auto it = by_name_.find(server);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string_view> Gateway::server_names() const {
  std::vector<std::string_view> names;
  names.reserve(downstreams_.size());
  for (const auto& d : downstreams_) names.push_back(d->name());
  return names;
}

std::string Gateway::unknown_server(std::string_view server) const {
  return fmt::format("no configured server is named {}{}; see gateway.health",
                     core::show_name(server), core::did_you_mean(server, server_names()));
}

std::vector<pid_t> Gateway::child_pids() const {
  std::vector<pid_t> pids;
  for (const auto& d : downstreams_) {
    if (d->pid() > 0) pids.push_back(d->pid());
  }
  return pids;
}

std::string Gateway::public_name(const Downstream& server, std::string_view name) const {
  if (options_.passthrough) return std::string(name);
  return server.name() + "__" + std::string(name);
}

std::pair<Downstream*, std::string> Gateway::resolve_public(std::string_view name) {
  if (options_.passthrough) {
    return {downstreams_.empty() ? nullptr : downstreams_.front().get(), std::string(name)};
  }
  std::size_t sep = name.find("__");
  if (sep == std::string_view::npos) return {nullptr, {}};
  return {find(name.substr(0, sep)), std::string(name.substr(sep + 2))};
}

Gateway::RelayRoute Gateway::relay_target(std::string_view server) {
  // A downstream's request or log does not name the call it serves. It belongs to the one
  // client session with calls pending on that server (queued, running or abandoned), on
  // the stream of its newest running call; with calls of several sessions pending, or none
  // while several sessions are open, it cannot be attributed and goes to nobody: one
  // client's prompt must never reach another client.
  RelayRoute route;
  bool related_found = false;
  for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
    if (it->server != server) continue;
    auto client = it->client_session.lock();
    if (!client || client->closed()) continue;
    if (route.client && client != route.client) {
      route.ambiguous = true;
      route.client.reset();
      route.related.clear();
      return route;
    }
    route.client = std::move(client);
    if (!related_found && it->state == PendingCall::State::running) {
      route.related = it->client_request_id;
      related_found = true;
    }
  }
  if (route.client) return route;
  // No call pending there: only a lone client session is unambiguous (stdio, or one HTTP
  // session).
  std::shared_ptr<mcp::Session> only;
  for (const auto& weak : list_subscribers_) {
    auto client = weak.lock();
    if (!client || client->closed()) continue;
    if (only) {
      route.ambiguous = true;
      return route;
    }
    only = std::move(client);
  }
  route.client = std::move(only);
  return route;
}

asio::awaitable<mcp::Reply> Gateway::relay_to_client(std::string server, std::string method,
                                                     std::string params) {
  RelayRoute route = relay_target(server);
  std::string refusal;
  if (route.ambiguous) {
    refusal = "several clients could have caused this request, so sluice cannot tell which "
              "client it is for";
  } else if (!route.client) {
    refusal = "no client is connected";
  } else {
    const char* needs = method == "sampling/createMessage" ? "sampling"
                        : method == "elicitation/create"   ? "elicitation"
                        : method == "roots/list"           ? "roots"
                                                           : nullptr;
    if (needs && !route.client->peer_declares(needs)) {
      refusal = fmt::format("the client did not declare the {} capability", needs);
    }
  }
  if (!refusal.empty()) {
    core::log::info("server {}: {} not relayed: {}", server, method, refusal);
    auto parsed = rpc::parse(rpc::make_error("0", rpc::code::kMethodNotFound, refusal),
                             cj::ParseLimits{options_.limits.max_json_depth},
                             rpc::Strictness::peer);
    co_return mcp::Reply{mcp::Reply::Status::error,
                         std::move(std::get<rpc::Message>(parsed))};
  }
  mcp::Reply reply = co_await route.client->request(
      std::move(method), std::move(params), config_->policy.call_timeout, nullptr,
      nullptr, nullptr, std::move(route.related));
  co_return reply;
}

void Gateway::relay_notification(std::string_view server, std::string_view method,
                                 std::string_view params) {
  if (method == "notifications/prompts/list_changed" ||
      method == "notifications/resources/list_changed") {
    broadcast(method);
    return;
  }
  if (method == "notifications/resources/updated") {
    // Only to the clients that subscribed to that URI.
    auto uri = cj::member_span(params, "uri");
    if (!uri) return;
    boost::system::error_code ec;
    auto parsed = bj::parse(*uri, ec);
    if (ec || !parsed.is_string()) return;
    auto it = subscriptions_.find(std::string_view(parsed.as_string()));
    if (it == subscriptions_.end()) return;
    for (const auto& weak : it->second) {
      if (auto client = weak.lock(); client && !client->closed()) client->notify(method, params);
    }
    return;
  }
  RelayRoute route = relay_target(server);
  if (route.client) {
    route.client->notify(method, params, route.related);
  } else if (route.ambiguous) {
    core::log::debug("server {}: {} not relayed: several clients could have caused it", server,
                     method);
  }
}

void Gateway::roots_changed() {
  for (auto& d : downstreams_) {
    if (d->asked_for_roots()) d->notify("notifications/roots/list_changed", "");
  }
}

void Gateway::broadcast(std::string_view method) {
  for (auto it = list_subscribers_.begin(); it != list_subscribers_.end();) {
    if (auto client = it->lock()) {
      client->notify(method, "");
      ++it;
    } else {
      it = list_subscribers_.erase(it);
    }
  }
}

std::string Gateway::aggregate_tools_page(std::string_view cursor, std::size_t page_size,
                                          const std::string& meta_tools_json) const {
  // Every tool in a fixed order; a cursor is the position of the next one.
  std::vector<bj::value> all;
  if (options_.expose_meta) {
    bj::value meta = bj::parse(meta_tools_json);
    for (auto& t : meta.at("tools").as_array()) all.push_back(t);
  }
  for (const auto& d : downstreams_) {
    for (const auto& tool : d->tools()) {
      bj::value v = bj::parse(tool.raw);
      v.as_object()["name"] = public_name(*d, tool.name);
      all.push_back(std::move(v));
    }
  }
  std::size_t start = 0;
  if (!cursor.empty()) {
    auto [ptr, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), start);
    if (ec != std::errc() || ptr != cursor.data() + cursor.size()) start = all.size();
  }
  bj::array page;
  for (std::size_t i = start; i < all.size() && page.size() < page_size; ++i) {
    page.push_back(std::move(all[i]));
  }
  bj::object out;
  out["tools"] = std::move(page);
  if (start + page_size < all.size()) out["nextCursor"] = std::to_string(start + page_size);
  return bj::serialize(out);
}

void Gateway::rebuild_catalog() {
  if (options_.expose_all) broadcast("notifications/tools/list_changed");
  std::vector<IndexedTool> docs;
  catalog_docs_.clear();
  for (std::size_t s = 0; s < downstreams_.size(); ++s) {
    const auto& d = *downstreams_[s];
    if (!d.tools_known()) continue;
    for (std::size_t t = 0; t < d.tools().size(); ++t) {
      const auto& tool = d.tools()[t];
      docs.push_back(IndexedTool{d.name(), tool.name, tool.title, tool.description});
      catalog_docs_.emplace_back(s, t);
    }
  }
  catalog_.rebuild(std::move(docs));
}

std::string Gateway::catalog_search(const bj::object& args) const {
  SearchQuery q;
  if (const auto* v = args.if_contains("query"); v && v->is_string()) q.text = v->get_string();
  if (const auto* v = args.if_contains("limit"); v && v->is_int64()) {
    q.limit = static_cast<std::size_t>(v->get_int64());
  }
  if (const auto* f = args.if_contains("filters"); f && f->is_object()) {
    if (const auto* s = f->get_object().if_contains("server"); s && s->is_string()) {
      q.server = std::string(s->get_string());
    }
  }
  SearchResult found = catalog_.search(q);
  bj::array results;
  for (const auto& hit : found.hits) {
    auto [s, t] = catalog_docs_[hit.doc];
    const auto& d = *downstreams_[s];
    const auto& tool = d.tools()[t];
    bj::object card;
    card["tool_id"] = d.name() + "::" + tool.name;
    card["server"] = d.name();
    card["tool_name"] = tool.name;
    if (!tool.title.empty()) card["title"] = tool.title;
    card["short_description"] = short_description(tool.description);
    card["availability"] = d.status() == Status::online ? "online" : "offline";
    if (!tool.validator && !tool.schema_problem.empty()) card["validatable"] = false;
    results.push_back(std::move(card));
  }
  // Servers whose tools are not known yet are listed as cards so the client can connect.
  // At most kOfflineCards of them (all are counted), so that a large fleet cannot flood the
  // answer.
  constexpr std::size_t kOfflineCards = 20;
  bj::array offline;
  std::size_t offline_total = 0;
  for (const auto& d : downstreams_) {
    if (d->tools_known()) continue;
    if (q.server && *q.server != d->name()) continue;
    if (++offline_total > kOfflineCards) continue;
    bj::object card;
    card["server"] = d->name();
    card["availability"] = "offline";
    card["status"] = to_string(d->status());
    card["short_description"] =
        d->status() == Status::unsupported_transport
            ? "remote server: this transport is not supported yet"
        : d->status() == Status::disabled
            ? "disabled in its config file (\"disabled\": true): sluice does not start it"
            : "tools not listed yet: call gateway.connect_server to start it and list them";
    offline.push_back(std::move(card));
  }
  bj::object out;
  out["results"] = std::move(results);
  out["total_available"] = found.total_matches;
  out["truncated"] = found.total_matches > found.hits.size();
  if (!offline.empty()) out["offline_servers"] = std::move(offline);
  if (offline_total > offline.size()) out["offline_servers_total"] = offline_total;
  return structured_result(out);
}

asio::awaitable<Gateway::ResolvedTool> Gateway::resolve_tool(std::string_view tool_id,
                                                            bool need_online) {
  ResolvedTool r;
  auto [server, tool_name] = split_tool_id(tool_id);
  if (server.empty()) {
    r.refusal = fmt::format(
        "{} is not a tool id: tool ids look like server::tool, see gateway.catalog_search",
        core::show_name(tool_id));
    co_return r;
  }
  Downstream* d = find(server);
  if (!d) {
    r.refusal = fmt::format("no configured server is named {}{}; tool ids look like "
                            "server::tool, see gateway.catalog_search",
                            core::show_name(server), core::did_you_mean(server, server_names()));
    co_return r;
  }
  bool online = co_await d->ensure_started();
  if (!online && (need_online || !d->tools_known())) {
    r.refusal = fmt::format("server {} is not available ({}): {}", d->name(),
                            to_string(d->status()), d->last_error());
    co_return r;
  }
  r.tool = d->find_tool(tool_name);
  if (!r.tool) {
    std::vector<std::string_view> names;
    names.reserve(d->tools().size());
    for (const auto& t : d->tools()) names.push_back(t.name);
    r.refusal = fmt::format("server {} has no tool named {}{}; see gateway.catalog_search",
                            d->name(), core::show_name(tool_name),
                            core::did_you_mean(tool_name, names));
    co_return r;
  }
  r.server = d;
  co_return r;
}

asio::awaitable<std::string> Gateway::describe(std::string_view tool_id) {
  ResolvedTool resolved = co_await resolve_tool(tool_id, false);
  if (!resolved.server) co_return error_result(resolved.refusal);
  Downstream* d = resolved.server;
  const ToolEntry* tool = resolved.tool;
  bj::value parsed = bj::parse(tool->raw);
  const bj::object& obj = parsed.get_object();
  bj::object out;
  std::string id = d->name() + "::" + tool->name;
  out["tool_id"] = id;
  out["server"] = d->name();
  out["tool_name"] = tool->name;
  if (!tool->title.empty()) out["title"] = tool->title;
  out["description"] = tool->description;
  bj::object template_args;
  if (const auto* schema = obj.if_contains("inputSchema"); schema && schema->is_object()) {
    out["inputSchema"] = *schema;
    const auto& so = schema->get_object();
    std::vector<std::string> required;
    if (const auto* r = so.if_contains("required"); r && r->is_array()) {
      for (const auto& n : r->get_array()) {
        if (n.is_string()) required.emplace_back(n.get_string());
      }
    }
    if (const auto* props = so.if_contains("properties"); props && props->is_object()) {
      for (const auto& [key, prop] : props->get_object()) {
        std::string type = "any";
        if (prop.is_object()) {
          if (const auto* t = prop.get_object().if_contains("type"); t && t->is_string()) {
            type = std::string(t->get_string());
          }
        }
        bool req = std::find(required.begin(), required.end(), key) != required.end();
        template_args[key] = fmt::format("<{}: {}>", req ? "required" : "optional", type);
      }
    }
  } else {
    out["inputSchema"] = bj::object{{"type", "object"}};
  }
  if (const auto* o = obj.if_contains("outputSchema")) out["outputSchema"] = *o;
  if (const auto* a = obj.if_contains("annotations")) out["annotations"] = *a;
  out["availability"] = d->status() == Status::online ? "online" : "offline";
  if (!tool->validator && !tool->schema_problem.empty()) {
    out["validatable"] = false;
    out["schema_problem"] = tool->schema_problem;
    out["invocable"] = config_->policy.allow_unvalidated_tools;
  }
  out["invoke_template"] = bj::object{
      {"tool", "gateway.invoke"},
      {"arguments", bj::object{{"tool_id", id}, {"arguments", std::move(template_args)}}}};
  co_return structured_result(out);
}

asio::awaitable<std::string> Gateway::connect_server(std::string_view server) {
  Downstream* d = find(server);
  if (!d) co_return error_result(unknown_server(server));
  std::string prior(to_string(d->status()));
  bool ok = co_await d->ensure_started(true);
  bj::object out;
  out["server"] = d->name();
  out["ok"] = ok;
  out["prior_status"] = prior;
  out["status"] = to_string(d->status());
  out["tool_count"] = d->tools().size();
  if (!ok) out["last_error"] = d->last_error();
  co_return ok ? structured_result(out)
               : error_result(fmt::format("server {} could not be started ({}): {}", d->name(),
                                          to_string(d->status()), d->last_error()));
}

void Gateway::relay_progress(std::string_view params) {
  auto token = cj::member_span(params, "progressToken");
  if (!token) return;
  std::string_view t = cj::trim(*token);
  std::uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (ec != std::errc() || ptr != t.data() + t.size()) return;
  auto it = progress_routes_.find(n);
  if (it == progress_routes_.end()) return;
  // Progress is activity: the call's inactivity timeout starts again.
  if (it->second.last_progress) *it->second.last_progress = std::chrono::steady_clock::now();
  if (it->second.client_token.empty()) return;  // the client did not ask for progress
  auto client = it->second.client.lock();
  if (!client) return;
  // Splice the client's own token in place of ours; everything else passes unchanged.
  std::size_t at = static_cast<std::size_t>(t.data() - params.data());
  std::string rewritten;
  rewritten.reserve(params.size() + it->second.client_token.size());
  rewritten.append(params.substr(0, at));
  rewritten.append(it->second.client_token);
  rewritten.append(params.substr(at + t.size()));
  client->notify("notifications/progress", rewritten, it->second.client_request_id);
}

}  // namespace sluice::gateway
