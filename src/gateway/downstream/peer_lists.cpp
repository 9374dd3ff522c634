// A downstream's lists (tools, prompts, resources, templates) through one paginated, bounded
// fetch. What a server lists is untrusted input: a malformed or repeated entry is skipped, an
// entry beyond the cap is dropped, a long description or title is cut; each is counted per
// server and list, never thrown, and reported in one value-free log line per listing.
#include "core/describe.hpp"
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/wall_clock.hpp"
#include "gateway/downstream/peer.hpp"
#include "mcp/era.hpp"
#include "rpc/message.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <unordered_set>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

// One kind of listing: the method, the member holding the page's entries, the member that
// identifies an entry, and how its failures are worded.
struct DownstreamPeer::Listing {
  std::string method;
  std::string key;
  std::string identity;
  std::string malformed;       // the end of "<method> answered with ..."
  bool names_timeout = false;  // "<method> timed out" rather than "<method> failed"
  ListBounds SkippedEntries::*bounds = nullptr;  // where its bounds are counted
};

namespace {

std::string_view entries(std::size_t n) { return n == 1 ? "entry" : "entries"; }

// Collects the malformed entries of one listing and what its bounds took, and reports them
// in one log line.
struct SkipReport {
  std::size_t skipped = 0;
  std::string first;  // the first problem, with its entry number
  ListBounds bounds;
  void add(std::size_t index, std::string problem) {
    if (skipped++ == 0) first = fmt::format("entry {}: {}", index, problem);
  }
  void log(std::string_view server, std::string_view method, const core::Limits& limits) const {
    std::string line;
    auto part = [&line](std::string text) { line += (line.empty() ? "" : "; ") + text; };
    if (skipped > 0) {
      part(
          fmt::format("skipped {} malformed {} (the first, {})", skipped, entries(skipped), first));
    }
    if (bounds.over_cap > 0) {
      part(fmt::format("dropped {} {} beyond the cap of {} (max_tools_per_server)", bounds.over_cap,
                       entries(bounds.over_cap), limits.max_tools_per_server));
    }
    if (bounds.pages_unread) {
      part(
          fmt::format("stopped after {} pages (max_list_pages) with more offered; those were "
                      "not read",
                      limits.max_list_pages));
    }
    if (bounds.texts_cut > 0) {
      part(fmt::format("cut the description or title of {} {} to {} bytes", bounds.texts_cut,
                       entries(bounds.texts_cut), kMaxListedTextBytes));
    }
    if (!line.empty()) core::log::warn("server {}: {}: {}", server, method, line);
  }
};

// Cuts a string over kMaxListedTextBytes at a UTF-8 boundary and marks it; whether it did.
// (Listed text is valid UTF-8: the strict parse refuses anything else.)
bool cut_text(bj::value* v) {
  if (!v || !v->is_string() || v->get_string().size() <= kMaxListedTextBytes) return false;
  bj::string& text = v->get_string();
  std::size_t end = kMaxListedTextBytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  text.append("\u2026 (truncated)");
  return true;
}

bool method_not_found(const mcp::Reply& reply) {
  if (reply.status != mcp::Reply::Status::error || !reply.message) return false;
  auto code = cj::member_span(reply.message->error(), "code");
  return code && cj::trim(*code) == std::to_string(rpc::code::kMethodNotFound);
}

// Cuts an entry's long description and title (and a tool's annotations.title); whether it
// cut any.
bool cut_long_texts(bj::object& entry) {
  bool cut = cut_text(entry.if_contains("description"));
  cut = cut_text(entry.if_contains("title")) || cut;
  if (bj::value* a = entry.if_contains("annotations"); a && a->is_object()) {
    cut = cut_text(a->get_object().if_contains("title")) || cut;
  }
  return cut;
}

}  // namespace

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

