#include "transport/http_framing.hpp"

#include "core/ascii.hpp"
#include "core/json.hpp"

#include <boost/beast/http/error.hpp>

#include <fmt/format.h>

namespace sluice::transport {

namespace http = boost::beast::http;

namespace {

// Transfer-Encoding, over all its lines: absent, or exactly `chunked` once (HTTP/1.1).
// Beast's parser reads "gzip, chunked" as plain chunked and a request whose codings do not
// end with chunked as having no body; both are refused here.
std::optional<Refusal> transfer_coding_refusal(const http::fields& fields, unsigned version) {
  auto [first, last] = fields.equal_range(http::field::transfer_encoding);
  if (first == last) return std::nullopt;
  const Refusal unframed{
      http::status::bad_request,
      "Bad Request: the body length cannot be determined (Transfer-Encoding must be chunked)"};
  if (version < 11) return unframed;
  std::size_t codings = 0, chunked = 0;
  bool last_chunked = false;
  for (auto it = first; it != last; ++it) {
    std::string_view list = it->value();
    while (!list.empty()) {
      std::size_t comma = list.find(',');
      std::string_view item = core::json::trim(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      if (item.empty()) continue;  // empty list elements are allowed
      ++codings;
      last_chunked = core::ascii::iequals(item, "chunked");
      if (last_chunked) ++chunked;
    }
  }
  if (!last_chunked || chunked > 1) return unframed;
  if (codings > 1) {
    return Refusal{http::status::not_implemented,
                   "Not Implemented: the only transfer coding accepted is chunked"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Refusal> head_refusal(const http::request_header<>& head) {
  if (auto r = transfer_coding_refusal(head, head.version())) return r;
  const std::size_t hosts = head.count(http::field::host);
  if (hosts == 0)
    return Refusal{http::status::bad_request, "Bad Request: the Host header is required"};
  if (hosts > 1)
    return Refusal{http::status::bad_request, "Bad Request: more than one Host header"};
  if (head[http::field::host].empty()) {
    return Refusal{http::status::bad_request, "Bad Request: the Host header is empty"};
  }
  if (head.count(http::field::origin) > 1) {
    return Refusal{http::status::bad_request, "Bad Request: more than one Origin header"};
  }
  return std::nullopt;
}

std::optional<Refusal> read_refusal(const boost::system::error_code& ec,
                                    std::size_t max_body_bytes) {
  if (ec == http::error::header_limit) {
    return Refusal{http::status::request_header_fields_too_large, "request headers too large"};
  }
  if (ec == http::error::body_limit) {
    // Refused before the body is read when the announced Content-Length is over the cap.
    return Refusal{http::status::payload_too_large,
                   fmt::format("request body too large (limit {} bytes)", max_body_bytes)};
  }
  // The end of the connection, before or inside a request: nobody to answer.
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return std::nullopt;
  if (ec.category() != http::make_error_code(http::error::bad_method).category()) {
    return std::nullopt;  // a timeout, a reset: the connection just ends
  }
  if (ec == http::error::bad_version) {
    // Beast reads only HTTP/1.0 and HTTP/1.1 ("PRI * HTTP/2.0" too ends here).
    return Refusal{http::status::http_version_not_supported,
                   "HTTP Version Not Supported: HTTP/1.1 or HTTP/1.0 only"};
  }
  // Bad framing (RFC 9112: 400, then close): Beast's message names the kind of problem
  // ("bad Content-Length", "bad chunk"), never the bytes.
  return Refusal{http::status::bad_request, fmt::format("Bad Request: {}", ec.message())};
}

RequestHeads read_heads(const http::request_header<>& head) {
  RequestHeads h;
  // The first of each name only (what head[name] gives); `taken` marks them.
  enum Taken : unsigned {
    kHost = 1,
    kAuth = 2,
    kType = 4,
    kAccept = 8,
    kSession = 16,
    kVersion = 32,
    kLastEvent = 64
  };
  unsigned taken = 0;
  auto take = [&taken](unsigned bit, std::string_view& slot, std::string_view value) {
    if ((taken & bit) != 0) return;
    taken |= bit;
    slot = value;
  };
  for (const auto& f : head) {
    const std::string_view value = f.value();
    switch (f.name()) {
      case http::field::host:
        take(kHost, h.host, value);
        continue;
      case http::field::authorization:
        take(kAuth, h.authorization, value);
        continue;
      case http::field::content_type:
        take(kType, h.content_type, value);
        continue;
      case http::field::accept:
        take(kAccept, h.accept, value);
        continue;
      case http::field::origin:
        if (!h.origin) h.origin = value;
        continue;
      default:
        break;
    }
    // MCP's own headers, by name (a length compare rules most out).
    const std::string_view name = f.name_string();
    if (core::ascii::iequals(name, "Mcp-Session-Id")) {
      take(kSession, h.session_id, value);
    } else if (core::ascii::iequals(name, "MCP-Protocol-Version")) {
      take(kVersion, h.protocol_version, value);
    } else if (core::ascii::iequals(name, "Last-Event-ID")) {
      take(kLastEvent, h.last_event_id, value);
    }
  }
  return h;
}

}  // namespace sluice::transport
