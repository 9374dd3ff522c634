#pragma once
// The meta-tools (gateway.catalog_search, describe, invoke, health, ...) as ONE table of rows:
// name, title, description, input schema, annotations and the handler that serves it.
// tools/list, the argument validation, the fail-closed-stale gate and the dispatch all read
// this table, so adding a meta-tool is adding a row (and its handler).
//
// Ownership: the table is static and immutable; its compiled form (the tools/list text and
// one validator per row) is built once, on first use. Threading: the gateway's loop thread
// (the first use may come from any thread; C++ guarantees that static initialisation once).
// Errors: a handler answers with a CallToolResult text (isError for refusals); it never
// throws for bad input (the arguments were validated against the row's schema first).
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sluice::gateway {

class Budget;
class Gateway;

namespace meta {

namespace asio = boost::asio;

// The client session a meta-tool call came from, as calls are admitted and recorded for it.
struct Caller {
  std::weak_ptr<mcp::Session> session;
  Budget& budget;     // the per-client-session cap (invariant A1)
  std::string label;  // what audit and gateway.list_pending call the client
};

// One tools/call of a meta-tool, its arguments validated against the row's input schema.
struct MetaCall {
  Gateway& gateway;
  mcp::IncomingRequest& request;
  const boost::json::object& args;  // the arguments' DOM, from the request's one parse
  std::string_view args_text;       // their raw text (spliced through, never re-serialised)
  Caller& caller;
};

// The CallToolResult text to answer with; nullopt when nothing more is sent: the caller
// cancelled the call, or the handler answered the request itself (gateway.invoke, which
// splices a downstream's result from the frame it came in).
using Handler = asio::awaitable<std::optional<std::string>> (*)(MetaCall&);

struct MetaTool {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::string_view input_schema;  // JSON Schema text
  bool read_only;                 // the readOnlyHint annotation
  // Starts, stops, calls or signals a downstream (refused while fail-closed stale).
  bool reaches_downstream;
  Handler handler;
};

// Every row, in the order tools/list shows them.
std::span<const MetaTool> meta_tools();
// The row named `name`, else nullptr.
const MetaTool* find_meta_tool(std::string_view name);
// The tools/list result text of every row (built once; byte-identical from run to run).
const std::string& meta_tools_list();
// Why `args` do not match the row's input schema (value-free, one problem per line), else
// nullopt.
std::optional<std::string> argument_problems(const MetaTool& tool, const boost::json::value& args);

// The raw text of the progress token in a request's params._meta (spliced into progress
// notifications as the client sent it); empty when the client asked for none.
std::string_view progress_token_of(const rpc::Message& request);

// A 2026-07-28 request's own _meta logLevel (the level name); empty when it set none (or set one
// that is not a string: classify() has refused it already).
std::string_view log_level_of(const rpc::Message& request);

}  // namespace meta
}  // namespace sluice::gateway
