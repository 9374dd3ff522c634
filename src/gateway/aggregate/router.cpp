#include "gateway/aggregate/router.hpp"

#include "core/describe.hpp"
#include "core/json.hpp"
#include "gateway/gateway.hpp"
#include "gateway/policy/access.hpp"
#include "mcp/answer.hpp"
#include "mcp/pagination.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace sluice::gateway {
namespace bj = boost::json;
namespace cj = core::json;

namespace {

constexpr std::string_view kUnanswered = "the server did not answer";

// A string member of the request's params (from the DOM of its one parse); empty when it is
// absent or not a string.
std::string_view string_param(const rpc::Message& m, std::string_view key) {
  const auto* params = m.params_object();
  const auto* v = params ? params->if_contains(key) : nullptr;
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// A string member of an object a downstream listed (valid JSON); empty when there is none.
std::string listed_string(std::string_view object_text, std::string_view key) {
  auto span = cj::member_span(object_text, key);
  std::string scratch;
  auto value = span ? core::json::string_value(*span, scratch) : std::nullopt;
  return value ? std::string(*value) : std::string();
}

// The request's params as a DOM to edit (a copy of the one parse's), an empty object when
// there are none; nullopt when they are not an object.
std::optional<bj::value> params_copy(const rpc::Message& m) {
  if (const auto* params = m.params_object()) return bj::value(*params);
  if (m.params().empty()) return bj::value(bj::object());
  return std::nullopt;
}

// Why the operator's policy withholds `name` (a prompt's own name, a resource's URI) of
// `server`; empty when it does not. Withheld entries are not listed; this refuses requests
// that name one anyway.
std::string withheld(const config::AccessPolicy& access, config::Subject subject,
                     const Downstream& server, std::string_view name) {
  std::string why = access.denial(subject, server.name(), name);
  if (why.empty()) return why;
  const bool prompt = subject == config::Subject::prompts;
  return withheld_refusal(
      fmt::format("{} {} of server {}", prompt ? "prompt" : "resource",
                  prompt ? core::show_name(name) : std::string("(a URI)"), server.name()),
      why);
}

// A listed tool's text (kept serialised by ToolEntry, always with one string "name") with
// `prefix` (already JSON-escaped: the server's name and "__") put in front of that name, in
// place: the name's text goes through as listed, escapes and all, so there is no parse,
// decoding or serialisation per tool. An empty prefix leaves the text as it is.
void append_renamed(std::string& out, std::string_view tool_text, std::string_view prefix) {
  if (prefix.empty()) {
    out.append(tool_text);
    return;
  }
  const std::string_view listed = *cj::member_span(tool_text, "name");  // with its quotes
  const auto at = static_cast<std::size_t>(listed.data() - tool_text.data());
  out.append(tool_text.substr(0, at + 1));  // through the opening quote
  out.append(prefix);
  out.append(tool_text.substr(at + 1));
}

// A request for a URI no server lists: refused with the rule when the policy withholds it
// from a server (a withheld resource is not listed), else empty.
std::string withheld_uri(const config::AccessPolicy& access, const Fleet& fleet,
                         std::string_view uri) {
  if (access.deny.resources.empty() && access.allow.resources.empty()) return {};
  for (const auto& d : fleet.servers()) {
    if (std::string why = withheld(access, config::Subject::resources, *d, uri); !why.empty()) {
      return why;
    }
  }
  return {};
}

}  // namespace

asio::awaitable<bool> AggregateRouter::route(mcp::IncomingRequest& request) {
  static constexpr std::string_view kRouted[] = {
      "prompts/list",    "prompts/get",         "resources/list",        "resources/templates/list",
      "resources/read",  "resources/subscribe", "resources/unsubscribe", "completion/complete",
      "logging/setLevel"};
  const std::string& method = request.message().method();
  if (std::find(std::begin(kRouted), std::end(kRouted), method) == std::end(kRouted)) {
    co_return false;
  }
  // Aggregate mode: a client may read, get or complete without listing first, so every
  // server must be running (and its lists known) before a name or URI can be routed. Meta
  // mode starts nothing here (progressive disclosure): lists answer from what is known, and
  // a routed request starts only its own server (started()).
  if (gateway_.options().expose_all) co_await gateway_.start_all();
  std::string_view cursor = string_param(request.message(), "cursor");
  if (method == "prompts/list") {
    request.respond_result(list_prompts(cursor));
  } else if (method == "resources/list" || method == "resources/templates/list") {
    request.respond_result(list_resources(cursor, method == "resources/templates/list"));
  } else if (method == "prompts/get") {
    co_await get_prompt(request);
  } else if (method == "completion/complete") {
    co_await complete(request);
  } else if (method == "logging/setLevel") {
    co_await set_level(request);
  } else {
    co_await resource_request(request);
  }
  co_return true;
}

std::string AggregateRouter::tools_page(std::string_view cursor,
                                        const std::string& meta_tools_json) const {
  // Every tool in a fixed order (the meta-tools first when exposed); a cursor is the
  // position of the next one. Only the page's tools are built.
  bj::value meta_list;
  const bj::array* meta = nullptr;
  if (gateway_.options().expose_meta) {
    meta_list = bj::parse(meta_tools_json);
    meta = &meta_list.at("tools").as_array();
  }
  // Each server's public prefix, escaped once: its tools' names are spliced after it.
  std::vector<std::string> prefixes;
  std::vector<std::pair<std::size_t, const ToolEntry*>> tools;
  for (const auto& d : gateway_.fleet().servers()) {
    const std::string prefix = cj::quote(public_name(*d, ""));
    prefixes.push_back(prefix.substr(1, prefix.size() - 2));
    // A cached summary (a server that did not start) is no tool definition to list.
    for (const auto& tool : d->tools()) {
      if (!tool.summary) tools.emplace_back(prefixes.size() - 1, &tool);
    }
  }
  const std::size_t meta_count = meta ? meta->size() : 0;
  return mcp::page_result_text(meta_count + tools.size(), cursor, gateway_.limits().list_page_size,
                               "tools", [&](std::size_t i, std::string& out) {
                                 if (i < meta_count) {
                                   out += bj::serialize((*meta)[i]);
                                 } else {
                                   auto [server, tool] = tools[i - meta_count];
                                   append_renamed(out, tool->raw, prefixes[server]);
                                 }
                               });
}

std::string AggregateRouter::public_name(const Downstream& server, std::string_view name) const {
  if (gateway_.options().passthrough) return std::string(name);
  return server.name() + "__" + std::string(name);
}

std::pair<Downstream*, std::string> AggregateRouter::resolve_public(std::string_view name) const {
  const Fleet& fleet = gateway_.fleet();
  if (gateway_.options().passthrough) {
    return {fleet.servers().empty() ? nullptr : fleet.servers().front().get(), std::string(name)};
  }
  std::size_t sep = name.find("__");
  if (sep == std::string_view::npos) return {nullptr, {}};
  return {fleet.find(name.substr(0, sep)), std::string(name.substr(sep + 2))};
}

std::string AggregateRouter::list_prompts(std::string_view cursor) const {
  std::vector<bj::value> all;
  for (const auto& d : gateway_.fleet().servers()) {
    for (const auto& p : d->prompts()) {
      // The listing kept only objects with a string name; nothing here may throw anyway.
      bj::error_code ec;
      bj::value v = bj::parse(p, ec);
      bj::object* prompt = ec ? nullptr : v.if_object();
      const bj::value* name = prompt ? prompt->if_contains("name") : nullptr;
      if (!name || !name->is_string()) continue;
      (*prompt)["name"] = public_name(*d, name->get_string());
      all.push_back(std::move(v));
    }
  }
  return mcp::page_result(std::move(all), cursor, gateway_.limits().list_page_size, "prompts");
}

std::string AggregateRouter::list_resources(std::string_view cursor, bool templates) const {
  std::vector<bj::value> all;
  for (const auto& d : gateway_.fleet().servers()) {
    for (const auto& r : templates ? d->resource_templates() : d->resources()) {
      bj::error_code ec;
      bj::value v = bj::parse(r, ec);
      if (!ec) all.push_back(std::move(v));
    }
  }
  return mcp::page_result(std::move(all), cursor, gateway_.limits().list_page_size,
                          templates ? "resourceTemplates" : "resources");
}

asio::awaitable<void> AggregateRouter::get_prompt(mcp::IncomingRequest& request) {
  auto [d, own_name] = resolve_public(string_param(request.message(), "name"));
  if (!d) {
    request.respond_error(rpc::code::kInvalidParams, "Invalid params: unknown prompt");
    co_return;
  }
  std::optional<bj::value> params = params_copy(request.message());
  if (!params) {
    request.respond_error(rpc::code::kInvalidParams, "Invalid params: not an object");
    co_return;
  }
  const config::AccessPolicy& access = gateway_.policy().access;
  if (std::string why = withheld(access, config::Subject::prompts, *d, own_name); !why.empty()) {
    request.respond_error(rpc::code::kInvalidParams, why);
    co_return;
  }
  params->get_object()["name"] = own_name;
  co_await forward(request, *d, bj::serialize(*params));
}

asio::awaitable<void> AggregateRouter::resource_request(mcp::IncomingRequest& request) {
  const std::string& method = request.message().method();
  std::string uri(string_param(request.message(), "uri"));
  const config::AccessPolicy& access = gateway_.policy().access;
  Downstream* d = owner_of_uri(uri);
  std::string why = d ? withheld(access, config::Subject::resources, *d, uri)
                      : withheld_uri(access, gateway_.fleet(), uri);
  if (!why.empty()) {
    request.respond_error(rpc::code::kInvalidParams, why);
    co_return;
  }
  if (!d) {
    request.respond_error(-32002, "Resource not found");
    co_return;
  }
  const bool read = method == "resources/read";
  const bool subscribe = method == "resources/subscribe";
  // An unsubscribe never starts a server: one that is not running sends no updates.
  if (!read && !subscribe && d->phase() != Phase::online) {
    gateway_.clients().update_subscription(d->name(), uri, request.session(), false);
    request.respond_result("{}");
    co_return;
  }
  // The server first: a subscription is recorded only once the server can hear of it.
  bool online = co_await started(request, *d);
  if (!online) co_return;
  if (!read &&
      !gateway_.clients().update_subscription(d->name(), uri, request.session(), subscribe)) {
    // Another session stays subscribed: the server keeps sending updates.
    request.respond_result("{}");
    co_return;
  }
  // A named local, not a temporary: GCC 12 destroys a temporary of a conditional
  // expression inside a co_await twice.
  std::string params(request.message().params());
  if (params.empty()) params = "{}";
  co_await forward(request, *d, std::move(params));
}

asio::awaitable<void> AggregateRouter::complete(mcp::IncomingRequest& request) {
  std::optional<bj::value> params = params_copy(request.message());
  bj::value* ref_value = params ? params->get_object().if_contains("ref") : nullptr;
  bj::object* ref = ref_value ? ref_value->if_object() : nullptr;
  Downstream* d = nullptr;
  std::string why;
  const config::AccessPolicy& access = gateway_.policy().access;
  if (ref && ref->if_contains("name") && ref->at("name").is_string()) {
    auto resolved = resolve_public(ref->at("name").as_string());
    d = resolved.first;
    if (d) why = withheld(access, config::Subject::prompts, *d, resolved.second);
    if (d) (*ref)["name"] = resolved.second;
  } else if (ref && ref->if_contains("uri") && ref->at("uri").is_string()) {
    d = owner_of_uri(ref->at("uri").as_string());
    if (d) why = withheld(access, config::Subject::resources, *d, ref->at("uri").as_string());
  }
  if (!why.empty()) {
    request.respond_error(rpc::code::kInvalidParams, why);
    co_return;
  }
  if (!d) {
    request.respond_error(rpc::code::kInvalidParams, "Invalid params: unknown reference");
    co_return;
  }
  co_await forward(request, *d, bj::serialize(*params));
}

asio::awaitable<void> AggregateRouter::set_level(mcp::IncomingRequest& request) {
  std::string params(request.message().params());
  if (params.empty()) params = "{}";
  std::string method = request.message().method();
  for (const auto& d : gateway_.fleet().servers()) {
    if (d->phase() != Phase::online || !d->offers("logging")) continue;
    co_await d->forward(method, params, gateway_.call_timeout(*d, std::nullopt), nullptr);
  }
  request.respond_result("{}");
}

asio::awaitable<bool> AggregateRouter::started(mcp::IncomingRequest& request, Downstream& server) {
  if (server.phase() == Phase::online) co_return true;
  bool online = co_await server.ensure_started();
  if (!online) {
    request.respond_error(rpc::code::kInternalError,
                          fmt::format("server {} is not available ({}): {}", server.name(),
                                      to_string(server.phase()), server.last_error()));
  }
  co_return online;
}

asio::awaitable<void> AggregateRouter::forward(mcp::IncomingRequest& request, Downstream& server,
                                               std::string params) {
  bool online = co_await started(request, server);
  if (!online) co_return;
  // What the server asks or logs meanwhile belongs to this request's client.
  ClientRelay::Forwarding scope = gateway_.clients().forwarding(
      server.name(), request.session(), std::string(request.message().id()));
  mcp::Reply reply = co_await server.forward(request.message().method(), std::move(params),
                                             gateway_.call_timeout(server, std::nullopt),
                                             &request.cancel_signal());
  mcp::answer(request, reply, kUnanswered);
}

asio::awaitable<std::vector<std::string>> AggregateRouter::subscribe_listener(
    std::vector<std::string> uris, const void* listener) {
  std::vector<std::string> subscribed;
  const config::AccessPolicy& access = gateway_.policy().access;
  for (auto& uri : uris) {
    Downstream* d = owner_of_uri(uri);
    if (!d || !withheld(access, config::Subject::resources, *d, uri).empty()) continue;
    if (d->phase() != Phase::online) {
      const bool online = co_await d->ensure_started();
      if (!online) continue;
    }
    if (gateway_.clients().update_listener_subscription(d->name(), uri, listener, true)) {
      mcp::Reply reply =
          co_await d->forward("resources/subscribe", R"({"uri":)" + cj::quote(uri) + "}",
                              gateway_.call_timeout(*d, std::nullopt), nullptr);
      if (!reply.ok()) {
        gateway_.clients().update_listener_subscription(d->name(), uri, listener, false);
        continue;
      }
    }
    subscribed.push_back(std::move(uri));
  }
  co_return subscribed;
}

asio::awaitable<void> AggregateRouter::unsubscribe_listener(std::vector<std::string> uris,
                                                            const void* listener) {
  for (const auto& uri : uris) {
    Downstream* d = owner_of_uri(uri);
    if (!d) continue;
    const bool last =
        gateway_.clients().update_listener_subscription(d->name(), uri, listener, false);
    if (last && d->phase() == Phase::online) {
      co_await d->forward("resources/unsubscribe", R"({"uri":)" + cj::quote(uri) + "}",
                          gateway_.call_timeout(*d, std::nullopt), nullptr);
    }
  }
}

Downstream* AggregateRouter::owner_of_uri(std::string_view uri) const {
  const auto& servers = gateway_.fleet().servers();
  for (const auto& d : servers) {
    for (const auto& r : d->resources()) {
      if (listed_string(r, "uri") == uri) return d.get();
    }
  }
  for (const auto& d : servers) {
    for (const auto& t : d->resource_templates()) {
      std::string tmpl = listed_string(t, "uriTemplate");
      std::string prefix = tmpl.substr(0, tmpl.find('{'));
      if (!prefix.empty() && uri.substr(0, prefix.size()) == prefix) return d.get();
    }
  }
  return nullptr;
}

}  // namespace sluice::gateway
