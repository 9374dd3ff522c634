// The "audit" object of the top-level "sluice" block: its keys, their defaults, and refusals
// that name the key and never the value.
#include "config/mcp_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace sluice::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kAuditSettingsFile = "/home/u/.mcp.json";

core::Result<ConfigFile> parsed(const std::string& audit) {
  return parse_text(R"({"mcpServers":{},"sluice":{"audit":)" + audit + "}}", kAuditSettingsFile,
                    Origin::user, EnvLookup{});
}

TEST(AuditSettings, TakesTheFileTheSizeAndTheNumberKept) {
  auto file = parsed(R"({"file":"/var/log/a.jsonl","maxBytes":65536,"keep":0})");
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_TRUE(file->policy.audit.has_value());
  EXPECT_TRUE(file->policy.audit->enabled);
  EXPECT_EQ(file->policy.audit->file, "/var/log/a.jsonl");
  EXPECT_EQ(file->policy.audit->max_bytes, 65536u);
  EXPECT_EQ(file->policy.audit->keep, 0u);
}

TEST(AuditSettings, DefaultsToTheStateDirectoryTenMebibytesAndFiveFiles) {
  auto file = parsed("{}");
  ASSERT_TRUE(file) << file.error().message;
  const AuditSettings& a = *file->policy.audit;
  EXPECT_TRUE(a.enabled);
  EXPECT_EQ(a.file, "");
  EXPECT_EQ(a.max_bytes, 10u << 20);
  EXPECT_EQ(a.keep, 5u);
}

TEST(AuditSettings, FileFalseTurnsTheLogOff) {
  auto file = parsed(R"({"file":false})");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_FALSE(file->policy.audit->enabled);
}

TEST(AuditSettings, BadValuesAreRefusedByTheirKeyWithoutTheValue) {
  struct Case {
    std::string audit, where;
  };
  for (const Case& c : {Case{R"({"file":"rel/SECRETPATH"})", "$.sluice.audit.file"},
                        Case{R"({"file":true})", "$.sluice.audit.file"},
                        Case{R"({"file":7})", "$.sluice.audit.file"},
                        Case{R"({"maxBytes":100})", "$.sluice.audit.maxBytes"},
                        Case{R"({"keep":101})", "$.sluice.audit.keep"},
                        Case{R"("SECRETPATH")", "$.sluice.audit"}}) {
    auto file = parsed(c.audit);
    ASSERT_FALSE(file) << c.audit;
    EXPECT_THAT(file.error().message, HasSubstr(c.where)) << c.audit;
    EXPECT_THAT(file.error().message, Not(HasSubstr("SECRETPATH"))) << c.audit;
  }
}

}  // namespace
}  // namespace sluice::config
