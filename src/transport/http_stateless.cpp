// Stateless (2026-07-28) requests on the one MCP endpoint: a POST whose message carries the
// revision's _meta needs no session. Its _meta and its headers are checked first (the
// refusals are HTTP 400, or 404 for a method not served statelessly); then it is served in a
// session of its own, opened for it and ended with its answer. Ending that session when the
// client closes the response stream is what makes the close a cancellation in this revision
// (the call's permit is kept by its work, as for any cancel).
#include "core/json.hpp"
#include "mcp/era.hpp"
#include "transport/era_headers.hpp"
#include "transport/http_server_impl.hpp"

#include <boost/json/object.hpp>

namespace sluice::transport {
namespace http = boost::beast::http;

namespace {

mcp::EraRefusal mismatch(std::string what) {
  return mcp::EraRefusal{mcp::era_code::kHeaderMismatch, "Header mismatch: " + what, {}, 400};
}

// An argument as its Mcp-Param header carries it (x-mcp-header allows strings, integers and
// booleans); nullopt for any other value.
std::optional<std::string> header_form(const boost::json::value& v) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  if (v.is_bool()) return v.get_bool() ? "true" : "false";
  return std::nullopt;
}

}  // namespace

std::optional<mcp::EraRefusal> HttpServerImpl::param_header_problem(
    const Request& req, const rpc::Message& message) const {
  const boost::json::object* params = message.params_object();
  const boost::json::value* name = params ? params->if_contains("name") : nullptr;
  if (!hooks_.param_headers || !name || !name->is_string()) return std::nullopt;
  const boost::json::value* args = params->if_contains("arguments");
  const boost::json::object* fields = args ? args->if_object() : nullptr;
  for (const auto& [property, header] : hooks_.param_headers(name->get_string())) {
    const boost::json::value* value = fields ? fields->if_contains(property) : nullptr;
    if (!value || value->is_null()) continue;  // a null argument has no header
    std::string field = "Mcp-Param-" + header;
    if (req.find(field) == req.end()) return mismatch(field + " is required");
    std::optional<std::string> sent = decode_header_value(req[field]);
    if (!sent) return mismatch(field + " is not valid Base64");
    if (header_form(*value) != sent) return mismatch(field + " differs from the request");
  }
  return std::nullopt;
}

std::optional<mcp::EraRefusal> HttpServerImpl::stateless_header_problem(
    const Request& req, const rpc::Message& message) const {
  std::string_view method = req["Mcp-Method"];
  if (method.empty()) return mismatch("Mcp-Method is required");
  if (method != message.method()) return mismatch("Mcp-Method differs from the method");
  std::string_view key = name_member(message.method());
  if (key.empty()) return std::nullopt;
  if (req.find("Mcp-Name") == req.end()) return mismatch("Mcp-Name is required");
  std::optional<std::string> name = decode_header_value(req["Mcp-Name"]);
  const boost::json::object* params = message.params_object();
  const boost::json::value* value = params ? params->if_contains(key) : nullptr;
  if (!name || !value || !value->is_string() || value->get_string() != *name) {
    return mismatch("Mcp-Name differs from the request");
  }
  if (message.method() == "tools/call") return param_header_problem(req, message);
  return std::nullopt;
}

asio::awaitable<bool> HttpServerImpl::handle_stateless(std::shared_ptr<Connection> conn,
                                                       Request& req, rpc::Message message,
                                                       const mcp::RequestEra& era, bool wants_sse) {
  // The _meta and version refusals come first; a method the revision does not serve is
  // refused after its headers (so a removed method is a 404 whatever it sent).
  std::optional<mcp::EraRefusal> refusal = era.refusal;
  if (!refusal || refusal->code == rpc::code::kMethodNotFound) {
    if (auto problem = stateless_header_problem(req, message)) refusal = std::move(problem);
  }
  if (refusal) {
    Reply reply;
    reply.status = static_cast<http::status>(refusal->http_status);
    reply.body = mcp::refusal_frame(message.id(), *refusal);
    co_return co_await write_reply(*conn, req, std::move(reply));
  }
  SessionTable::Opened opened = sessions_.open();
  if (!opened.session) co_return co_await write_reply(*conn, req, session_refusal(opened));
  std::shared_ptr<HttpSession> session = std::move(opened.session);
  session->protocol_version = era.version;
  session->session()->set_peer(conn->address);
  session->touch();
  conn->cancel_on_close = true;
  std::shared_ptr<SseStream> stream = session->open_stream(*rpc::id_key(message.id()), wants_sse);
  session->session()->on_message(std::move(message));
  // No priming event: the revision has no event ids and no resumption.
  bool keep = wants_sse ? co_await run_sse(conn, req, session, stream, false, {})
                        : co_await answer_json(conn, req, std::move(stream), {});
  sessions_.end(opened.id, false);  // a call still running (the client left) is cancelled
  co_return keep;
}

}  // namespace sluice::transport
