// The meta-tool table: one row per meta-tool drives tools/list, validation and dispatch, so
// the list clients see stays byte-identical and every row can be found and served.
#include "gateway/meta/meta_tools.hpp"

#include "rpc/message.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <variant>

namespace sluice::gateway::meta {
namespace {
namespace bj = boost::json;

std::string golden_list() {
  std::ifstream in(std::string(SLUICE_SOURCE_DIR) +
                   "/tests/unit/gateway/data/meta_tools_list.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

rpc::Message client_request(std::string text) {
  auto parsed = rpc::parse(std::move(text), {64}, rpc::Strictness::client);
  return std::get<rpc::Message>(std::move(parsed));
}

TEST(MetaTools, TheToolsListIsByteIdenticalToWhatClientsHaveSeen) {
  std::string golden = golden_list();
  ASSERT_FALSE(golden.empty());
  EXPECT_EQ(meta_tools_list(), golden);
}

TEST(MetaTools, EveryRowIsListedInTableOrderWithItsAnnotationAndAHandler) {
  bj::value list = bj::parse(meta_tools_list());
  const auto& tools = list.at("tools").as_array();
  ASSERT_EQ(tools.size(), meta_tools().size());
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const MetaTool& row = meta_tools()[i];
    EXPECT_EQ(tools[i].at("name").as_string(), row.name);
    EXPECT_EQ(tools[i].at("annotations").at("readOnlyHint").as_bool(), row.read_only);
    EXPECT_NE(row.handler, nullptr) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
    EXPECT_EQ(find_meta_tool(row.name), &row);
  }
}

TEST(MetaTools, AnUnknownNameHasNoRow) {
  EXPECT_EQ(find_meta_tool("gateway.nope"), nullptr);
  EXPECT_EQ(find_meta_tool(""), nullptr);
}

TEST(MetaTools, ArgumentsAreCheckedAgainstTheirOwnRowsSchema) {
  const MetaTool* describe = find_meta_tool("gateway.describe");
  ASSERT_NE(describe, nullptr);
  EXPECT_EQ(argument_problems(*describe, bj::parse(R"({"tool_id":"a::b"})")), std::nullopt);
  auto problems = argument_problems(*describe, bj::parse(R"({"tool_id":"a::b","x":1})"));
  ASSERT_TRUE(problems);
  EXPECT_EQ(problems->rfind("invalid arguments for gateway.describe:", 0), 0u) << *problems;
  // The same arguments fit another row's schema or not by that row's own rules.
  const MetaTool* refresh = find_meta_tool("gateway.refresh");
  ASSERT_NE(refresh, nullptr);
  EXPECT_TRUE(argument_problems(*refresh, bj::parse(R"({"tool_id":"a::b"})")));
  EXPECT_EQ(argument_problems(*refresh, bj::parse(R"({"force":true})")), std::nullopt);
}

TEST(MetaTools, TheProgressTokenIsTheRawTextTheClientSent) {
  rpc::Message m =
      client_request(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x",)"
                     R"("_meta":{"progressToken":1.50}}})");
  EXPECT_EQ(progress_token_of(m), "1.50");
  rpc::Message none = client_request(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{}}})");
  EXPECT_EQ(progress_token_of(none), "");
  rpc::Message not_object = client_request(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":"t"}})");
  EXPECT_EQ(progress_token_of(not_object), "");
}

}  // namespace
}  // namespace sluice::gateway::meta
