// The requestState of the era bridge: it opens only as sealed, for the request and the caller
// it was sealed for, under the key that sealed it.
#include "gateway/bridge/request_state.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::gateway {
namespace {

std::array<unsigned char, StateSealer::kKeyBytes> request_state_key(unsigned char fill) {
  std::array<unsigned char, StateSealer::kKeyBytes> key{};
  key.fill(fill);
  return key;
}

const SealedState kState{42, 3, core::Clock::time_point(std::chrono::milliseconds(123456789))};

TEST(RequestState, OpensToWhatWasSealedForTheSameRequestAndCaller) {
  StateSealer sealer(request_state_key(7));
  std::string token = sealer.seal(kState, "tools/call conf__ask", "127.0.0.1");
  auto opened = sealer.open(token, "tools/call conf__ask", "127.0.0.1");
  ASSERT_TRUE(opened.has_value()) << token;
  EXPECT_EQ(opened->exchange, 42u);
  EXPECT_EQ(opened->round, 3u);
  EXPECT_EQ(opened->expires, kState.expires);
  EXPECT_EQ(token.find("conf__ask"), std::string::npos) << "the subject is bound, not written";
  EXPECT_EQ(token.find("127.0.0.1"), std::string::npos) << "the caller is bound, not written";
}

TEST(RequestState, AnotherRequestCallerOrKeyDoesNotOpenIt) {
  StateSealer sealer(request_state_key(7));
  std::string token = sealer.seal(kState, "tools/call conf__ask", "127.0.0.1");
  EXPECT_FALSE(sealer.open(token, "tools/call conf__other", "127.0.0.1"));
  EXPECT_FALSE(sealer.open(token, "prompts/get conf__ask", "127.0.0.1"));
  EXPECT_FALSE(sealer.open(token, "tools/call conf__ask", "127.0.0.2"));
  // The boundary between subject and caller is part of what is bound.
  EXPECT_FALSE(sealer.open(token, "tools/call conf__ask1", "27.0.0.1"));
  EXPECT_FALSE(StateSealer(request_state_key(8)).open(token, "tools/call conf__ask", "127.0.0.1"));
  EXPECT_FALSE(StateSealer().open(token, "tools/call conf__ask", "127.0.0.1"));
}

TEST(RequestState, EachGatewayDrawsItsOwnKey) {
  // Two sealers with keys from the kernel: each opens its own tokens, neither the other's
  // (a sealer that did not draw its key would share a zero key with every other).
  StateSealer first;
  StateSealer second;
  std::string token = first.seal(kState, "tools/call conf__ask", "127.0.0.1");
  EXPECT_TRUE(first.open(token, "tools/call conf__ask", "127.0.0.1"));
  EXPECT_FALSE(second.open(token, "tools/call conf__ask", "127.0.0.1"));
  EXPECT_FALSE(StateSealer(request_state_key(0)).open(token, "tools/call conf__ask", "127.0.0.1"));
}

TEST(RequestState, AnyAlteredCharacterIsRefused) {
  StateSealer sealer(request_state_key(7));
  std::string token = sealer.seal(kState, "s", "c");
  for (std::size_t i = 0; i < token.size(); ++i) {
    std::string altered = token;
    altered[i] = altered[i] == '1' ? '2' : '1';
    EXPECT_FALSE(sealer.open(altered, "s", "c")) << "position " << i << ": " << altered;
  }
  EXPECT_FALSE(sealer.open(token + "-TAMPERED", "s", "c"));
  EXPECT_FALSE(sealer.open(token.substr(0, token.size() - 1), "s", "c"));
  for (const std::string& garbage :
       std::vector<std::string>{"", "s1.", "s1....", "s1.1.2.3", "x1.1.2.3.abcd", "s1.-1.2.3.ab",
                                "s1.1.2.3.4.5", std::string(300, 'a')}) {
    EXPECT_FALSE(sealer.open(garbage, "s", "c")) << garbage;
  }
}

}  // namespace
}  // namespace sluice::gateway
