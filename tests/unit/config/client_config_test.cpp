#include "config/client_config.hpp"
#include "config/json_text.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace sluice::config {
namespace {
namespace bj = boost::json;

std::string sample(const std::string& name) {
  std::ifstream in(std::string(SLUICE_SOURCE_DIR) + "/tests/data/clients/" + name,
                   std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<ClientDocument> open(Client client, const std::string& text) {
  ParsedClientConfig parsed = parse_client_config(client, text);
  EXPECT_NE(parsed.document, nullptr)
      << parsed.failure.problem << " at " << parsed.failure.line << ":" << parsed.failure.column;
  return std::move(parsed.document);
}

const ClientServer* find(const ClientServers& all, std::string_view name) {
  auto it = std::find_if(all.servers.begin(), all.servers.end(),
                         [&](const ClientServer& s) { return s.name == name; });
  return it == all.servers.end() ? nullptr : &*it;
}

const SkippedServer* find_skipped(const ClientServers& all, std::string_view name) {
  auto it = std::find_if(all.skipped.begin(), all.skipped.end(),
                         [&](const SkippedServer& s) { return s.name == name; });
  return it == all.skipped.end() ? nullptr : &*it;
}

bool has_note(const ClientServer& server, std::string_view part) {
  return std::any_of(server.notes.begin(), server.notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

JsonText json(const std::string& text, bool jsonc = false) {
  JsonTextFailure failure;
  std::optional<JsonText> parsed = JsonText::parse(text, jsonc, failure);
  EXPECT_TRUE(parsed.has_value()) << failure.problem;
  return parsed ? std::move(*parsed) : *JsonText::parse("", false, failure);
}

TEST(JsonText, RemovingAMemberTakesItsLinesAndKeepsEveryOtherByte) {
  JsonText text = json("{\n  \"a\": 1.0,\n  \"b\": {\"x\": 1e400},\n  \"c\": 3\n}\n");
  ASSERT_TRUE(text.remove({"b"}));
  EXPECT_EQ(text.text(), "{\n  \"a\": 1.0,\n  \"c\": 3\n}\n");
  ASSERT_TRUE(text.remove({"c"}));
  EXPECT_EQ(text.text(), "{\n  \"a\": 1.0\n}\n");
  ASSERT_TRUE(text.remove({"a"}));
  EXPECT_EQ(text.text(), "{}\n");
  EXPECT_FALSE(text.remove({"a"}));
}

TEST(JsonText, AnAddedMemberGoesLastIndentedLikeItsSiblings) {
  JsonText text = json("{\n    \"servers\": {\n        \"a\": {}\n    }\n}");
  ASSERT_TRUE(text.set({"servers", "b"}, bj::object{{"args", bj::array{"serve"}}}));
  EXPECT_EQ(text.text(),
            "{\n    \"servers\": {\n        \"a\": {},\n        \"b\": {\n            \"args\": "
            "[\n                \"serve\"\n            ]\n        }\n    }\n}");
}

TEST(JsonText, AnEmptyObjectOrFileGetsItsFirstMemberOnItsOwnLines) {
  JsonText text = json("{\n  \"mcpServers\": {}\n}\n");
  ASSERT_TRUE(text.set({"mcpServers", "s"}, bj::value("x")));
  EXPECT_EQ(text.text(), "{\n  \"mcpServers\": {\n    \"s\": \"x\"\n  }\n}\n");
  JsonText blank = json("");
  ASSERT_TRUE(blank.set({"mcpServers", "s"}, bj::value(1)));
  EXPECT_EQ(blank.text(), "{\n  \"mcpServers\": {\n    \"s\": 1\n  }\n}\n");
}

TEST(JsonText, AOneLineFileGetsACompactMember) {
  JsonText text = json(R"({"a":1,"mcpServers":{}})");
  ASSERT_TRUE(text.set({"mcpServers", "s"}, bj::object{{"command", "x"}}));
  EXPECT_EQ(text.text(), R"({"a":1,"mcpServers":{"s": {"command":"x"}}})");
  ASSERT_TRUE(text.set({"b"}, bj::value(2)));
  EXPECT_EQ(text.text(), R"({"a":1,"mcpServers":{"s": {"command":"x"}}, "b": 2})");
}

TEST(JsonText, CommentsAndTrailingCommasOfJsoncSurviveAnEdit) {
  JsonText text =
      json("{\n\t// servers\n\t\"servers\": {\n\t\t\"a\": 1, // one\n\t\t\"b\": 2,\n\t}\n}", true);
  ASSERT_TRUE(text.remove({"servers", "a"}));
  ASSERT_TRUE(text.set({"servers", "c"}, bj::value(3)));
  EXPECT_EQ(text.text(), "{\n\t// servers\n\t\"servers\": {\n\t\t\"b\": 2,\n\t\t\"c\": 3,\n\t}\n}");
}

TEST(JsonText, AMemberAddedAfterALineCommentGoesBelowIt) {
  JsonText text = json("{\n  \"a\": 1 // keep me\n}", true);
  ASSERT_TRUE(text.set({"b"}, bj::value(2)));
  EXPECT_EQ(text.text(), "{\n  \"a\": 1, // keep me\n  \"b\": 2\n}");
}

TEST(JsonText, ReplacingAValueKeepsItsKeyAndPlace) {
  JsonText text = json("{\n  \"a\": [1.0],\n  \"z\": 0\n}");
  ASSERT_TRUE(text.set({"a"}, bj::value("new")));
  EXPECT_EQ(text.text(), "{\n  \"a\": \"new\",\n  \"z\": 0\n}");
}

TEST(JsonText, AFailureSaysTheLineAndColumn) {
  JsonTextFailure failure;
  EXPECT_FALSE(JsonText::parse("{\n  \"a\": [1,\n  }", false, failure));
  EXPECT_EQ(failure.line, 3u);
  EXPECT_EQ(failure.column, 3u);
  EXPECT_FALSE(JsonText::parse("{\"a\": 1 // no comments\n}", false, failure));
  EXPECT_EQ(failure.line, 1u);
  EXPECT_FALSE(JsonText::parse("[1]", false, failure));
  EXPECT_EQ(failure.problem, "the top level is not an object");
}

TEST(JsonText, AMaskedTextShowsOnlyTheNamedMembersStrings) {
  std::string masked = masked_json(
      R"({"s": {"command": "npx", "args": ["-y", "x"], "env": {"K": "secret"}, "n": 1.0}})",
      {"command", "args"});
  EXPECT_EQ(masked,
            "{\"s\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"], \"env\": {\"K\": "
            "\"\u2026\"}, \"n\": 1.0}}");
}

TEST(ClientConfig, ClaudeCodeListsUserAndLocalScopes) {
  auto doc = open(Client::claude_code, sample("claude.json"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 3u);
  EXPECT_EQ(all.servers[0].name, "files");
  EXPECT_EQ(all.servers[0].scope, "user");
  EXPECT_EQ(
      bj::serialize(all.servers[0].entry),
      R"({"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","${HOME}/notes"],"env":{"LOG_LEVEL":"${LOG_LEVEL:-info}"}})");
  EXPECT_EQ(
      bj::serialize(all.servers[1].entry),
      R"({"type":"http","url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${GITHUB_TOKEN}"}})");
  EXPECT_EQ(all.servers[2].name, "app-db");
  EXPECT_EQ(all.servers[2].scope, "local /home/user/app");
  EXPECT_FALSE(doc->sluice_entry());
}

TEST(ClientConfig, ClaudeCodeSetupKeepsEveryByteItDoesNotEdit) {
  const std::string before = sample("claude.json");
  auto doc = open(Client::claude_code, before);
  doc->remove_server("files", "user");
  doc->remove_server("app-db", "local /home/user/app");
  doc->set_sluice_entry("sluice", {"/usr/bin/sluice", {"serve"}});
  const std::string after = doc->text();
  for (std::string_view kept : {"\"new-user-warmup\": 1.0,", "\"memory-command\": 1e400",
                                "\"lastCost\": 0.50", "\"キー\": \"値\"", "\"numStartups\": 42,"}) {
    EXPECT_NE(after.find(kept), std::string::npos) << kept;
  }
  EXPECT_NE(after.find("    \"github\": {\n      \"type\": \"http\",\n"), std::string::npos);
  EXPECT_NE(after.find("    },\n    \"sluice\": {\n      \"type\": \"stdio\",\n      \"command\": "
                       "\"/usr/bin/sluice\",\n      \"args\": [\n        \"serve\"\n      ],\n"
                       "      \"env\": {}\n    }\n  },\n  \"projects\""),
            std::string::npos)
      << after;
  EXPECT_NE(after.find("\"allowedTools\": [],\n      \"mcpServers\": {},\n"), std::string::npos)
      << after;
  auto again = open(Client::claude_code, after);
  EXPECT_EQ(again->sluice_entry(), "sluice");
  ClientServers all = again->servers();
  ASSERT_EQ(all.servers.size(), 1u);
  EXPECT_EQ(all.servers[0].name, "github");
  ASSERT_EQ(all.skipped.size(), 1u);
  EXPECT_EQ(all.skipped[0].reason, "it is named sluice, the name of sluice's own entry");
  // The same edit undone by hand gives the original text for the parts outside mcpServers.
  bj::value a = bj::parse(after), b = bj::parse(before);
  a.as_object().erase("mcpServers");
  b.as_object().erase("mcpServers");
  a.as_object()["projects"].as_object()["/home/user/app"].as_object().erase("mcpServers");
  b.as_object()["projects"].as_object()["/home/user/app"].as_object().erase("mcpServers");
  EXPECT_EQ(a, b);
}

TEST(ClientConfig, ClaudeDesktopTakesEveryServer) {
  auto doc = open(Client::claude_desktop, sample("claude_desktop_config.json"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 2u);
  EXPECT_EQ(
      bj::serialize(all.servers[0].entry),
      R"({"command":"/usr/local/bin/weather-mcp","args":["--units","metric"],"env":{"WEATHER_KEY":"abc123"}})");
  EXPECT_TRUE(all.servers[0].notes.empty());
}

TEST(ClientConfig, CursorVariablesAreTranslatedOrTheServerIsSkipped) {
  auto doc = open(Client::cursor, sample("cursor-mcp.json"));
  ClientServers all = doc->servers();
  const ClientServer* linear = find(all, "linear");
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(
      bj::serialize(linear->entry),
      R"({"type":"http","url":"https://mcp.linear.app/sse","headers":{"Authorization":"Bearer ${LINEAR_TOKEN}"}})");
  const ClientServer* notes = find(all, "notes");
  ASSERT_NE(notes, nullptr);
  EXPECT_TRUE(notes->disabled);
  EXPECT_EQ(
      bj::serialize(notes->entry),
      R"({"command":"${HOME}/bin/notes-mcp","args":["--dir","${HOME}/notes"],"env":{"NOTES_TOKEN":"${NOTES_TOKEN}"},"disabled":true})");
  const SkippedServer* lint = find_skipped(all, "lint");
  ASSERT_NE(lint, nullptr);
  EXPECT_NE(lint->reason.find("${workspaceFolder}"), std::string::npos);
}

TEST(ClientConfig, VsCodeInputsBecomeVariablesWithANote) {
  const std::string before = sample("vscode-mcp.json");
  auto doc = open(Client::vscode, before);
  ClientServers all = doc->servers();
  const ClientServer* perplexity = find(all, "perplexity");
  ASSERT_NE(perplexity, nullptr);
  EXPECT_EQ(bj::serialize(perplexity->entry.at("env")),
            R"({"PERPLEXITY_API_KEY":"${PERPLEXITY_KEY}","PATH_EXTRA":"${HOME}/bin"})");
  EXPECT_TRUE(has_note(*perplexity, "sluice secrets set PERPLEXITY_KEY"));
  EXPECT_TRUE(has_note(*perplexity, "(a password)"));
  EXPECT_TRUE(has_note(*perplexity, "envFile is not carried over"));
  const ClientServer* fetch = find(all, "fetch");
  ASSERT_NE(fetch, nullptr);
  EXPECT_TRUE(has_note(*fetch, "timeout is not carried over"));

  doc->remove_server("perplexity", "user");
  doc->set_sluice_entry("sluice", {"sluice", {"serve"}});
  const std::string after = doc->text();
  for (std::string_view kept : {"\t// The user-level MCP servers of VS Code\n",
                                "\"url\": \"http://127.0.0.1:3001/mcp\", // a local server\n",
                                "\"timeout\": 1.0\n", "\"id\": \"perplexity-key\""}) {
    EXPECT_NE(after.find(kept), std::string::npos) << kept << "\n" << after;
  }
  EXPECT_NE(after.find("\t\t},\n\t\t\"sluice\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": "
                       "\"sluice\",\n"),
            std::string::npos)
      << after;
  EXPECT_EQ(open(Client::vscode, after)->sluice_entry(), "sluice");
}

TEST(ClientConfig, GeminiDollarVariablesAndTransportsAreTranslated) {
  auto doc = open(Client::gemini, sample("gemini-settings.json"));
  ClientServers all = doc->servers();
  ASSERT_EQ(all.servers.size(), 3u);
  EXPECT_EQ(
      bj::serialize(all.servers[0].entry),
      R"({"command":"python","args":["-m","my_mcp_server","--port","8080"],"env":{"DATABASE_URL":"${DB_CONNECTION_STRING}","API_KEY":"${EXTERNAL_API_KEY}"},"cwd":"./mcp-servers/python","timeoutMs":15000})");
  EXPECT_TRUE(has_note(all.servers[0], "includeTools is not carried over"));
  EXPECT_TRUE(has_note(all.servers[0], "trust is not carried over"));
  EXPECT_EQ(
      bj::serialize(all.servers[1].entry),
      R"({"type":"http","url":"http://localhost:3000/mcp","headers":{"Authorization":"Bearer ${TOKEN}"},"timeoutMs":5000})");
  EXPECT_EQ(bj::serialize(all.servers[2].entry),
            R"({"type":"sse","url":"http://localhost:8080/sse"})");
}

TEST(ClientConfig, AnEntryThatStartsSluiceIsFoundAndNeverImported) {
  auto doc = open(Client::cursor, sample("already-sluice.json"));
  EXPECT_EQ(doc->sluice_entry(), "gateway");
  ClientServers all = doc->servers();
  EXPECT_TRUE(all.servers.empty());
  ASSERT_EQ(all.skipped.size(), 1u);
  EXPECT_EQ(all.skipped[0].reason, "it starts sluice itself");
  auto named = open(Client::claude_desktop, sample("named-sluice.json"));
  EXPECT_FALSE(named->sluice_entry());
  EXPECT_NE(find_skipped(named->servers(), "sluice"), nullptr);
}

TEST(ClientConfig, AFileThatDoesNotParseSaysWhere) {
  ParsedClientConfig parsed = parse_client_config(Client::claude_desktop, sample("broken.json"));
  EXPECT_EQ(parsed.document, nullptr);
  EXPECT_EQ(parsed.failure.line, 3u);
  EXPECT_EQ(parsed.failure.column, 26u);
  // The trailing comma is JSONC, which Cursor accepts.
  EXPECT_NE(parse_client_config(Client::cursor, sample("broken.json")).document, nullptr);
  ParsedClientConfig twice =
      parse_client_config(Client::cursor, R"({"mcpServers": {"a": {}, "a": {}}})");
  EXPECT_EQ(twice.failure.problem, "mcpServers holds the key a twice");
  ParsedClientConfig wrong = parse_client_config(Client::gemini, "{\n  \"mcpServers\": []\n}");
  EXPECT_EQ(wrong.failure.problem, "mcpServers is not an object");
  EXPECT_EQ(wrong.failure.line, 2u);
}

TEST(ClientConfig, AnEmptyFileGetsOnlyTheSluiceEntry) {
  auto doc = open(Client::vscode, "");
  doc->set_sluice_entry("sluice", {"/opt/sluice", {"serve"}});
  EXPECT_EQ(doc->text(),
            "{\n  \"servers\": {\n    \"sluice\": {\n      \"type\": \"stdio\",\n      "
            "\"command\": \"/opt/sluice\",\n      \"args\": [\n        \"serve\"\n      ]\n    "
            "}\n  }\n}\n");
}

TEST(ClientConfig, EachClientHasItsOwnFile) {
  EXPECT_EQ(client_config_path(Client::claude_code, "/h", ""), "/h/.claude.json");
  EXPECT_EQ(client_config_path(Client::claude_desktop, "/h", "/x"),
            "/x/Claude/claude_desktop_config.json");
  EXPECT_EQ(client_config_path(Client::vscode, "/h", ""), "/h/.config/Code/User/mcp.json");
  EXPECT_EQ(client_config_path(Client::cursor, "/h", ""), "/h/.cursor/mcp.json");
  EXPECT_EQ(client_config_path(Client::gemini, "/h", ""), "/h/.gemini/settings.json");
  for (Client c : all_clients()) EXPECT_EQ(client_by_name(client_name(c)), c);
  EXPECT_FALSE(client_by_name("emacs"));
}

}  // namespace
}  // namespace sluice::config
