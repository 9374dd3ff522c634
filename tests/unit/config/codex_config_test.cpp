// Codex's config.toml through the ClientDocument interface: reading servers in sluice's entry
// shape, editing line by line while every other byte stays, and refusing what it cannot read or
// edit with the place and without a value. Samples: tests/data/clients/codex/.
#include "config/client_config.hpp"
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace sluice::config {
namespace {

namespace bj = boost::json;

std::string codex_config_sample(const std::string& name) {
  std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/tests/data/clients/codex/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::unique_ptr<ClientDocument> codex_config_parsed(std::string_view text) {
  ParsedClientConfig config = parse_codex_config(text);
  EXPECT_NE(config.document, nullptr)
      << config.failure.line << ":" << config.failure.column << " " << config.failure.problem;
  return std::move(config.document);
}

const ClientServer* codex_config_find(const ClientServers& all, std::string_view name) {
  for (const ClientServer& s : all.servers) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool codex_config_has_note(const ClientServer& server, std::string_view part) {
  for (const std::string& note : server.notes) {
    if (note.find(part) != std::string::npos) return true;
  }
  return false;
}

const SluiceLaunch kLaunch{"/usr/bin/sluice", {"serve"}};

TEST(CodexConfig, ReadsStdioAndHttpServersInFileOrderInSluicesEntryShape) {
  auto doc = codex_config_parsed(codex_config_sample("commented.toml"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 2u);
  EXPECT_TRUE(all.skipped.empty());
  EXPECT_EQ(all.servers[0].name, "github");
  EXPECT_EQ(all.servers[1].name, "docs");
  EXPECT_EQ(all.servers[0].scope, "user");
  EXPECT_EQ(bj::serialize(all.servers[0].entry),
            R"({"command":"npx","args":["-y","@modelcontextprotocol/server-github"],)"
            R"("env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"ghp_SENTINEL_VALUE_0001"}})");
  EXPECT_EQ(bj::serialize(all.servers[1].entry),
            R"({"type":"http","url":"https://docs.example.test/mcp",)"
            R"("headers":{"X-Team":"tools","Authorization":"Bearer ${DOCS_TOKEN}"},)"
            R"("timeoutMs":90000})");
}

TEST(CodexConfig, KeysWithoutASluiceCounterpartAreNotedByNameWithoutTheirValues) {
  auto doc = codex_config_parsed(codex_config_sample("commented.toml"));
  ClientServers all = doc->servers();
  const ClientServer* github = codex_config_find(all, "github");
  ASSERT_NE(github, nullptr);
  EXPECT_TRUE(codex_config_has_note(*github, "`startup_timeout_sec`"));
  EXPECT_TRUE(codex_config_has_note(*github, "`enabled_tools`"));
  const ClientServer* docs = codex_config_find(all, "docs");
  ASSERT_NE(docs, nullptr);
  EXPECT_TRUE(codex_config_has_note(*docs, "`bearer_token_env_var`"));
  EXPECT_TRUE(codex_config_has_note(*docs, "`tool_timeout_sec` became `timeoutMs`"));
  for (const ClientServer& s : all.servers) {
    for (const std::string& note : s.notes) {
      EXPECT_EQ(note.find("SENTINEL"), std::string::npos) << note;
      EXPECT_EQ(note.find("DOCS_TOKEN"), std::string::npos) << note;
      EXPECT_EQ(note.find("search_code"), std::string::npos) << note;
    }
  }
}

TEST(CodexConfig, TheTextOfAnUneditedDocumentIsTheFileByteForByte) {
  std::string text = codex_config_sample("commented.toml");
  EXPECT_EQ(codex_config_parsed(text)->text(), text);
}

TEST(CodexConfig, RemovingAServerTakesItsTableAndAFarSubTableAndKeepsEveryOtherByte) {
  auto doc = codex_config_parsed(codex_config_sample("commented.toml"));
  doc->remove_server("github", "user");
  EXPECT_EQ(doc->text(), codex_config_sample("commented.without-github.toml"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 1u);
  EXPECT_EQ(all.servers[0].name, "docs");
}

TEST(CodexConfig, RemovingAServerOfAnotherScopeOrAnAbsentOneChangesNothing) {
  std::string text = codex_config_sample("commented.toml");
  auto doc = codex_config_parsed(text);
  doc->remove_server("github", "project /home/me/repo");
  doc->remove_server("absent", "user");
  EXPECT_EQ(doc->text(), text);
}

TEST(CodexConfig, TheSluiceEntryIsAppendedAsATableAfterABlankLine) {
  std::string text = codex_config_sample("commented.toml");
  auto doc = codex_config_parsed(text);
  doc->set_sluice_entry("sluice", kLaunch);
  EXPECT_EQ(doc->text(), text +
                             "\n[mcp_servers.sluice]\ncommand = \"/usr/bin/sluice\"\n"
                             "args = [\"serve\"]\n");
  EXPECT_EQ(doc->sluice_entry(), "sluice");
  auto again = codex_config_parsed(doc->text());
  ClientServers all = again->servers();
  const ClientServer* entry = codex_config_find(all, "sluice");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(bj::serialize(entry->entry), R"({"command":"/usr/bin/sluice","args":["serve"]})");
}

TEST(CodexConfig, ImportThenSetupLeavesOnlySluiceAndTheOtherSettings) {
  auto doc = codex_config_parsed(codex_config_sample("commented.toml"));
  for (const ClientServer& s : doc->servers().servers) doc->remove_server(s.name, s.scope);
  doc->set_sluice_entry("sluice", kLaunch);
  EXPECT_EQ(doc->text(),
            "# Codex settings, edited by hand.\nmodel = \"gpt-5-codex\"\n"
            "approval_policy = \"on-request\"\n\n"
            "# GitHub's server, started through npx.\n\n"
            "[profiles.fast]\nmodel = \"gpt-5-mini\"\n\n"
            "# The token lives in the environment store.\n"
            "[mcp_servers.sluice]\ncommand = \"/usr/bin/sluice\"\n"
            "args = [\"serve\"]\n");
}

TEST(CodexConfig, AServerAlreadyNamedSluiceIsReplacedInPlaceOfItsLines) {
  auto doc = codex_config_parsed(codex_config_sample("named_sluice.toml"));
  EXPECT_EQ(doc->sluice_entry(), std::nullopt);
  doc->set_sluice_entry("sluice", kLaunch);
  EXPECT_EQ(doc->text(),
            "[mcp_servers.filesystem]\ncommand = \"npx\"\n"
            "args = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/me\"]\n\n"
            "[mcp_servers.sluice]\ncommand = \"/usr/bin/sluice\"\nargs = [\"serve\"]\n");
}

TEST(CodexConfig, AnEntryThatAlreadyStartsSluiceIsFoundByItsCommandsFileName) {
  auto doc = codex_config_parsed(codex_config_sample("points_at_sluice.toml"));
  EXPECT_EQ(doc->sluice_entry(), "gateway");
  EXPECT_EQ(codex_config_parsed(codex_config_sample("commented.toml"))->sluice_entry(),
            std::nullopt);
}

TEST(CodexConfig, InlineEnvAndPassedThroughVariablesBecomeTheEntrysEnv) {
  auto doc = codex_config_parsed(codex_config_sample("inline_env.toml"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 1u);
  EXPECT_EQ(bj::serialize(all.servers[0].entry),
            R"({"command":"npx","args":["-y","@modelcontextprotocol/server-memory"],)"
            R"("env":{"LOG_LEVEL":"warn","MEMORY_FILE_PATH":"/tmp/memory.json",)"
            R"("HOME":"${HOME}"},"cwd":"/srv/memory"})");
  EXPECT_TRUE(codex_config_has_note(all.servers[0], "1 variable passed from the environment"));
  doc->remove_server("memory", "user");
  EXPECT_EQ(doc->text(), "");
}

TEST(CodexConfig, AServerWithEnabledFalseIsReadAsDisabled) {
  ClientServers all = codex_config_parsed(codex_config_sample("disabled.toml"))->servers();
  ASSERT_EQ(all.servers.size(), 2u);
  EXPECT_TRUE(all.servers[0].disabled);
  EXPECT_EQ(bj::serialize(all.servers[0].entry), R"({"command":"slow-server","disabled":true})");
  EXPECT_FALSE(all.servers[1].disabled);
  EXPECT_EQ(bj::serialize(all.servers[1].entry), R"({"command":"fast-server"})");
}

TEST(CodexConfig, BadTomlIsAFailureWithItsLineAndColumnAndNoValueFromTheFile) {
  ParsedClientConfig config = parse_codex_config(codex_config_sample("bad.toml"));
  ASSERT_EQ(config.document, nullptr);
  EXPECT_EQ(config.failure.line, 5u);
  EXPECT_GT(config.failure.column, 0u);
  EXPECT_NE(config.failure.problem.find("not valid TOML"), std::string::npos);
  EXPECT_EQ(config.failure.problem.find("SENTINEL"), std::string::npos);
  ParsedClientConfig redefined = parse_codex_config("[a]\nb = 1\n[a]\n");
  ASSERT_EQ(redefined.document, nullptr);
  EXPECT_EQ(redefined.failure.line, 3u);
  EXPECT_EQ(redefined.failure.problem.find("'a'"), std::string::npos) << redefined.failure.problem;
}

TEST(CodexConfig, AnInlineMcpServersTableIsRefusedWithItsPlace) {
  ParsedClientConfig config = parse_codex_config(codex_config_sample("inline_root.toml"));
  ASSERT_EQ(config.document, nullptr);
  EXPECT_EQ(config.failure.line, 2u);
  EXPECT_NE(config.failure.problem.find("inline table"), std::string::npos);
  ParsedClientConfig array = parse_codex_config("[[mcp_servers]]\ncommand = \"x\"\n");
  ASSERT_EQ(array.document, nullptr);
  EXPECT_NE(array.failure.problem.find("an array"), std::string::npos);
}

TEST(CodexConfig, OneLineEntriesAndDottedKeysAreRemovedLineByLine) {
  auto doc = codex_config_parsed(codex_config_sample("dotted.toml"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 3u);
  EXPECT_EQ(all.servers[2].name, "fetch");
  EXPECT_EQ(bj::serialize(all.servers[2].entry),
            R"({"command":"uvx","args":["mcp-server-fetch"]})");
  doc->remove_server("fetch", "user");
  doc->remove_server("memory", "user");
  EXPECT_EQ(doc->text(),
            "[mcp_servers]\n# One line each.\ntime = { command = \"uvx\", args = "
            "[\"mcp-server-time\"] }\n\n[tui]\nnotifications = true\n");
}

TEST(CodexConfig, AFileOfOneLineEntriesGetsTheSluiceEntryAsOneLineAmongThem) {
  auto doc = codex_config_parsed(codex_config_sample("dotted.toml"));
  doc->set_sluice_entry("sluice", kLaunch);
  std::string text = codex_config_sample("dotted.toml");
  std::string line = "sluice = { command = \"/usr/bin/sluice\", args = [\"serve\"] }\n";
  text.insert(text.find("\n\n[tui]") + 1, line);
  EXPECT_EQ(doc->text(), text);
}

TEST(CodexConfig, WindowsLineEndingsAndAMissingFinalNewlineAreKept) {
  auto doc = codex_config_parsed(
      "model = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"a\"\r\n\r\n[x]\r\ny = 1");
  doc->remove_server("a", "user");
  doc->set_sluice_entry("sluice", SluiceLaunch{"sluice", {}});
  EXPECT_EQ(doc->text(),
            "model = \"o3\"\r\n\r\n[x]\r\ny = 1\r\n\r\n[mcp_servers.sluice]\r\n"
            "command = \"sluice\"\r\nargs = []\r\n");
}

TEST(CodexConfig, AnEmptyFileGetsTheFirstEntryAndOddNamesAndCommandsAreQuoted) {
  auto doc = codex_config_parsed("  \n");
  doc->set_sluice_entry("my gateway", SluiceLaunch{"/opt/s \"q\"/sluice", {"a\\b"}});
  EXPECT_EQ(doc->text(),
            "  \n[mcp_servers.\"my gateway\"]\ncommand = \"/opt/s \\\"q\\\"/sluice\"\n"
            "args = [\"a\\\\b\"]\n");
  EXPECT_EQ(doc->sluice_entry(), "my gateway");
  auto empty = codex_config_parsed("");
  empty->set_sluice_entry("sluice", kLaunch);
  EXPECT_EQ(empty->text(),
            "[mcp_servers.sluice]\ncommand = \"/usr/bin/sluice\"\nargs = [\"serve\"]\n");
}

TEST(CodexConfig, AnEntryTomlCannotHoldIsNotMadeAndTheDocumentStaysAsItWas) {
  std::string text = codex_config_sample("named_sluice.toml");
  auto doc = codex_config_parsed(text);
  doc->set_sluice_entry("sluice", SluiceLaunch{"/opt/\xff/sluice", {"serve"}});
  EXPECT_EQ(doc->text(), text);
  EXPECT_EQ(doc->sluice_entry(), std::nullopt);
}

TEST(CodexConfig, ShapesCodexRefusesAreSkippedWithTheReason) {
  auto doc = codex_config_parsed(
      "[mcp_servers.both]\ncommand = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\n"
      "[mcp_servers.neither]\nargs = []\n"
      "[mcp_servers.headers]\ncommand = \"a\"\nhttp_headers = { A = \"b\" }\n"
      "[mcp_servers.args]\ncommand = \"a\"\nargs = \"not-an-array\"\n"
      "[mcp_servers]\nplain = \"x\"\n");
  ClientServers all = doc->servers();
  EXPECT_TRUE(all.servers.empty());
  ASSERT_EQ(all.skipped.size(), 5u);
  EXPECT_EQ(all.skipped[0].name, "both");
  EXPECT_EQ(all.skipped[0].reason, "has both `command` and `url`");
  EXPECT_EQ(all.skipped[1].reason, "has neither `command` nor `url`");
  EXPECT_EQ(all.skipped[2].reason, "`http_headers` is not valid for a stdio server");
  EXPECT_EQ(all.skipped[3].reason, "`args` is a string, not an array of strings");
  EXPECT_EQ(all.skipped[4].reason, "is a string, not a table");
}

TEST(CodexConfig, AServerWhoseSubTableComesFirstIsRemovedWhole) {
  auto doc = codex_config_parsed(
      "[mcp_servers.a.env]\nK = \"v\"\n\n[other]\nx = 1\n\n[mcp_servers.a]\ncommand = \"a\"\n");
  doc->remove_server("a", "user");
  EXPECT_EQ(doc->text(), "[other]\nx = 1\n");
}

TEST(CodexConfig, RootDottedServersTakeTheSluiceTableAfterThem) {
  auto doc = codex_config_parsed("mcp_servers.a.command = \"a\"\nmodel = \"o3\"\n");
  doc->set_sluice_entry("sluice", kLaunch);
  auto again = codex_config_parsed(doc->text());
  ClientServers all = again->servers();
  ASSERT_EQ(all.servers.size(), 2u);
  EXPECT_EQ(again->sluice_entry(), "sluice");
  doc->remove_server("a", "user");
  EXPECT_EQ(doc->text(),
            "model = \"o3\"\n\n[mcp_servers.sluice]\ncommand = \"/usr/bin/sluice\"\n"
            "args = [\"serve\"]\n");
}

}  // namespace
}  // namespace sluice::config
