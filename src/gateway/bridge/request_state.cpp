#include "gateway/bridge/request_state.hpp"

#include "core/hex.hpp"
#include "core/random.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fmt/format.h>

#include <charconv>
#include <span>
#include <stdexcept>
#include <vector>

namespace sluice::gateway {

namespace {

constexpr std::string_view kPrefix = "s1.";

template <typename Int>
bool read_number(std::string_view text, Int& out) {
  if (text.empty() || text.size() > 20) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// `text` split at its first `n` dots (n + 1 parts), or empty when it has fewer.
std::vector<std::string_view> split_dots(std::string_view text, std::size_t n) {
  std::vector<std::string_view> parts;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t dot = text.find('.');
    if (dot == std::string_view::npos) return {};
    parts.push_back(text.substr(0, dot));
    text.remove_prefix(dot + 1);
  }
  parts.push_back(text);
  return parts;
}

}  // namespace

StateSealer::StateSealer() {
  // The kernel's generator, not RAND_bytes: OpenSSL is loaded only once a MAC is made.
  if (!core::fill_random(key_)) {
    throw std::runtime_error("the random generator failed");
  }
}

std::string StateSealer::mac_hex(std::string_view body, std::string_view subject,
                                 std::string_view caller) const {
  // Lengths first, so that no two (subject, caller) pairs make the same message.
  std::string message =
      fmt::format("{}\n{}:{}\n{}:{}", body, subject.size(), subject, caller.size(), caller);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &size);
  return core::to_hex(std::span(mac.data(), size));
}

std::string StateSealer::seal(const SealedState& state, std::string_view subject,
                              std::string_view caller) const {
  const auto expires =
      std::chrono::duration_cast<std::chrono::milliseconds>(state.expires.time_since_epoch())
          .count();
  std::string body = fmt::format("{}{}.{}.{}", kPrefix, state.exchange, state.round, expires);
  return body + "." + mac_hex(body, subject, caller);
}

std::optional<SealedState> StateSealer::open(std::string_view token, std::string_view subject,
                                             std::string_view caller) const {
  if (token.size() > 256 || token.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::vector<std::string_view> parts = split_dots(token.substr(kPrefix.size()), 3);
  if (parts.size() != 4) return std::nullopt;
  SealedState state;
  std::int64_t expires = 0;
  if (!read_number(parts[0], state.exchange) || !read_number(parts[1], state.round) ||
      !read_number(parts[2], expires)) {
    return std::nullopt;
  }
  std::string_view body = token.substr(0, token.size() - parts[3].size() - 1);
  std::string expected = mac_hex(body, subject, caller);
  if (parts[3].size() != expected.size() ||
      CRYPTO_memcmp(parts[3].data(), expected.data(), expected.size()) != 0) {
    return std::nullopt;
  }
  state.expires = core::Clock::time_point(std::chrono::milliseconds(expires));
  return state;
}

}  // namespace sluice::gateway
