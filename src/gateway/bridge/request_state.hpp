#pragma once
// The requestState sluice mints when it answers a 2026-07-28 request with input_required (the
// era bridge, bridge/input_bridge.hpp). The revision makes the client carry it back untouched
// and tells the server to treat it as attacker-controlled; sluice seals it with HMAC-SHA256
// under a key drawn when the process starts, so a client can hand it back but neither forge
// nor alter it.
//
// The token names the bridged request (`exchange`), which input_required it answers (`round`:
// an older one is a replay) and when it expires; the request it continues (method and name)
// and the caller (the transport's name for the client) are bound by the MAC without being
// written in it: a token handed back by another caller or for another tool does not open.
// Form: "s1.<exchange>.<round>.<expires>.<mac, hex>".
//
// Threading: const methods, any thread. The key never leaves the object.
#include "core/clock.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::gateway {

struct SealedState {
  std::uint64_t exchange = 0;
  std::uint32_t round = 0;
  core::Clock::time_point expires{};
};

class StateSealer {
 public:
  static constexpr std::size_t kKeyBytes = 32;
  // A key from the system's random generator (throws std::runtime_error when it fails).
  StateSealer();
  explicit StateSealer(const std::array<unsigned char, kKeyBytes>& key) : key_(key) {}

  // The token for `state`, bound to `subject` (the request: method and name) and `caller`.
  std::string seal(const SealedState& state, std::string_view subject,
                   std::string_view caller) const;
  // The state a token names, when it is well formed and its MAC holds for `subject` and
  // `caller`; nullopt otherwise (altered, forged, or another request's or caller's). Expiry
  // is the holder's to check.
  std::optional<SealedState> open(std::string_view token, std::string_view subject,
                                  std::string_view caller) const;

 private:
  std::string mac_hex(std::string_view body, std::string_view subject,
                      std::string_view caller) const;
  std::array<unsigned char, kKeyBytes> key_{};
};

}  // namespace sluice::gateway
