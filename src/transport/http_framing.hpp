#pragma once
// What the HTTP front end refuses in a request before serving it (see http_server.hpp):
// a head that RFC 9112 forbids but Beast's parser lets through, and a head or body Beast
// could not read. The refusal names the kind of problem, never the bytes sent. And the
// headers the front end reads from a head it serves.
// Pure functions of a parsed head or an error code; no I/O.
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::transport {

struct Refusal {
  boost::beast::http::status status;
  std::string message;
};

// A head refused for its framing, before its body is read: Transfer-Encoding other than
// exactly `chunked` once on HTTP/1.1 (400, or 501 for another coding), no Host, more than
// one Host or an empty one, more than one Origin (400).
std::optional<Refusal> head_refusal(const boost::beast::http::request_header<>& head);

// The answer to a head or body Beast could not read (431, 413 with `max_body_bytes`, 505,
// 400); nullopt when the connection just ends (end of stream, a timeout, a reset).
std::optional<Refusal> read_refusal(const boost::system::error_code& ec,
                                    std::size_t max_body_bytes);

// The headers the front end reads from a request, found in one pass over its fields: Beast
// finds a field by name with a walk of its set comparing names case-insensitively (about 500
// instructions a lookup, and a POST made nine). Each is the first of its name, as
// head[name] gives it; views into the head's fields.
struct RequestHeads {
  std::string_view host, authorization, content_type, accept;
  std::optional<std::string_view> origin;  // absent and sent empty differ
  std::string_view session_id, protocol_version, last_event_id;
};
RequestHeads read_heads(const boost::beast::http::request_header<>& head);

}  // namespace sluice::transport
