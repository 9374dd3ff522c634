#pragma once
// What the HTTP front end refuses in a request before serving it (see http_server.hpp):
// a head that RFC 9112 forbids but Beast's parser lets through, and a head or body Beast
// could not read. The refusal names the kind of problem, never the bytes sent.
// Pure functions of a parsed head or an error code; no I/O.
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <optional>
#include <string>

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

}  // namespace sluice::transport
