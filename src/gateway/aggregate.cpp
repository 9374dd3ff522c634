// Aggregate mode (`--expose all`) beyond tools: prompts named `server__prompt`, resources
// and templates listed as their servers give them (routed back by URI), and the requests
// that belong to one server (prompts/get, resources/read, subscribe, completion) forwarded
// to it; logging/setLevel goes to every server that offers logging.
#include "core/json.hpp"
#include "gateway/gateway.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>

namespace sluice::gateway {
namespace bj = boost::json;
namespace cj = core::json;

namespace {

constexpr std::size_t kPageSize = 100;

// One page of `all` under `key`, with a nextCursor (the next position) when more remain.
std::string page_of(std::vector<bj::value> all, std::string_view cursor, const char* key) {
  std::size_t start = 0;
  if (!cursor.empty()) {
    auto [ptr, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), start);
    if (ec != std::errc() || ptr != cursor.data() + cursor.size()) start = all.size();
  }
  bj::array page;
  for (std::size_t i = start; i < all.size() && page.size() < kPageSize; ++i) {
    page.push_back(std::move(all[i]));
  }
  bj::object out;
  out[key] = std::move(page);
  if (start + kPageSize < all.size()) out["nextCursor"] = std::to_string(start + kPageSize);
  return bj::serialize(out);
}

std::string string_member(std::string_view object_text, std::string_view key) {
  auto span = cj::member_span(object_text, key);
  if (!span) return {};
  bj::error_code ec;
  bj::value v = bj::parse(*span, ec);
  return !ec && v.is_string() ? std::string(v.get_string()) : std::string();
}

void answer(mcp::IncomingRequest& request, const mcp::Reply& reply) {
  if (reply.status == mcp::Reply::Status::result) {
    request.respond_result(reply.message->result());
  } else if (reply.status == mcp::Reply::Status::error) {
    request.respond_error_raw(reply.message->error());
  } else if (reply.status != mcp::Reply::Status::cancelled) {
    request.respond_error(rpc::code::kInternalError, "the server did not answer");
  }
}

}  // namespace

Downstream* Gateway::owner_of_uri(std::string_view uri) {
  for (auto& d : downstreams_) {
    for (const auto& r : d->resources()) {
      if (string_member(r, "uri") == uri) return d.get();
    }
  }
  for (auto& d : downstreams_) {
    for (const auto& t : d->resource_templates()) {
      std::string tmpl = string_member(t, "uriTemplate");
      std::string prefix = tmpl.substr(0, tmpl.find('{'));
      if (!prefix.empty() && uri.substr(0, prefix.size()) == prefix) return d.get();
    }
  }
  return nullptr;
}

asio::awaitable<bool> Gateway::route_aggregate(mcp::IncomingRequest& request) {
  const rpc::Message& m = request.message();
  const std::string& method = m.method();
  std::string params = m.params().empty() ? std::string("{}") : std::string(m.params());
  std::string cursor = string_member(params, "cursor");
  static constexpr std::string_view kRouted[] = {
      "prompts/list", "prompts/get", "resources/list", "resources/templates/list",
      "resources/read", "resources/subscribe", "resources/unsubscribe", "completion/complete",
      "logging/setLevel"};
  if (std::find(std::begin(kRouted), std::end(kRouted), method) == std::end(kRouted)) {
    co_return false;
  }
  // A client may read, get or complete without listing first: every server must be running
  // (and its lists known) before a name or URI can be routed.
  co_await start_all();

  if (method == "prompts/list") {
    std::vector<bj::value> all;
    for (const auto& d : downstreams_) {
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
    request.respond_result(page_of(std::move(all), cursor, "prompts"));
    co_return true;
  }
  if (method == "resources/list" || method == "resources/templates/list") {
    bool templates = method == "resources/templates/list";
    std::vector<bj::value> all;
    for (const auto& d : downstreams_) {
      for (const auto& r : templates ? d->resource_templates() : d->resources()) {
        bj::error_code ec;
        bj::value v = bj::parse(r, ec);
        if (!ec) all.push_back(std::move(v));
      }
    }
    request.respond_result(
        page_of(std::move(all), cursor, templates ? "resourceTemplates" : "resources"));
    co_return true;
  }
  if (method == "prompts/get") {
    auto [d, own_name] = resolve_public(string_member(params, "name"));
    if (!d) {
      request.respond_error(rpc::code::kInvalidParams, "Invalid params: unknown prompt");
      co_return true;
    }
    bj::error_code ec;
    bj::value p = bj::parse(params, ec);
    if (ec || !p.is_object()) {
      request.respond_error(rpc::code::kInvalidParams, "Invalid params: not an object");
      co_return true;
    }
    p.get_object()["name"] = own_name;
    mcp::Reply reply =
        co_await d->forward(method, bj::serialize(p), call_timeout(*d, std::nullopt),
                                 &request.cancel_signal());
    answer(request, reply);
    co_return true;
  }
  if (method == "resources/read" || method == "resources/subscribe" ||
      method == "resources/unsubscribe") {
    std::string uri = string_member(params, "uri");
    Downstream* d = owner_of_uri(uri);
    if (!d) {
      request.respond_error(-32002, "Resource not found");
      co_return true;
    }
    if (method != "resources/read") {
      // Updates go to the sessions that subscribed; the server is told to stop only when
      // the last one unsubscribes.
      auto& subscribers = subscriptions_[uri];
      std::erase_if(subscribers, [&](const std::weak_ptr<mcp::Session>& w) {
        auto s = w.lock();
        return !s || s->closed() || s == request.session();
      });
      if (method == "resources/subscribe") {
        subscribers.push_back(request.session());
      } else if (!subscribers.empty()) {
        request.respond_result("{}");
        co_return true;
      }
      if (subscribers.empty()) subscriptions_.erase(uri);
    }
    mcp::Reply reply = co_await d->forward(method, params, call_timeout(*d, std::nullopt),
                                 &request.cancel_signal());
    answer(request, reply);
    co_return true;
  }
  if (method == "completion/complete") {
    bj::error_code ec;
    bj::value p = bj::parse(params, ec);
    bj::value* ref_value = !ec && p.is_object() ? p.get_object().if_contains("ref") : nullptr;
    bj::object* ref = ref_value ? ref_value->if_object() : nullptr;
    Downstream* d = nullptr;
    if (ref && ref->if_contains("name") && ref->at("name").is_string()) {
      auto resolved = resolve_public(ref->at("name").as_string());
      d = resolved.first;
      if (d) (*ref)["name"] = resolved.second;
    } else if (ref && ref->if_contains("uri") && ref->at("uri").is_string()) {
      d = owner_of_uri(ref->at("uri").as_string());
    }
    if (!d) {
      request.respond_error(rpc::code::kInvalidParams, "Invalid params: unknown reference");
      co_return true;
    }
    mcp::Reply reply =
        co_await d->forward(method, bj::serialize(p), call_timeout(*d, std::nullopt),
                                 &request.cancel_signal());
    answer(request, reply);
    co_return true;
  }
  if (method == "logging/setLevel") {
    for (auto& d : downstreams_) {
      if (d->status() != Status::online || !d->offers("logging")) continue;
      co_await d->forward(method, params, call_timeout(*d, std::nullopt), nullptr);
    }
    request.respond_result("{}");
    co_return true;
  }
  co_return false;
}

}  // namespace sluice::gateway
