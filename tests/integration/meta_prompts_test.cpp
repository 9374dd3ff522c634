// Meta mode (`--expose meta`, the default) exposes the downstreams' prompts, resources and
// templates beside the meta-tools, named as in aggregate mode (`server__prompt`, resources by
// their URI), without starting any server to list them: a list holds what is known, and only
// the server a prompts/get or resources/read is routed to starts, when it must.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace sluice::test {
namespace {
namespace bj = boost::json;

// Two lazy servers: `conf` (the conformance fixture: prompts, resources, templates) and `fx`
// (the plain fixture: tools only).
class MetaPrompts : public ::testing::Test {
 protected:
  void SetUp() override {
    bj::object conf{{"command", CONFORMANCE_SERVER},
                    {"env", bj::object{{"SLUICE_FIXTURE_MARKER", marker_}}}};
    auto cfg = dir_.write(".mcp.json", R"({"mcpServers":{"conf":)" + bj::serialize(conf) +
                                           R"(,"fx":)" + fixture_entry(marker_) + "}}");
    sluice_ = std::make_unique<Sluice>(
        std::vector<std::string>{"serve", "--no-discover", "--config", cfg.string()}, dir_.path(),
        dir_.path());
    init_ = sluice_->initialize();
  }
  void TearDown() override {
    expect_clean_exit(*sluice_);
    sluice_.reset();
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }
  // The result of a request; fails the test on an error answer.
  bj::value result(const std::string& method, const std::string& params) {
    bj::value answer = sluice_->request(method, params);
    EXPECT_TRUE(answer.as_object().contains("result")) << method << ": " << bj::serialize(answer);
    return answer.as_object().contains("result") ? answer.at("result") : bj::value(bj::object());
  }
  // The `key` member of every entry of a list's `items`.
  std::vector<std::string> listed(const std::string& method, const char* items, const char* key) {
    std::vector<std::string> out;
    bj::value r = result(method, "{}");
    if (!r.as_object().contains(items)) return out;
    for (const auto& e : r.at(items).as_array()) out.emplace_back(e.at(key).as_string());
    return out;
  }
  std::string status(const std::string& server) {
    auto h = sluice_->call_tool("gateway.health", R"({"server":")" + server + "\"}");
    return std::string(h.at("structuredContent").at("servers").at(0).at("status").as_string());
  }
  static bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
  bj::value init_;
};

TEST_F(MetaPrompts, InitializeOffersPromptsAndResourcesBesideTheMetaTools) {
  const auto& caps = init_.at("result").at("capabilities").as_object();
  EXPECT_TRUE(caps.contains("prompts"));
  EXPECT_EQ(caps.at("resources").at("subscribe"), true);
  EXPECT_EQ(caps.at("tools").at("listChanged"), false) << "the meta-tools never change";
  auto tools = listed("tools/list", "tools", "name");
  EXPECT_TRUE(has(tools, "gateway.catalog_search"));
  EXPECT_TRUE(std::none_of(tools.begin(), tools.end(), [](const std::string& t) {
    return t.find("__") != std::string::npos;
  })) << "no downstream tool is listed in meta mode";
}

TEST_F(MetaPrompts, ListingStartsNoServer) {
  EXPECT_TRUE(listed("prompts/list", "prompts", "name").empty());
  EXPECT_TRUE(listed("resources/list", "resources", "uri").empty());
  EXPECT_TRUE(listed("resources/templates/list", "resourceTemplates", "uriTemplate").empty());
  EXPECT_EQ(status("conf"), "lazy");
  EXPECT_EQ(status("fx"), "lazy");
  EXPECT_TRUE(processes_with_marker(marker_).empty()) << "a list started a server";
}

TEST_F(MetaPrompts, ARunningServersPromptsAreListedNamespacedAndGot) {
  auto conn = sluice_->call_tool("gateway.connect_server", R"({"server_name":"conf"})");
  ASSERT_FALSE(is_error(conn)) << text_of(conn);
  auto prompts = listed("prompts/list", "prompts", "name");
  EXPECT_TRUE(has(prompts, "conf__test_prompt_with_arguments")) << prompts.size();
  EXPECT_FALSE(has(prompts, "test_prompt_with_arguments")) << "names are namespaced";
  bj::value got = result("prompts/get", R"({"name":"conf__test_prompt_with_arguments",)"
                                        R"("arguments":{"arg1":"one","arg2":"two"}})");
  EXPECT_NE(bj::serialize(got).find("arg1='one'"), std::string::npos) << bj::serialize(got);
  auto unknown = sluice_->request("prompts/get", R"({"name":"nope__x"})");
  EXPECT_EQ(unknown.at("error").at("code"), -32602);
  EXPECT_EQ(status("fx"), "lazy") << "listing and getting one server's prompts start no other";
}

TEST_F(MetaPrompts, ARunningServersResourcesAreListedReadAndSubscribed) {
  ASSERT_FALSE(is_error(sluice_->call_tool("gateway.connect_server", R"({"server_name":"conf"})")));
  EXPECT_TRUE(has(listed("resources/list", "resources", "uri"), "test://static-text"));
  EXPECT_FALSE(listed("resources/templates/list", "resourceTemplates", "uriTemplate").empty());
  bj::value read = result("resources/read", R"({"uri":"test://static-text"})");
  EXPECT_EQ(read.at("contents").at(0).at("uri"), "test://static-text");
  bj::value templated = result("resources/read", R"({"uri":"test://template/123/data"})");
  EXPECT_NE(bj::serialize(templated).find("123"), std::string::npos);
  auto missing = sluice_->request("resources/read", R"({"uri":"nowhere://x"})");
  EXPECT_EQ(missing.at("error").at("code"), -32002);
  result("resources/subscribe", R"({"uri":"test://watched-resource"})");
  result("resources/unsubscribe", R"({"uri":"test://watched-resource"})");
  EXPECT_EQ(status("fx"), "lazy");
}

TEST_F(MetaPrompts, GettingAPromptStartsItsServerOnly) {
  EXPECT_TRUE(processes_with_marker(marker_).empty());
  bj::value got = result("prompts/get", R"({"name":"conf__test_simple_prompt"})");
  EXPECT_NE(bj::serialize(got).find("This is a simple prompt"), std::string::npos)
      << bj::serialize(got);
  EXPECT_EQ(status("conf"), "online");
  EXPECT_EQ(status("fx"), "lazy");
  // Now known, its prompts are listed.
  EXPECT_TRUE(has(listed("prompts/list", "prompts", "name"), "conf__test_simple_prompt"));
}

TEST_F(MetaPrompts, APromptGetToAServerWithoutPromptsPassesItsErrorOn) {
  auto got = sluice_->request("prompts/get", R"({"name":"fx__anything"})");
  // fx starts (it offers no prompts): its own error answer comes back.
  ASSERT_TRUE(got.as_object().contains("error")) << bj::serialize(got);
  EXPECT_EQ(status("fx"), "online");
  EXPECT_EQ(status("conf"), "lazy");
}

}  // namespace
}  // namespace sluice::test
