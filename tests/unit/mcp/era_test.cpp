// Which era a client request is in, how a stateless one is refused, and what its result gets.
#include "mcp/era.hpp"

#include "core/json.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <string>

namespace sluice::mcp {
namespace {
namespace bj = boost::json;

rpc::Message request(const std::string& method, const std::string& params) {
  auto parsed =
      rpc::parse(R"({"jsonrpc":"2.0","id":7,"method":")" + method + R"(","params":)" + params + "}",
                 core::json::ParseLimits{64}, rpc::Strictness::client);
  return std::get<rpc::Message>(std::move(parsed));
}

const std::string kCaps = R"("io.modelcontextprotocol/clientCapabilities":{})";
std::string meta(const std::string& version, const std::string& more = "") {
  return R"({"_meta":{"io.modelcontextprotocol/protocolVersion":")" + version + "\"," + kCaps +
         more + "}}";
}

TEST(Era, ARequestWithoutTheNewMetaIsOfTheStatefulEraAndNeverRefused) {
  EXPECT_FALSE(classify(request("tools/list", "{}")).stateless);
  EXPECT_FALSE(classify(request("ping", R"({"_meta":{"progressToken":1}})")).stateless);
  // A stateful revision named in _meta is not a stateless request either.
  EXPECT_FALSE(classify(request("tools/list", meta("2025-11-25"))).stateless);
}

TEST(Era, AStatelessRequestIsCheckedInTheRevisionsOrder) {
  auto ok = classify(
      request("tools/call", meta("2026-07-28", R"(,"io.modelcontextprotocol/logLevel":"info")")));
  EXPECT_TRUE(ok.stateless);
  EXPECT_FALSE(ok.refusal);
  EXPECT_EQ(ok.log_level, "info");

  // The transport knows it is stateless, and _meta is missing: -32602.
  auto missing = classify(request("tools/list", "{}"), true, "2026-07-28");
  ASSERT_TRUE(missing.refusal);
  EXPECT_EQ(missing.refusal->code, -32602);
  EXPECT_EQ(missing.refusal->http_status, 400u);
  // The header and _meta disagree: -32020, before the version is looked at.
  auto mismatch = classify(request("tools/list", meta("v9")), false, "2026-07-28");
  ASSERT_TRUE(mismatch.refusal);
  EXPECT_EQ(mismatch.refusal->code, era_code::kHeaderMismatch);
  // An unknown revision: -32022 naming the supported ones and echoing the requested one.
  auto future = classify(request("tools/list", meta("v9")), false, "v9");
  ASSERT_TRUE(future.refusal);
  EXPECT_EQ(future.refusal->code, era_code::kUnsupportedProtocolVersion);
  auto data = bj::parse(future.refusal->data_json);
  EXPECT_EQ(data.at("requested"), "v9");
  EXPECT_EQ(data.at("supported").as_array().back(), "2026-07-28");
  // clientCapabilities is required, logLevel must be a level.
  auto no_caps = classify(request(
      "tools/list", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})"));
  ASSERT_TRUE(no_caps.refusal);
  EXPECT_EQ(no_caps.refusal->code, -32602);
  auto bad_level = classify(
      request("tools/list", meta("2026-07-28", R"(,"io.modelcontextprotocol/logLevel":"loud")")));
  ASSERT_TRUE(bad_level.refusal);
  EXPECT_EQ(bad_level.refusal->code, -32602);
  // Removed and unknown methods: -32601, HTTP 404.
  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                             "resources/unsubscribe", "no/such"}) {
    auto removed = classify(request(method, meta("2026-07-28")));
    ASSERT_TRUE(removed.refusal) << method;
    EXPECT_EQ(removed.refusal->code, -32601) << method;
    EXPECT_EQ(removed.refusal->http_status, 404u) << method;
  }
}

TEST(Era, AResultGetsTheMembersItLacksAndKeepsTheOnesItHas) {
  auto members = stateless_result_members("tools/list");
  EXPECT_EQ(with_members(R"({"tools":[]})", members),
            R"({"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]})");
  EXPECT_EQ(with_members("{}", stateless_result_members("tools/call")),
            R"({"resultType":"complete"})");
  // A downstream's own hints and result type win.
  EXPECT_EQ(with_members(R"({"ttlMs":5000,"resultType":"input_required"})",
                         stateless_result_members("resources/read")),
            R"({"cacheScope":"private","ttlMs":5000,"resultType":"input_required"})");
  EXPECT_EQ(with_members("not an object", members), "not an object");
}

