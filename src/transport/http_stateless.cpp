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

}  // namespace

std::optional<mcp::EraRefusal> HttpServerImpl::stateless_header_problem(
    const Request& req, const rpc::Message& message) {
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
