#include "transport/http_guard.hpp"

#include "core/ascii.hpp"
#include "core/clock.hpp"
#include "core/json.hpp"

#include <algorithm>
#include <cctype>

namespace sluice::transport {

namespace {

// Comparison whose time depends only on the lengths, never on where the texts differ.
bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// The host part of a Host header or an origin's authority: "[::1]:80" -> "[::1]",
// "localhost:80" -> "localhost"; empty when anything but nothing or ":digits" follows the
// host ("[::1].evil.com", "[::1]@evil.com", "localhost:abc") or the host is a bare IPv6.
std::string_view host_part(std::string_view authority) {
  std::size_t end = 0;
  if (!authority.empty() && authority.front() == '[') {
    end = authority.find(']');
    if (end == std::string_view::npos) return {};
    ++end;
  } else {
    end = authority.find(':');
    if (end == std::string_view::npos) return authority;
  }
  std::string_view rest = authority.substr(end);
  if (!rest.empty() && (rest.front() != ':' || !all_digits(rest.substr(1)))) return {};
  return authority.substr(0, end);
}

}  // namespace

RequestGuard::RequestGuard(const std::vector<std::string>& extra_hosts,
                           const std::vector<std::string>& extra_origins, std::string token,
                           double rate, bool limit_loopback)
    : hosts_{"localhost", "127.0.0.1", "[::1]"},
      token_(std::move(token)),
      rate_(rate),
      limit_loopback_(limit_loopback) {
  for (const auto& h : extra_hosts) hosts_.push_back(core::ascii::lowered(h));
  for (const auto& o : extra_origins) origins_.push_back(core::ascii::lowered(o));
}

bool RequestGuard::host_allowed(std::string_view host_header) const {
  const std::string_view host = host_part(host_header);
  return !host.empty() && std::any_of(hosts_.begin(), hosts_.end(), [&](const std::string& h) {
    return core::ascii::iequals(h, host);
  });
}

bool RequestGuard::origin_allowed(std::string_view origin) const {
  std::string o = core::ascii::lowered(origin);
  if (std::find(origins_.begin(), origins_.end(), o) != origins_.end()) return true;
  std::string_view rest = o;
  if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else if (rest.rfind("https://", 0) == 0) {
    rest.remove_prefix(8);
  } else {
    return false;  // "null", other schemes
  }
  if (rest.find('/') != std::string_view::npos) return false;
  return host_allowed(rest);
}

bool RequestGuard::authorized(std::string_view header) const {
  if (token_.empty()) return true;
  if (!core::ascii::starts_with_in_any_case(header, "bearer ")) return false;
  return constant_time_equal(core::json::trim(header.substr(7)), token_);
}

bool RequestGuard::rate_allowed(const std::string& address) {
  if (rate_ <= 0 || (!limit_loopback_ && is_loopback_address(address))) return true;
  const auto now = core::Clock::now();
  auto it = buckets_.try_emplace(address, rate_, 2 * rate_, now).first;
  return it->second.take(now);
}

bool is_loopback_address(std::string_view address) {
  // Asio writes addresses in lower case: "::ffff:127.0.0.1" for a mapped one.
  constexpr std::string_view kMapped = "::ffff:";
  if (address.starts_with(kMapped)) address.remove_prefix(kMapped.size());
  return address == "::1" || address.starts_with("127.");
}

void RequestGuard::forget_idle_addresses() {
  const auto now = core::Clock::now();
  std::erase_if(buckets_, [&](const auto& entry) { return entry.second.full(now); });
}

void IncompleteConnections::remove(const std::string& address) {
  auto it = counts_.find(address);
  if (it != counts_.end() && --it->second == 0) counts_.erase(it);
}

std::size_t IncompleteConnections::at(const std::string& address) const {
  auto it = counts_.find(address);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace sluice::transport
