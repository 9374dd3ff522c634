#pragma once
// What the HTTP client works out before it connects: the parts of an absolute http:// or
// https:// URL (parsed once by Boost.URL), the request head it writes, whether a response is an
// event stream. Private to src/transport/ (http_client.cpp and its tests).
//
// Guarantees: a parsed URL has a non-empty host (a bracketed IPv6 literal is kept without its
// brackets), a port (80 or 443 when none is given) and a target that starts with '/'.
// Threading: plain values, any thread.
#include "transport/http_client.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::transport {

struct HttpUrl {
  bool tls = false;         // https
  std::string host;         // a name, an IPv4 literal or an IPv6 literal (no brackets)
  bool host_is_ip = false;  // an IP literal: no SNI, and the certificate is checked as an IP
  std::uint16_t port = 0;
  std::string target;  // path and query, at least "/"

  // "scheme://host:port": what a kept-alive connection is pooled under.
  std::string origin() const;
  // The Host header's value: the host (bracketed when IPv6) and the port unless the default.
  std::string host_header() const;
};

// Nullopt for anything but an absolute http(s) URL with a usable host and port (a user-info
// part is refused: it would put credentials in the URL).
std::optional<HttpUrl> parse_http_url(std::string_view url);

// The request line and header fields of `request` to `url`, in one string: Host (and
// Content-Length for a body or a POST) written by the client, the caller's own Host,
// Content-Length, Connection and Transfer-Encoding left out. Nullopt when the method or a
// field name is not a token, or a field value holds CR, LF or NUL (they would split the head).
std::optional<std::string> request_head(const HttpRequest& request, const HttpUrl& url);

// Whether a Content-Type names text/event-stream (parameters allowed, case ignored).
bool is_event_stream(std::string_view content_type);

}  // namespace sluice::transport