ToolEntry tool_entry(const bj::value& tv, const schema::Options* schema_options,
                     std::string_view server) {
  const auto& obj = tv.get_object();
  ToolEntry entry;
  entry.name = std::string(obj.at("name").get_string());
  if (const auto* a = obj.if_contains("annotations"); a && a->is_object()) {
    if (const auto* t = a->get_object().if_contains("readOnlyHint"); t && t->is_bool())
      entry.read_only = t->get_bool();
  }
  if (const auto* e = obj.if_contains("execution"); e && e->is_object()) {
    const auto* support = e->get_object().if_contains("taskSupport");
    const bj::string* level = support ? support->if_string() : nullptr;
    if (level && *level == "optional") entry.task_support = TaskSupportLevel::optional;
    if (level && *level == "required") entry.task_support = TaskSupportLevel::required;
  }
  entry.raw = bj::serialize(tv);
  const auto* input_schema = schema_options ? obj.if_contains("inputSchema") : nullptr;
  if (input_schema) {
    auto compiled = schema::Schema::compile(*input_schema, *schema_options);
    if (compiled) {
      entry.schema = std::make_shared<const ToolSchema>(ToolSchema{std::move(*compiled), {}});
    } else {
      entry.schema =
          std::make_shared<const ToolSchema>(ToolSchema{std::nullopt, compiled.error().message});
      core::log::warn("server {}: tool {}: its input schema is not usable: {}", server, entry.name,
                      entry.schema_problem());
    }
  }
  return entry;
}

asio::awaitable<bool> DownstreamPeer::fetch_all(const Listing& listing,
                                                const std::function<void(const bj::value&)>& add,
                                                const std::function<bool()>& full,
                                                std::size_t& skipped) {
  std::unordered_set<std::string> identities;
  SkipReport skips;
  std::size_t index = 0;  // of the entry, over every page
  std::string cursor;
  bool next_page = false;  // the last page read offered a next one
  cj::ParseLimits parse_limits{limits_.max_json_depth};
  auto session = session_;  // a teardown between pages resets session_
  for (std::size_t page = 0; page < limits_.max_list_pages; ++page) {
    std::string params = cursor.empty() ? "{}" : R"({"cursor":)" + cursor + "}";
    auto reply =
        co_await session->request(listing.method, dress(std::move(params)), limits_.list_timeout);
    // A server that declares resources but answers templates (or prompts) with "method not
    // found" has none of them: many servers built on the official SDKs do exactly that.
    if (page == 0 && listing.method != "tools/list" && method_not_found(reply)) co_return true;
    if (!reply.ok()) {
      co_return fail(listing.names_timeout && reply.status == mcp::Reply::Status::timeout
                         ? listing.method + " timed out"
                     : transport_ && transport_->protocol_violation()
                         ? listing.method + " failed: " + overlong_line_reason()
                         : listing.method + " failed");
    }
    std::string_view result = reply.message->result();
    if (page == 0) fetched_ttl_ms_ = -1;
    if (auto ttl = cj::member_span(result, "ttlMs")) {
      std::int64_t ms = -1;
      const std::string_view text = cj::trim(*ttl);
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
      if (ec == std::errc() && end == text.data() + text.size() && ms >= 0) {
        fetched_ttl_ms_ = fetched_ttl_ms_ < 0 ? ms : std::min(fetched_ttl_ms_, ms);
      }
    }
    auto list = cj::member_span(result, listing.key);
    auto parsed = list ? cj::parse_strict(*list, parse_limits)
                       : boost::system::result<bj::value, cj::ParseError>(bj::array());
    if (!parsed || !parsed->is_array()) {
      co_return fail(listing.method + " answered with " + listing.malformed);
    }
    for (auto& item : parsed->get_array()) {
      ++index;
      if (full()) {
        // Beyond the cap: counted, never looked at.
        ++skips.bounds.over_cap;
        continue;
      }
      if (std::string problem = entry_problem(item, listing.identity, identities);
          !problem.empty()) {
        skips.add(index, std::move(problem));
        continue;
      }
      const bj::string& identity = item.get_object().at(listing.identity).get_string();
      identities.emplace(identity);
      if (withheld(listing.key, identity)) {
        ++skips.bounds.withheld;
        continue;
      }
      if (cut_long_texts(item.get_object())) ++skips.bounds.texts_cut;
      add(item);
    }
    auto next = cj::member_span(result, "nextCursor");
    next_page = next && cj::trim(*next) != "null";
    if (!next_page) break;
    cursor = std::string(cj::trim(*next));
  }
  skips.bounds.pages_unread = next_page;
  skips.log(name_, listing.method, limits_);
  skipped = skips.skipped;
  skipped_.*listing.bounds = skips.bounds;
  co_return true;
}

