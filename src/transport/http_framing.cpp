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

}  // namespace sluice::transport
