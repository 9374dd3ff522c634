// Who may talk to the HTTP front end, without a socket: Host and Origin against loopback
// names (DNS rebinding), the bearer token, the per-address rate (in simulated time) and the
// per-address count of connections without a complete request.
#include "transport/http_guard.hpp"

#include "core/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace sluice::transport {
namespace {

using namespace std::chrono_literals;

RequestGuard guard_with(std::string token = "", double rate = 0) {
  return RequestGuard({"sluice.test"}, {"https://app.example:8443"}, std::move(token), rate);
}

TEST(RequestGuard, AcceptsLoopbackHostsOnAnyPortAndTheOperatorsHosts) {
  RequestGuard guard = guard_with();
  for (const char* host : {"localhost", "LOCALHOST:3344", "127.0.0.1:80", "[::1]", "[::1]:3344",
                           "sluice.test", "Sluice.Test:1"}) {
    EXPECT_TRUE(guard.host_allowed(host)) << host;
  }
}

TEST(RequestGuard, RefusesHostsThatOnlyLookLikeLoopback) {
  RequestGuard guard = guard_with();
  for (const char* host : {"", "evil.com", "localhost.evil.com", "[::1].evil.com", "[::1]@evil.com",
                           "localhost:abc", "127.0.0.1:", "::1", "[::1", "127.0.0.2"}) {
    EXPECT_FALSE(guard.host_allowed(host)) << host;
  }
}

TEST(RequestGuard, AcceptsOriginsOfAllowedHostsAndTheExactExtraOrigins) {
  RequestGuard guard = guard_with();
  for (const char* origin : {"http://localhost:5173", "https://127.0.0.1", "http://[::1]:1",
                             "https://app.example:8443", "HTTPS://APP.EXAMPLE:8443"}) {
    EXPECT_TRUE(guard.origin_allowed(origin)) << origin;
  }
  for (const char* origin : {"null", "", "file://localhost", "http://localhost/path",
                             "https://app.example", "http://app.example:8443", "http://evil.com"}) {
    EXPECT_FALSE(guard.origin_allowed(origin)) << origin;
  }
}

TEST(RequestGuard, WithoutATokenEveryRequestIsAuthorized) {
  RequestGuard guard = guard_with();
  EXPECT_FALSE(guard.token_required());
  EXPECT_TRUE(guard.authorized(""));
  EXPECT_TRUE(guard.authorized("Bearer anything"));
}

TEST(RequestGuard, WithATokenOnlyThatBearerTokenIsAuthorized) {
  RequestGuard guard = guard_with("s3cret");
  EXPECT_TRUE(guard.token_required());
  EXPECT_TRUE(guard.authorized("Bearer s3cret"));
  EXPECT_TRUE(guard.authorized("bearer  s3cret "));
  for (const char* header : {"", "s3cret", "Bearer", "Bearer ", "Bearer s3cre", "Bearer s3cret2",
                             "Basic s3cret", "Bearer S3CRET"}) {
    EXPECT_FALSE(guard.authorized(header)) << header;
  }
}

TEST(RequestGuard, AnAddressGetsABurstOfTwiceItsRateThenRefillsOverTime) {
  core::SimulatedTime sim;
  RequestGuard guard = guard_with("", 5);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(guard.rate_allowed("10.0.0.1")) << i;
  EXPECT_FALSE(guard.rate_allowed("10.0.0.1"));
  EXPECT_TRUE(guard.rate_allowed("10.0.0.2"));  // each address has its own bucket
  sim.advance(200ms);                           // one token at 5 per second
  EXPECT_TRUE(guard.rate_allowed("10.0.0.1"));
  EXPECT_FALSE(guard.rate_allowed("10.0.0.1"));
}

TEST(RequestGuard, LoopbackClientsAreNotRateLimitedUnlessTheOperatorAsks) {
  core::SimulatedTime sim;
  RequestGuard guard = guard_with("", 5);
  for (const char* address : {"127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"}) {
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(guard.rate_allowed(address)) << address << i;
  }
  EXPECT_EQ(guard.tracked_addresses(), 0u);
  // An address that only looks like loopback in part is limited like any other.
  for (const char* address : {"10.127.0.1", "::ffff:10.0.0.1", "::2", "1127.0.0.1"}) {
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(guard.rate_allowed(address)) << address << i;
    EXPECT_FALSE(guard.rate_allowed(address)) << address;
  }
  // --rate-limit-loopback: loopback clients get the same bucket as any address.
  RequestGuard strict({}, {}, "", 5, true);
  for (const char* address : {"127.0.0.1", "::1"}) {
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(strict.rate_allowed(address)) << address << i;
    EXPECT_FALSE(strict.rate_allowed(address)) << address;
  }
}

TEST(RequestGuard, ARateOfZeroLetsEveryRequestThroughAndTracksNoAddress) {
  RequestGuard guard = guard_with("", 0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(guard.rate_allowed("10.0.0.1"));
  EXPECT_EQ(guard.tracked_addresses(), 0u);
}

TEST(RequestGuard, AnAddressIsForgottenOnlyOnceItsBucketHasRefilled) {
  core::SimulatedTime sim;
  RequestGuard guard = guard_with("", 5);
  for (int i = 0; i < 10; ++i) guard.rate_allowed("10.0.0.1");
  guard.forget_idle_addresses();
  EXPECT_EQ(guard.tracked_addresses(), 1u);
  sim.advance(1s);  // 5 of the 10 tokens back
  guard.forget_idle_addresses();
  EXPECT_EQ(guard.tracked_addresses(), 1u);
  sim.advance(1s);
  guard.forget_idle_addresses();
  EXPECT_EQ(guard.tracked_addresses(), 0u);
}

TEST(IncompleteConnections, EachAddressHasRoomUpToItsCap) {
  IncompleteConnections incomplete(2);
  EXPECT_TRUE(incomplete.has_room("10.0.0.1"));
  incomplete.add("10.0.0.1");
  EXPECT_TRUE(incomplete.has_room("10.0.0.1"));
  incomplete.add("10.0.0.1");
  EXPECT_FALSE(incomplete.has_room("10.0.0.1"));
  EXPECT_TRUE(incomplete.has_room("10.0.0.2"));  // another address counts on its own
  EXPECT_EQ(incomplete.at("10.0.0.1"), 2u);
}

TEST(IncompleteConnections, ARemovedConnectionFreesItsRoomAndAnEmptyAddressIsForgotten) {
  IncompleteConnections incomplete(1);
  incomplete.add("10.0.0.1");
  incomplete.add("10.0.0.2");
  EXPECT_EQ(incomplete.addresses(), 2u);
  incomplete.remove("10.0.0.1");
  EXPECT_TRUE(incomplete.has_room("10.0.0.1"));
  EXPECT_EQ(incomplete.at("10.0.0.1"), 0u);
  EXPECT_EQ(incomplete.addresses(), 1u);
  incomplete.remove("10.0.0.9");  // never added: nothing changes
  EXPECT_EQ(incomplete.addresses(), 1u);
}

}  // namespace
}  // namespace sluice::transport
