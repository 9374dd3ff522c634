#include "gateway/results.hpp"

#include "core/display.hpp"

#include <fmt/format.h>

namespace sluice::gateway {

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
