#pragma once
// Who may talk to the HTTP front end (see http_server.hpp): Host and Origin checked against
// loopback names and the operator's additions (DNS rebinding), the bearer token compared in
// constant time, and a token bucket per client address; and the per-address count of
// connections without a complete request. Header values and addresses come in as text, so
// this has no HTTP library in it.
// Threading: the owning io_context thread only. Time: core::Clock (simulated in tests).
#include "core/token_bucket.hpp"

#include <cstddef>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::transport {

// Admission of one request by its headers and its client address. Owns the token buckets
// (one per address seen, forgotten once refilled); never throws on untrusted header text.
class RequestGuard {
 public:
  // `rate`: requests per second per address (bursts of twice that); 0 turns it off.
  // `limit_loopback`: whether loopback addresses are limited too (else they always pass).
  RequestGuard(const std::vector<std::string>& extra_hosts,
               const std::vector<std::string>& extra_origins, std::string token, double rate,
               bool limit_loopback = false);

  // The Host header names localhost, 127.0.0.1, [::1] (any port) or an extra host.
  bool host_allowed(std::string_view host_header) const;
  // An extra origin exactly, or http(s):// an allowed host (any port), nothing more.
  bool origin_allowed(std::string_view origin) const;
  bool token_required() const { return !token_.empty(); }
  // `Authorization: Bearer <token>` with the token (always true when none is required).
  bool authorized(std::string_view authorization_header) const;
  bool rate_allowed(const std::string& address);
  // Forgets addresses whose bucket has refilled (they are no different from new ones).
  void forget_idle_addresses();
  // Addresses with a bucket (the memory the rate limit holds).
  std::size_t tracked_addresses() const { return buckets_.size(); }

 private:
  std::vector<std::string> hosts_;
  std::vector<std::string> origins_;
  std::string token_;
  double rate_;
  bool limit_loopback_;
  std::unordered_map<std::string, core::TokenBucket> buckets_;
};

// Connections per client address that have not sent a complete request yet (just opened,
// sending a head or body, or kept alive between requests), against
// Limits::http_max_incomplete_per_address. The server adds a connection when it starts
// waiting for a request and removes it once the request is read or the connection ends;
// an address whose count falls to 0 is forgotten.
class IncompleteConnections {
 public:
  explicit IncompleteConnections(std::size_t cap_per_address) : cap_(cap_per_address) {}

  // One more connection from `address` may wait for a request.
  bool has_room(const std::string& address) const { return at(address) < cap_; }
  void add(const std::string& address) { ++counts_[address]; }
  // One connection fewer; an address with none counted is left as it is.
  void remove(const std::string& address);
  std::size_t at(const std::string& address) const;
  // Addresses with at least one such connection.
  std::size_t addresses() const { return counts_.size(); }

 private:
  std::size_t cap_;
  std::unordered_map<std::string, std::size_t> counts_;
};

// Whether a client address, as text (asio's form), is a loopback one: 127.0.0.0/8, ::1, or
// 127.0.0.0/8 mapped into IPv6.
bool is_loopback_address(std::string_view address);

}  // namespace sluice::transport