bool DownstreamPeer::withheld(std::string_view key, std::string_view identity) const {
  if (access_ == nullptr) return false;
  const config::Subject subject = key == "tools"     ? config::Subject::tools
                                  : key == "prompts" ? config::Subject::prompts
                                                     : config::Subject::resources;
  return !access_->allows(subject, name_, identity);
}

asio::awaitable<bool> DownstreamPeer::list_tools() {
  static const Listing kTools{
      "tools/list", "tools", "name", "a malformed tool list", true, &SkippedEntries::tools_bounds};
  std::vector<ToolEntry> tools;
  schema::Options schema_options;
  schema_options.max_depth = limits_.max_schema_depth;
  std::size_t skipped = 0;
  // A tool may ask for parameters as headers (x-mcp-header, 2026-07-28): a modern server's
  // tool that asks wrongly is left out; the valid ones go to the transport (sent to a remote
  // server) and are kept (checked on sluice's own HTTP front end).
  auto headers = std::make_shared<mcp::ParamHeaders>();
  std::size_t bad_headers = 0;
  std::vector<std::pair<std::string, std::string>> params;
  bool ok = co_await fetch_all(
      kTools,
      [&](const bj::value& item) {
        const bool valid = mcp::param_headers_of(item.get_object(), params);
        if (modern_ && !valid) {
          ++bad_headers;
          return;
        }
        tools.push_back(tool_entry(item, &schema_options, name_));
        if (valid && !params.empty()) (*headers)[tools.back().name] = params;
      },
      [&] { return tools.size() >= limits_.max_tools_per_server; }, skipped);
  if (!ok) co_return false;
  if (bad_headers > 0) {
    core::log::warn("server {}: left out {} tool(s) whose x-mcp-header is invalid", name_,
                    bad_headers);
  }
  param_headers_ = headers;
  if (transport_) transport_->param_headers(std::move(headers));
  skipped_.tools = skipped + bad_headers;
  set_tools(std::move(tools));
  tools_known_ = true;
  lists_cached_ = false;
  listed_at_ms_ = core::unix_ms_now();
  list_ttl_ms_ = fetched_ttl_ms_;
  co_return true;
}

asio::awaitable<bool> DownstreamPeer::list_items(const Listing& listing,
                                                 std::vector<std::string>& out,
                                                 std::size_t& skipped) {
  std::vector<std::string> items;
  bool ok = co_await fetch_all(
      listing, [&](const bj::value& item) { items.push_back(bj::serialize(item)); },
      [&] { return items.size() >= limits_.max_tools_per_server; }, skipped);
  if (!ok) co_return false;
  out = std::move(items);
  co_return true;
}

asio::awaitable<bool> DownstreamPeer::list_other() {
  static const Listing kPrompts{"prompts/list",     "prompts", "name",
                                "a malformed list", false,     &SkippedEntries::prompts_bounds};
  static const Listing kResources{
      "resources/list",   "resources", "uri",
      "a malformed list", false,       &SkippedEntries::resources_bounds};
  static const Listing kTemplates{"resources/templates/list",
                                  "resourceTemplates",
                                  "uriTemplate",
                                  "a malformed list",
                                  false,
                                  &SkippedEntries::resource_templates_bounds};
  // Plain statements: no temporaries inside a conditional co_await (GCC 12 destroys them
  // twice).
  if (offers("prompts")) {
    bool ok = co_await list_items(kPrompts, prompts_, skipped_.prompts);
    if (!ok) co_return false;
  }
  if (offers("resources")) {
    bool ok = co_await list_items(kResources, resources_, skipped_.resources);
    if (!ok) co_return false;
    ok = co_await list_items(kTemplates, resource_templates_, skipped_.resource_templates);
    if (!ok) co_return false;
  }
  co_return true;
}

}  // namespace sluice::gateway
