// What the HTTP client works out before it connects: the URL (Boost.URL), the request head, the
// response's kind; and the helpers of http_client.hpp that need no connection: field,
// redirect_target, same_origin, is_loopback_url, is_usable_http_url.
#include "transport/http_url.hpp"
#include "core/ascii.hpp"

#include "transport/http_client.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <fmt/format.h>

#include <charconv>
#include <iterator>

namespace sluice::transport {

namespace {

std::optional<std::uint16_t> parse_port(std::string_view port) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(value);
}

// The host of `u` as the client connects to it (lower case, no brackets), or empty.
std::string host_of(const boost::urls::url_view& u, bool& is_ip) {
  is_ip = true;
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
      return u.host_ipv4_address().to_string();
    case boost::urls::host_type::ipv6:
      return u.host_ipv6_address().to_string();
    case boost::urls::host_type::name: {
      is_ip = false;
      std::string host = u.encoded_host().decode();
      core::ascii::lower_in_place(host);
      return host;
    }
    default:
      return {};
  }
}

// RFC 9110 token characters (a method, a field name).
bool is_token(std::string_view text) {
  constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  if (text.empty()) return false;
  for (char c : text) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && kExtra.find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool is_clean_value(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// The fields the client writes itself, whatever the caller gave.
bool set_by_client(std::string_view name) {
  for (std::string_view own : {"host", "content-length", "connection", "transfer-encoding"}) {
    if (core::ascii::iequals(name, own)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> request_head(const HttpRequest& request, const HttpUrl& url) {
  if (!is_token(request.method)) return std::nullopt;
  const std::string host = url.host_header();
  std::size_t size = request.method.size() + url.target.size() + host.size() + 64;
  for (const auto& [name, value] : request.headers) {
    if (!is_token(name) || !is_clean_value(value)) return std::nullopt;
    size += name.size() + value.size() + 4;
  }
  std::string head;
  head.reserve(size);
  head.append(request.method).append(" ").append(url.target).append(" HTTP/1.1\r\nHost: ");
  head.append(host).append("\r\n");
  for (const auto& [name, value] : request.headers) {
    if (set_by_client(name)) continue;
    head.append(name).append(": ").append(value).append("\r\n");
  }
  if (!request.payload().empty() || request.method == "POST" || request.method == "PUT") {
    fmt::format_to(std::back_inserter(head), "Content-Length: {}\r\n", request.payload().size());
  }
  head.append("\r\n");
  return head;
}

bool is_event_stream(std::string_view content_type) {
  constexpr std::string_view kType = "text/event-stream";
  return core::ascii::starts_with_in_any_case(content_type, kType) &&
         (content_type.size() == kType.size() || content_type[kType.size()] == ';' ||
          content_type[kType.size()] == ' ');
}

std::string HttpUrl::host_header() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string text = ipv6 ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) text += ":" + std::to_string(port);
  return text;
}

std::string HttpUrl::origin() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return std::string(tls ? "https://" : "http://") + (ipv6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

std::optional<HttpUrl> parse_http_url(std::string_view text) {
  auto parsed = boost::urls::parse_uri(text);
  if (!parsed) return std::nullopt;
  const boost::urls::url_view& u = *parsed;
  HttpUrl url;
  if (core::ascii::iequals(u.scheme(), "https")) {
    url.tls = true;
  } else if (!core::ascii::iequals(u.scheme(), "http")) {
    return std::nullopt;
  }
  if (!u.has_authority() || u.has_userinfo()) return std::nullopt;
  url.host = host_of(u, url.host_is_ip);
  if (url.host.empty()) return std::nullopt;
  url.port = url.tls ? 443 : 80;
  if (u.has_port()) {
    auto port = parse_port(u.port());
    if (!port) return std::nullopt;
    url.port = *port;
  }
  url.target = u.encoded_path();
  if (url.target.empty() || url.target.front() != '/') url.target.insert(0, "/");
  if (u.has_query()) {
    url.target += '?';
    url.target += u.encoded_query();
  }
  return url;
}

std::optional<std::string_view> field(const HttpFields& fields, std::string_view name) {
  for (const auto& [key, value] : fields) {
    if (core::ascii::iequals(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::optional<std::string> redirect_target(std::string_view from, const HttpResponse& response) {
  if (response.status < 300 || response.status > 399) return std::nullopt;
  auto location = field(response.headers, "Location");
  if (!location) return std::nullopt;
  auto base = boost::urls::parse_uri(from);
  auto reference = boost::urls::parse_uri_reference(*location);
  if (!base || !reference) return std::nullopt;
  boost::urls::url target;
  if (!boost::urls::resolve(*base, *reference, target)) return std::nullopt;
  target.remove_fragment();
  std::string text(target.buffer());
  if (!parse_http_url(text)) return std::nullopt;
  return text;
}

bool same_origin(std::string_view a, std::string_view b) {
  auto x = parse_http_url(a);
  auto y = parse_http_url(b);
  return x && y && x->tls == y->tls && x->host == y->host && x->port == y->port;
}

bool is_loopback_url(std::string_view url) {
  auto parsed = parse_http_url(url);
  if (!parsed) return false;
  if (!parsed->host_is_ip) return parsed->host == "localhost";
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(parsed->host, ec);
  return !ec && address.is_loopback();
}

bool is_usable_http_url(std::string_view url) { return parse_http_url(url).has_value(); }

bool is_https_url(std::string_view url) {
  auto parsed = parse_http_url(url);
  return parsed && parsed->tls;
}

}  // namespace sluice::transport
