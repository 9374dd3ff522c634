#include "gateway/results.hpp"

#include "core/display.hpp"
#include "core/json.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

namespace sluice::gateway {

std::string structured_result(const boost::json::value& structured) {
  std::string body = boost::json::serialize(structured);
  std::string out;
  out.reserve(body.size() * 2 + 80);
  out += R"({"content":[{"type":"text","text":)";
  out += core::json::quote(body);
  out += R"(}],"structuredContent":)";
  out += body;
  out += '}';
  return out;
}

std::string error_result(std::string_view text) {
  std::string out = R"({"content":[{"type":"text","text":)";
  out += core::json::quote(text);
  out += R"(}],"isError":true})";
  return out;
}

std::string safe_peer_message(std::string_view message) {
  constexpr std::size_t kMaxShown = 512;
  if (message.size() > kMaxShown) {
    return fmt::format("(the server's message was not shown: {} bytes, over {})", message.size(),
                       kMaxShown);
  }
  if (core::display_safe(message) != message) {
    return "(the server's message was not shown: it has non-printable characters)";
  }
  return std::string(message);
}

}  // namespace sluice::gateway
