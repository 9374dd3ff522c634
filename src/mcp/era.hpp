#pragma once
// The two protocol eras a client of sluice may speak, on one endpoint (the specification's
// versioning page: a dual-era server).
//  - 2024-11-05 .. 2025-11-25, the stateful era: `initialize` selects it for the stdio process
//    or the HTTP session, and every request after it is read in that revision.
//  - 2026-07-28, the stateless era: no initialize and no session; each request says who it is
//    in `params._meta` (io.modelcontextprotocol/protocolVersion, clientCapabilities, and
//    optionally clientInfo and logLevel) and is served on its own.
// classify() tells which era a request is in and, for a stateless one, whether its `_meta`
// holds: the refusals carry the revision's error codes and the HTTP status they go with.
// Pure functions; any thread.
#include "rpc/message.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice::mcp {

inline constexpr std::string_view kStatelessVersion = "2026-07-28";

namespace meta_key {
inline constexpr std::string_view kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view kServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view kSubscriptionId = "io.modelcontextprotocol/subscriptionId";
}  // namespace meta_key

// The tasks extension (SEP-2663): declared under `extensions` in a client's and a server's
// capabilities.
inline constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";

// The 2026-07-28 error codes (the range -32020..-32099 is the specification's).
namespace era_code {
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
}  // namespace era_code

// A stateless request refused before it is served: the JSON-RPC error (with `data` when the
// revision defines one, as raw JSON) and the HTTP status it is answered with over HTTP.
struct EraRefusal {
  int code = 0;
  std::string message;
  std::string data_json;  // empty: no data member
  unsigned http_status = 400;
};

struct RequestEra {
  bool stateless = false;  // the request carries the 2026 protocolVersion in _meta
  std::string version;     // the _meta protocolVersion as sent (stateless requests)
  std::string log_level;   // the _meta logLevel, when set
  bool tasks = false;      // its clientCapabilities declare the tasks extension
  std::optional<EraRefusal> refusal;
};

// The era of a client request (params already parsed strictly, rpc::Strictness::client).
// A request without `_meta` protocolVersion is of the stateful era and is never refused
// here, unless its `_meta` holds another of the revision's keys (clientCapabilities,
// clientInfo, logLevel: refused for the missing version) or `stateless` says the transport already
// knows it is of the 2026 era (an HTTP request without a session naming no stateful revision in its
// header). `header_version`: the HTTP MCP-Protocol-Version header, which must equal the _meta
// version (-32020). The checks run in the revision's order: _meta and its protocolVersion present
// (-32602), the header equal to it (-32020), the version supported (-32022), clientCapabilities and
// the optional clientInfo and logLevel well formed (-32602), the method served (-32601).
RequestEra classify(const rpc::Message& request, bool stateless = false,
                    std::optional<std::string_view> header_version = std::nullopt);

// The rank of a log level, from debug (0) to emergency (7); nullopt for no level.
std::optional<std::size_t> log_level_rank(std::string_view level);

// The client capability a server-to-client request needs (sampling/createMessage: sampling,
// elicitation/create: elicitation, roots/list: roots); empty for any other method.
std::string_view required_client_capability(std::string_view method);

// Whether sluice serves a method to stateless (2026-07-28) requests: discovery, the lists,
// tools/call, prompts/get, resources/read, completion, subscriptions/listen and the tasks
// extension's tasks/get, tasks/update and tasks/cancel. Any other method, among them the ones
// the revision removed (initialize, ping, logging/setLevel, resources/subscribe) and the ones the
// tasks extension removed (tasks/result, tasks/list), gets -32601, and HTTP 404.
bool served_statelessly(std::string_view method);

// Whether a request's `_meta` clientCapabilities declare the tasks extension.
bool declares_tasks(const rpc::Message& request);

// The refusal (-32021, data.requiredCapabilities) of a tasks request, or of a call of a tool that
// runs only as a task, from a client that did not declare the tasks extension.
EraRefusal tasks_not_declared();

// The JSON-RPC error object of a refusal, and its whole frame for the request id `id_json`.
std::string refusal_error(const EraRefusal& refusal);
std::string refusal_frame(std::string_view id_json, const EraRefusal& refusal);

// A member spliced into a result: its key and its raw JSON value.
struct ResultMember {
  std::string key;
  std::string value_json;
};

// `result_json` (an object) with each of `members` that it does not already have added in
// front; any other text is returned as it is. Every 2026-07-28 result says which kind it is
// ("resultType":"complete"), and lists and reads carry their caching hints (ttlMs,
// cacheScope); a downstream that already set one keeps its own.
std::string with_members(std::string_view result_json, const std::vector<ResultMember>& members);

// `params_json` (an object; empty is {}) with each member of `meta` set in its `_meta`,
// replacing a member of the same key there; everything else stays byte for byte. A request to
// a 2026-07-28 server says in every request who asks (protocolVersion, clientCapabilities,
// clientInfo, logLevel). Any text that is not an object is returned as it is.
std::string with_request_meta(std::string_view params_json, const boost::json::object& meta);

// `params_json` without the member `key` of its `_meta` (the rest byte for byte); as it is when
// there is none. A notification a 2026-07-28 server sent on sluice's own listen stream names
// that stream's subscriptionId, which means nothing to sluice's clients.
std::string without_meta_member(std::string_view params_json, std::string_view key);

// Per tool name, the parameters a 2026-07-28 server asked to see as headers (its inputSchema's
// `x-mcp-header`): each (property, header name), sent over HTTP as `Mcp-Param-<name>`.
using ParamHeaders =
    std::unordered_map<std::string, std::vector<std::pair<std::string, std::string>>>;

// The x-mcp-header parameters of one listed tool (a JSON object) into `out`: true when it has
// none or all are valid; false (the tool must not be used) when one is not a non-empty HTTP
// token (letters, digits and !#$%&'*+-.^_`|~), sits on a property that is not a string,
// integer or boolean, or repeats another ignoring case.
bool param_headers_of(const boost::json::object& tool,
                      std::vector<std::pair<std::string, std::string>>& out);

// What a stateless request's result gets: resultType, and for the lists and resources/read
// the caching hints (ttlMs 0: sluice's lists follow its servers, which may change at any
// time; cacheScope public for lists, which are the same for every caller, and private for a
// read, whose content is the server's and may be the caller's own).
// `tools_ttl_ms`: the tool list's own ttlMs when its servers said one (Gateway::tools_ttl_ms).
std::vector<ResultMember> stateless_result_members(std::string_view method,
                                                   std::int64_t tools_ttl_ms = 0);

// An error relayed from a downstream to a stateless request, in this revision's terms: a
// resource not found (-32002 in 2025-11-25, retired) becomes -32602 with `data.uri` (the
// requested uri when the downstream did not say). Any other error is returned as it is.
std::string stateless_error(const rpc::Message& request, std::string_view error_json);

}  // namespace sluice::mcp
