// A downstream's lists (tools, prompts, resources, templates), paginated and bounded. What a
// server lists is untrusted input: a malformed entry is skipped and counted per server and
// list, never thrown, and reported in one value-free log line per listing.
#include "core/describe.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "gateway/downstream.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <unordered_set>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

namespace {

// Downstream output is untrusted: an entry of a list is usable when it is an object whose
// `key` is a non-empty string not used by an earlier entry. Else why not, from its
// structure only (value-free).
std::string entry_problem(const bj::value& entry, std::string_view key,
                          const std::unordered_set<std::string>& seen) {
  if (!entry.is_object()) return "it is " + core::describe_kind(entry) + ", not an object";
  const bj::value* v = entry.get_object().if_contains(key);
  if (!v) return fmt::format("it has no \"{}\"", key);
  if (!v->is_string()) {
    return fmt::format("its \"{}\" is {}, not a string", key, core::describe_kind(*v));
  }
  if (v->get_string().empty()) return fmt::format("its \"{}\" is empty", key);
  if (seen.count(std::string(v->get_string()))) {
    return fmt::format("its \"{}\" repeats an earlier entry's", key);
  }
  return {};
}

// Collects the malformed entries of one listing and reports them in one log line.
struct SkipReport {
  std::size_t skipped = 0;
  std::string first;  // the first problem, with its entry number
  void add(std::size_t index, std::string problem) {
    if (skipped++ == 0) first = fmt::format("entry {}: {}", index, problem);
  }
  void log(std::string_view server, std::string_view method) const {
    if (skipped == 0) return;
    core::log::warn("server {}: {}: skipped {} malformed entr{} (the first, {})", server, method,
                    skipped, skipped == 1 ? "y" : "ies", first);
  }
};

}  // namespace

asio::awaitable<bool> Downstream::list_tools() {
  std::vector<ToolEntry> tools;
  std::unordered_set<std::string> names;
  SkipReport skips;
  std::size_t index = 0;  // of the entry, over every page
  std::string cursor;
  cj::ParseLimits parse_limits{limits_.max_json_depth};
  core::schema::Options schema_options;
  schema_options.max_depth = limits_.max_schema_depth;
  for (std::size_t page = 0; page < limits_.max_list_pages; ++page) {
    std::string params = cursor.empty() ? "{}" : R"({"cursor":)" + cursor + "}";
    auto reply = co_await session_->request("tools/list", params, limits_.list_timeout);
    if (!reply.ok()) {
      fail(reply.status == mcp::Reply::Status::timeout ? "tools/list timed out"
           : stream_ && stream_->protocol_violation()
               ? "tools/list failed: " + overlong_line_reason()
               : "tools/list failed");
      co_return false;
    }
    std::string_view result = reply.message->result();
    auto list = cj::member_span(result, "tools");
    auto parsed = list ? cj::parse_strict(*list, parse_limits)
                       : boost::system::result<bj::value, cj::ParseError>(bj::array());
    if (!parsed || !parsed->is_array()) {
      fail("tools/list answered with a malformed tool list");
      co_return false;
    }
    for (const auto& tv : parsed->get_array()) {
      ++index;
      if (std::string problem = entry_problem(tv, "name", names); !problem.empty()) {
        skips.add(index, std::move(problem));
        continue;
      }
      if (tools.size() >= limits_.max_tools_per_server) break;
      const auto& obj = tv.get_object();
      const auto* name = obj.if_contains("name");
      names.emplace(name->get_string());
      ToolEntry entry;
      entry.name = std::string(name->get_string());
      if (const auto* t = obj.if_contains("title"); t && t->is_string())
        entry.title = std::string(t->get_string());
      if (const auto* d = obj.if_contains("description"); d && d->is_string())
        entry.description = std::string(d->get_string());
      if (const auto* a = obj.if_contains("annotations"); a && a->is_object()) {
        if (const auto* t = a->get_object().if_contains("readOnlyHint"); t && t->is_bool())
          entry.read_only = t->get_bool();
        if (entry.title.empty()) {
          if (const auto* t = a->get_object().if_contains("title"); t && t->is_string())
            entry.title = std::string(t->get_string());
        }
      }
      entry.raw = bj::serialize(tv);
      if (const auto* schema = obj.if_contains("inputSchema")) {
        auto compiled = core::schema::Schema::compile(*schema, schema_options);
        if (compiled) {
          entry.validator = std::move(*compiled);
        } else {
          entry.schema_problem = compiled.error().message;
          core::log::warn("server {}: tool {}: its input schema is not usable: {}", config_.name,
                          entry.name, entry.schema_problem);
        }
      }
      tools.push_back(std::move(entry));
    }
    auto next = cj::member_span(result, "nextCursor");
    if (!next || cj::trim(*next) == "null") break;
    cursor = std::string(cj::trim(*next));
  }
  skips.log(config_.name, "tools/list");
  skipped_.tools = skips.skipped;
  tools_ = std::move(tools);
  tools_known_ = true;
  co_return true;
}

asio::awaitable<bool> Downstream::list_items(std::string method, std::string key,
                                             std::string identity, std::vector<std::string>& out,
                                             std::size_t& skipped) {
  std::vector<std::string> items;
  std::unordered_set<std::string> identities;
  SkipReport skips;
  std::size_t index = 0;  // of the entry, over every page
  std::string cursor;
  cj::ParseLimits parse_limits{limits_.max_json_depth};
  for (std::size_t page = 0; page < limits_.max_list_pages; ++page) {
    std::string params = cursor.empty() ? "{}" : R"({"cursor":)" + cursor + "}";
    auto reply = co_await session_->request(method, params, limits_.list_timeout);
    if (!reply.ok()) {
      fail(stream_ && stream_->protocol_violation() ? method + " failed: " + overlong_line_reason()
                                                    : method + " failed");
      co_return false;
    }
    std::string_view result = reply.message->result();
    auto list = cj::member_span(result, key);
    auto parsed = list ? cj::parse_strict(*list, parse_limits)
                       : boost::system::result<bj::value, cj::ParseError>(bj::array());
    if (!parsed || !parsed->is_array()) {
      fail(method + " answered with a malformed list");
      co_return false;
    }
    for (const auto& item : parsed->get_array()) {
      ++index;
      if (std::string problem = entry_problem(item, identity, identities); !problem.empty()) {
        skips.add(index, std::move(problem));
        continue;
      }
      if (items.size() >= limits_.max_tools_per_server) break;
      identities.emplace(item.get_object().at(identity).get_string());
      items.push_back(bj::serialize(item));
    }
    auto next = cj::member_span(result, "nextCursor");
    if (!next || cj::trim(*next) == "null") break;
    cursor = std::string(cj::trim(*next));
  }
  skips.log(config_.name, method);
  skipped = skips.skipped;
  out = std::move(items);
  co_return true;
}

asio::awaitable<bool> Downstream::list_other() {
  // Plain statements: no temporaries inside a conditional co_await (GCC 12 destroys them
  // twice).
  if (offers("prompts")) {
    bool ok = co_await list_items("prompts/list", "prompts", "name", prompts_, skipped_.prompts);
    if (!ok) co_return false;
  }
  if (offers("resources")) {
    bool ok =
        co_await list_items("resources/list", "resources", "uri", resources_, skipped_.resources);
    if (!ok) co_return false;
    ok = co_await list_items("resources/templates/list", "resourceTemplates", "uriTemplate",
                             resource_templates_, skipped_.resource_templates);
    if (!ok) co_return false;
  }
  co_return true;
}

}  // namespace sluice::gateway
