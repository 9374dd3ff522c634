// Stateless (2026-07-28) requests on the one MCP endpoint: a POST whose message carries the
// revision's _meta needs no session. Its _meta and its headers are checked first (the
// refusals are HTTP 400, or 404 for a method not served statelessly); then it is served in a
// session of its own, opened for it and ended with its answer. Ending that session when the
// client closes the response stream is what makes the close a cancellation in this revision
// (the call's permit is kept by its work, as for any cancel).
#include "core/json.hpp"
#include "mcp/era.hpp"
#include "transport/http_server_impl.hpp"

#include <openssl/evp.h>

#include <boost/json/object.hpp>

namespace sluice::transport {
namespace http = boost::beast::http;

namespace {

constexpr std::string_view kBase64Open = "=?base64?";
constexpr std::string_view kBase64Close = "?=";

// A header value as meant: the Base64 form `=?base64?...?=` decoded (nullopt: not valid
// Base64), any other value as it is.
std::optional<std::string> header_text(std::string_view value) {
  if (value.size() < kBase64Open.size() + kBase64Close.size() ||
      value.substr(0, kBase64Open.size()) != kBase64Open ||
      value.substr(value.size() - kBase64Close.size()) != kBase64Close) {
    return std::string(value);
  }
  std::string_view b64 =
      value.substr(kBase64Open.size(), value.size() - kBase64Open.size() - kBase64Close.size());
  if (b64.size() % 4 != 0) return std::nullopt;
  std::string out(b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding's bytes as zeros: drop one per '='.
  std::size_t padding = 0;
  for (auto it = b64.rbegin(); it != b64.rend() && *it == '=' && padding < 2; ++it) ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

mcp::EraRefusal mismatch(std::string what) {
  return mcp::EraRefusal{mcp::era_code::kHeaderMismatch, "Header mismatch: " + what, {}, 400};
}

// The params member a method's Mcp-Name header repeats: tools/call and prompts/get their
// name, resources/read its uri; empty for the other methods.
std::string_view name_member(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  return {};
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
  std::optional<std::string> name = header_text(req["Mcp-Name"]);
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