TEST(Era, ARequestToA2026ServerGetsTheMetaAndKeepsEverythingElseByteForByte) {
  bj::object meta{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
  // No _meta yet: one is added in front, the arguments untouched (spacing and order kept).
  EXPECT_EQ(with_request_meta(R"({"name":"t","arguments":{"b":1, "a":2.50}})", meta),
            R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},)"
            R"("name":"t","arguments":{"b":1, "a":2.50}})");
  EXPECT_EQ(with_request_meta("", meta),
            R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})");
  // A _meta already there keeps its members; a key of sluice's replaces the one sent, once.
  std::string merged =
      with_request_meta(R"({"arguments":{},"_meta":{"progressToken":3,)"
                        R"("io.modelcontextprotocol/protocolVersion":"2025-11-25"}})",
                        meta);
  auto v = bj::parse(merged);
  EXPECT_EQ(v.at("_meta").at("progressToken"), 3) << merged;
  EXPECT_EQ(v.at("_meta").at("io.modelcontextprotocol/protocolVersion"), "2026-07-28");
  EXPECT_EQ(merged.find("2025-11-25"), std::string::npos) << merged;
  EXPECT_TRUE(merged.starts_with(R"({"arguments":{},"_meta":)")) << merged;
  EXPECT_EQ(with_request_meta("[1]", meta), "[1]");
}

TEST(Era, ANotificationFromSluicesOwnListenLosesOnlyItsSubscriptionId) {
  const std::string key(meta_key::kSubscriptionId);
  EXPECT_EQ(without_meta_member(R"({"uri":"a://b","_meta":{")" + key + R"(":17,"x":1}})", key),
            R"({"uri":"a://b","_meta":{"x":1}})");
  EXPECT_EQ(without_meta_member(R"({"uri":"a://b"})", key), R"({"uri":"a://b"})");
  EXPECT_EQ(without_meta_member(R"({"_meta":{"x":1}})", key), R"({"_meta":{"x":1}})");
}

TEST(Era, AToolsHeaderParametersAreKeptOnlyWhenEveryOneIsValid) {
  auto tool = [](const std::string& properties) {
    return bj::parse(R"({"name":"t","inputSchema":{"type":"object","properties":)" + properties +
                     "}}")
        .as_object();
  };
  std::vector<std::pair<std::string, std::string>> out;
  EXPECT_TRUE(param_headers_of(
      tool(R"({"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer",)"
           R"("x-mcp-header":"Priority"},"q":{"type":"string"}})"),
      out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::pair<std::string, std::string>{"region", "Region"}));
  EXPECT_EQ(out[1], (std::pair<std::string, std::string>{"n", "Priority"}));
  EXPECT_TRUE(param_headers_of(tool("{}"), out));
  EXPECT_TRUE(out.empty());
  for (
      const char* bad :
      {R"({"v":{"type":"string","x-mcp-header":""}})",
       R"({"v":{"type":"string","x-mcp-header":"My Region"}})",
       R"({"v":{"type":"string","x-mcp-header":"Region:1"}})",
       R"({"v":{"type":"string","x-mcp-header":"Région"}})",
       R"({"v":{"type":"number","x-mcp-header":"Score"}})",
       R"({"v":{"type":"object","x-mcp-header":"Data"}})",
       R"({"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}})"}) {
    EXPECT_FALSE(param_headers_of(tool(bad), out)) << bad;
  }
}

TEST(Era, ARetiredResourceNotFoundBecomesInvalidParamsNamingTheUri) {
  auto read = request("resources/read", R"({"uri":"test://gone"})");
  auto mapped =
      bj::parse(stateless_error(read, R"({"code":-32002,"message":"Resource not found"})"));
  EXPECT_EQ(mapped.at("code"), -32602);
  EXPECT_EQ(mapped.at("message"), "Resource not found");
  EXPECT_EQ(mapped.at("data").at("uri"), "test://gone");
  // The downstream's own data is kept; other errors and other methods pass as they are.
  auto kept =
      bj::parse(stateless_error(read, R"({"code":-32002,"message":"m","data":{"uri":"u"}})"));
  EXPECT_EQ(kept.at("data").at("uri"), "u");
  EXPECT_EQ(stateless_error(read, R"({"code":-32603,"message":"x"})"),
            R"({"code":-32603,"message":"x"})");
  EXPECT_EQ(stateless_error(request("prompts/get", "{}"), R"({"code":-32002,"message":"x"})"),
            R"({"code":-32002,"message":"x"})");
}

TEST(Era, ARefusalFrameCarriesTheIdAndTheData) {
  EraRefusal r{era_code::kUnsupportedProtocolVersion, "Unsupported", R"({"requested":"x"})", 400};
  auto frame = bj::parse(refusal_frame("\"a\"", r));
  EXPECT_EQ(frame.at("id"), "a");
  EXPECT_EQ(frame.at("error").at("code"), -32022);
  EXPECT_EQ(frame.at("error").at("data").at("requested"), "x");
}

}  // namespace
}  // namespace sluice::mcp
