// Initialize negotiation, the one function every server role of sluice answers with: the
// requested revision read properly from the params, and the revision chosen from it.
#include "mcp/protocol.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace sluice::mcp {
namespace {

TEST(RequestedVersion, IsTheStringValueOfProtocolVersionWithItsEscapesDecoded) {
  EXPECT_EQ(requested_version(R"({"protocolVersion":"2025-06-18","capabilities":{}})"),
            "2025-06-18");
  EXPECT_EQ(requested_version(R"({"protocolVersion": "2025\u002d06-18"})"), "2025-06-18");
  EXPECT_EQ(requested_version(R"({"capabilities":{"x":{"protocolVersion":"1"}},)"
                              R"("protocolVersion":"2024-11-05"})"),
            "2024-11-05");
}

TEST(RequestedVersion, IsNothingWhenAbsentOrNotAString) {
  EXPECT_EQ(requested_version(""), std::nullopt);
  EXPECT_EQ(requested_version("{}"), std::nullopt);
  EXPECT_EQ(requested_version("[]"), std::nullopt);
  EXPECT_EQ(requested_version(R"({"protocolVersion":20250618})"), std::nullopt);
  EXPECT_EQ(requested_version(R"({"protocolVersion":null})"), std::nullopt);
  EXPECT_EQ(requested_version(R"({"protocolVersion":["2025-06-18"]})"), std::nullopt);
}

TEST(Negotiate, AnswersTheRequestedRevisionWhenOfferedElseTheLatestOffered) {
  EXPECT_EQ(negotiate("2024-11-05"), "2024-11-05");
  EXPECT_EQ(negotiate("2099-01-01"), kLatestVersion);
  EXPECT_EQ(negotiate(""), kLatestVersion);
  constexpr std::array<std::string_view, 2> offered = {"2025-03-26", "2024-11-05"};
  EXPECT_EQ(negotiate("2024-11-05", offered), "2024-11-05");
  EXPECT_EQ(negotiate("2025-11-25", offered), "2025-03-26");  // the latest, wherever listed
}

TEST(Negotiate, ReturnsTheOfferedTextNotTheRequestedOne) {
  std::string requested = "2025-06-18";
  std::string_view chosen = negotiate(requested);
  requested.assign("xxxx-xx-xx");
  EXPECT_EQ(chosen, "2025-06-18");  // not a view of the caller's text
}

TEST(NegotiateInitialize, ReadsTheParamsAndNegotiates) {
  EXPECT_EQ(negotiate_initialize(R"({"protocolVersion":"2025-03-26"})"), "2025-03-26");
  EXPECT_EQ(negotiate_initialize(R"({"protocolVersion":"2025\u002d03-26"})"), "2025-03-26");
  EXPECT_EQ(negotiate_initialize(R"({"protocolVersion":"1.0"})"), kLatestVersion);
  EXPECT_EQ(negotiate_initialize(R"({"protocolVersion":7})"), kLatestVersion);
  EXPECT_EQ(negotiate_initialize("{}"), kLatestVersion);
}

}  // namespace
}  // namespace sluice::mcp
