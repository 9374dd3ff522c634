#pragma once
// Who may talk to the HTTP front end (see http_server.hpp): Host and Origin checked against
// loopback names and the operator's additions (DNS rebinding), the bearer token compared in
// constant time, and a token bucket per client address. Header values come in as text, so
// this has no HTTP library in it.
// Threading: the owning io_context thread only.
#include "core/token_bucket.hpp"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::transport {

class RequestGuard {
 public:
  // `rate`: requests per second per address (bursts of twice that); 0 turns it off.
  RequestGuard(const std::vector<std::string>& extra_hosts,
               const std::vector<std::string>& extra_origins, std::string token, double rate);

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

 private:
  std::vector<std::string> hosts_;
  std::vector<std::string> origins_;
  std::string token_;
  double rate_;
  std::unordered_map<std::string, core::TokenBucket> buckets_;
};

// ASCII lower case.
std::string lower(std::string_view s);

}  // namespace sluice::transport
