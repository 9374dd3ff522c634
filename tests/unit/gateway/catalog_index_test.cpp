#include "gateway/catalog/catalog_index.hpp"
#include "catalog_test_index.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sluice::gateway {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

IndexedTool catalog_index_make_tool(std::string server, std::string name,
                                    std::string description = "", std::string title = "") {
  IndexedTool tool;
  tool.server = std::move(server);
  tool.tool_name = std::move(name);
  tool.title = std::move(title);
  tool.description = std::move(description);
  return tool;
}

SearchQuery make_query(std::string text, std::size_t limit = 20,
                       std::optional<std::string> server = std::nullopt) {
  SearchQuery query;
  query.text = std::move(text);
  query.limit = limit;
  query.server = std::move(server);
  return query;
}

SearchResult catalog_index_search(const CatalogIndex& index, std::string text,
                                  std::size_t limit = 20) {
  return index.search(make_query(std::move(text), limit));
}

TEST(CatalogTokensTest, SnakeCamelKebabAndDottedNamesSplitIntoLowerCaseWords) {
  EXPECT_THAT(search_tokens("read_file"), ElementsAre("read", "file"));
  EXPECT_THAT(search_tokens("readFile"), ElementsAre("read", "file"));
  EXPECT_THAT(search_tokens("read-file"), ElementsAre("read", "file"));
  EXPECT_THAT(search_tokens("fs.Read::FILE"), ElementsAre("fs", "read", "file"));
  EXPECT_THAT(search_tokens("  Read  a File!  "), ElementsAre("read", "a", "file"));
}

TEST(CatalogTokensTest, AcronymsAndDigitsStayTogetherUntilTheNextWord) {
  EXPECT_THAT(search_tokens("getHTTPResponse"), ElementsAre("get", "http", "response"));
  EXPECT_THAT(search_tokens("v2Config"), ElementsAre("v2", "config"));
  EXPECT_THAT(search_tokens("base64_decode"), ElementsAre("base64", "decode"));
}

TEST(CatalogTokensTest, NonAsciiBytesStayInsideTokensUnchanged) {
  EXPECT_THAT(search_tokens("café_menu"), ElementsAre("café", "menu"));
  EXPECT_THAT(search_tokens("ÜberTool"), ElementsAre("Über", "tool"));
}

TEST(CatalogIndexTest, NameMatchesOutrankDescriptionOnlyMatches) {
  const TestIndex index = make_index({
      catalog_index_make_tool("files", "archive_folder", "Packs a folder into a zip"),
      catalog_index_make_tool("files", "zip_folder",
                              "Compresses every file of a folder into one archive"),
      catalog_index_make_tool("files", "list_folder", "Lists the entries of a folder"),
  });

  const SearchResult result = catalog_index_search(index, "zip");

  EXPECT_THAT(hit_ids(index, result), ElementsAre("files::zip_folder", "files::archive_folder"));
  EXPECT_GT(result.hits[0].score, result.hits[1].score);
}

TEST(CatalogIndexTest, TitleMatchesOutrankDescriptionOnlyMatches) {
  const TestIndex index = make_index({
      catalog_index_make_tool("docs", "fetch_page", "Fetches a wiki page", "Get page"),
      catalog_index_make_tool("docs", "get_space", "Reads one space", "Wiki space"),
  });

  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "wiki")),
              ElementsAre("docs::get_space", "docs::fetch_page"));
}

TEST(CatalogIndexTest, RarerTermsWeighMoreThanCommonOnes) {
  std::vector<IndexedTool> tools = {
      catalog_index_make_tool("s", "first", "common words here"),
      catalog_index_make_tool("s", "second", "rare words here"),
  };
  for (int i = 0; i < 8; ++i) {
    tools.push_back(
        catalog_index_make_tool("s", "filler" + std::to_string(i), "common filler text"));
  }
  const TestIndex index = make_index(std::move(tools));

  const SearchResult result = catalog_index_search(index, "common rare");

  ASSERT_EQ(result.total_matches, 10U);
  EXPECT_EQ(hit_ids(index, result)[0], "s::second");
  EXPECT_GT(result.hits[0].score, result.hits[1].score);
}

TEST(CatalogIndexTest, EmptyQueryListsEveryToolSortedById) {
  const TestIndex index = make_index({
      catalog_index_make_tool("web", "fetch"),
      catalog_index_make_tool("fs", "write_file"),
      catalog_index_make_tool("fs", "read_file"),
      catalog_index_make_tool("db", "query"),
  });

  for (const char* blank : {"", "   ", " \t\n "}) {
    const SearchResult result = catalog_index_search(index, blank);
    EXPECT_EQ(result.total_matches, 4U);
    EXPECT_THAT(hit_ids(index, result),
                ElementsAre("db::query", "fs::read_file", "fs::write_file", "web::fetch"));
    for (const SearchHit& hit : result.hits) EXPECT_EQ(hit.score, 0.0);
  }
}

TEST(CatalogIndexTest, ServerFilterKeepsOnlyToolsOfThatExactServer) {
  const TestIndex index = make_index({
      catalog_index_make_tool("fs", "read_file"),
      catalog_index_make_tool("fs2", "read_file"),
      catalog_index_make_tool("fs", "write_file"),
      catalog_index_make_tool("git", "show_file"),
  });

  const SearchResult ranked = index.search(make_query("file", 20, "fs"));
  EXPECT_EQ(ranked.total_matches, 2U);
  EXPECT_THAT(hit_ids(index, ranked), Each(StartsWith("fs::")));

  const SearchResult listed = index.search(make_query("", 20, "fs"));
  EXPECT_EQ(listed.total_matches, 2U);
  EXPECT_THAT(hit_ids(index, listed), ElementsAre("fs::read_file", "fs::write_file"));
}

TEST(CatalogIndexTest, UnknownServerFilterMatchesNothing) {
  const TestIndex index = make_index({catalog_index_make_tool("fs", "read_file")});

  const SearchResult result = index.search(make_query("read", 20, "FS"));

  EXPECT_THAT(result.hits, IsEmpty());
  EXPECT_EQ(result.total_matches, 0U);
}

TEST(CatalogIndexTest, LimitCutsTheRankedHitsWhileTotalCountsEveryMatch) {
  std::vector<IndexedTool> tools;
  for (int i = 0; i < 30; ++i) {
    tools.push_back(
        catalog_index_make_tool("s", "echo_" + std::to_string(i), std::string(i, 'x') + " echo"));
  }
  tools.push_back(catalog_index_make_tool("s", "unrelated"));
  const TestIndex index = make_index(std::move(tools));

  const SearchResult all = catalog_index_search(index, "echo", 100);
  const SearchResult top = catalog_index_search(index, "echo", 5);
  const SearchResult none = catalog_index_search(index, "echo", 0);

  EXPECT_EQ(all.hits.size(), 30U);
  EXPECT_EQ(top.total_matches, 30U);
  ASSERT_EQ(top.hits.size(), 5U);
  for (std::size_t i = 0; i < top.hits.size(); ++i) {
    EXPECT_EQ(top.hits[i].doc, all.hits[i].doc);
    EXPECT_EQ(top.hits[i].score, all.hits[i].score);
  }
  EXPECT_THAT(none.hits, IsEmpty());
  EXPECT_EQ(none.total_matches, 30U);
  EXPECT_EQ(catalog_index_search(index, "", 3).hits.size(), 3U);
  EXPECT_EQ(catalog_index_search(index, "", 3).total_matches, 31U);
}

TEST(CatalogIndexTest, EqualScoresAreOrderedByToolId) {
  const TestIndex index = make_index({
      catalog_index_make_tool("b", "echo", "Echoes its input"),
      catalog_index_make_tool("c", "echo", "Echoes its input"),
      catalog_index_make_tool("a", "echo", "Echoes its input"),
      catalog_index_make_tool("a", "echo", "Echoes its input"),
  });

  const SearchResult result = catalog_index_search(index, "echo");

  EXPECT_THAT(hit_ids(index, result), ElementsAre("a::echo", "a::echo", "b::echo", "c::echo"));
  EXPECT_EQ(result.hits[0].doc, 2U);
  EXPECT_EQ(result.hits[1].doc, 3U);
  EXPECT_EQ(result.hits[0].score, result.hits[3].score);
}

TEST(CatalogIndexTest, QueriesInAnyNamingStyleFindTheSameTool) {
  const TestIndex index = make_index({
      catalog_index_make_tool("fs", "write_file", "Writes a file"),
      catalog_index_make_tool("fs", "read_file", "Reads a file"),
      catalog_index_make_tool("fs", "list_directory", "Lists a directory"),
  });

  for (const char* query : {"read_file", "readFile", "read-file", "READ FILE", "file read"}) {
    EXPECT_EQ(hit_ids(index, catalog_index_search(index, query))[0], "fs::read_file") << query;
  }
}

TEST(CatalogIndexTest, WholeNameQueryRanksTheToolWithThatExactNameFirst) {
  const TestIndex index = make_index({
      catalog_index_make_tool("fs", "file_read"),
      catalog_index_make_tool("fs", "read_file"),
      catalog_index_make_tool("fs", "read_file_lines"),
  });

  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "read_file")),
              ElementsAre("fs::read_file", "fs::file_read", "fs::read_file_lines"));
  EXPECT_EQ(hit_ids(index, catalog_index_search(index, "fs::read_file_lines"))[0],
            "fs::read_file_lines");
}

TEST(CatalogIndexTest, LastQueryTokenAlsoMatchesAsAPrefix) {
  const TestIndex index = make_index({
      catalog_index_make_tool("util", "echo", "Returns its input"),
      catalog_index_make_tool("util", "time", "Returns the current time"),
  });

  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "ech")), ElementsAre("util::echo"));
  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "current ech")),
              UnorderedElementsAre("util::echo", "util::time"));
}

TEST(CatalogIndexTest, PrefixMatchesRankBelowExactMatches) {
  const TestIndex index = make_index({
      catalog_index_make_tool("util", "echolocate"),
      catalog_index_make_tool("util", "echo"),
  });

  const SearchResult result = catalog_index_search(index, "echo");

  EXPECT_THAT(hit_ids(index, result), ElementsAre("util::echo", "util::echolocate"));
  EXPECT_GT(result.hits[0].score, result.hits[1].score);
}

TEST(CatalogIndexTest, PrefixMatchScoresHalfOfItsBestExpansionOnly) {
  const TestIndex index = make_index({
      catalog_index_make_tool("util", "echo_echolocation"),
      catalog_index_make_tool("util", "echo"),
  });

  const double prefix = catalog_index_search(index, "ech").hits[0].score;
  const double echo = catalog_index_search(index, "echo").hits[0].score;
  const double echolocation = catalog_index_search(index, "echolocation").hits[0].score;

  EXPECT_EQ(hit_ids(index, catalog_index_search(index, "ech"))[0], "util::echo_echolocation");
  EXPECT_DOUBLE_EQ(prefix, 0.5 * std::max(echo, echolocation));
}

TEST(CatalogIndexTest, EarlierTokensAndOneLetterTokensDoNotMatchAsPrefixes) {
  const TestIndex index = make_index({catalog_index_make_tool("util", "echo")});

  EXPECT_EQ(catalog_index_search(index, "ech util").total_matches,
            1U);  // only through the server name
  EXPECT_EQ(catalog_index_search(index, "ech time").total_matches, 0U);
  EXPECT_EQ(catalog_index_search(index, "e").total_matches, 0U);
}

TEST(CatalogIndexTest, ServerNameCountsAsAWeakField) {
  const TestIndex index = make_index({
      catalog_index_make_tool("github", "create_issue", "Opens an issue"),
      catalog_index_make_tool("local", "mirror_github", "Mirrors a repository"),
  });

  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "github")),
              ElementsAre("local::mirror_github", "github::create_issue"));
}

TEST(CatalogIndexTest, QueryWithNoMatchingTermGivesZeroHits) {
  const TestIndex index = make_index({catalog_index_make_tool("fs", "read_file", "Reads a file")});

  for (const char* query : {"kubernetes", "!!!", "write_directory"}) {
    const SearchResult result = catalog_index_search(index, query);
    EXPECT_THAT(result.hits, IsEmpty()) << query;
    EXPECT_EQ(result.total_matches, 0U) << query;
  }
}

TEST(CatalogIndexTest, RepeatedQueryTermsCountOnce) {
  const TestIndex index = make_index(
      {catalog_index_make_tool("util", "echo"), catalog_index_make_tool("util", "time")});

  EXPECT_EQ(catalog_index_search(index, "echo echo Echo").hits[0].score,
            catalog_index_search(index, "echo").hits[0].score);
}

TEST(CatalogIndexTest, OnlyTheFirstDistinctQueryTermsUpToTheCapCount) {
  const TestIndex index = make_index(
      {catalog_index_make_tool("util", "echo"), catalog_index_make_tool("util", "time")});
  std::string filler;
  for (std::size_t i = 0; i < CatalogIndex::kMaxQueryTerms; ++i) {
    filler += " word" + std::to_string(i);
  }

  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "echo" + filler)),
              ElementsAre("util::echo"));
  EXPECT_THAT(catalog_index_search(index, filler + " time").hits, IsEmpty());
}

TEST(CatalogIndexTest, LargeCatalogsCountAndOrderEveryMatchAcrossTheWholeCatalog) {
  std::vector<IndexedTool> tools;
  std::size_t matches = 0;
  std::size_t matches_on_s1 = 0;
  for (std::size_t i = 0; i < 5000; ++i) {
    std::string description = "tool " + std::to_string(i);
    if (i % 7 == 0) description += " echo";
    if (i % 11 == 0) description += " echoes";
    if (i % 13 == 0) description += " echoing";
    const bool matching = i % 7 == 0 || i % 11 == 0 || i % 13 == 0;
    matches += matching ? 1 : 0;
    matches_on_s1 += matching && i % 3 == 1 ? 1 : 0;
    tools.push_back(
        catalog_index_make_tool("s" + std::to_string(i % 3), "t" + std::to_string(i), description));
  }
  const TestIndex index = make_index(std::move(tools));

  EXPECT_EQ(catalog_index_search(index, "echo").total_matches, matches);
  const SearchResult all = catalog_index_search(index, "ech", 10000);
  ASSERT_EQ(all.total_matches, matches);
  ASSERT_EQ(all.hits.size(), matches);
  const std::vector<std::string> ids = hit_ids(index, all);
  for (std::size_t i = 1; i < all.hits.size(); ++i) {
    ASSERT_GE(all.hits[i - 1].score, all.hits[i].score);
    if (all.hits[i - 1].score == all.hits[i].score) {
      ASSERT_LT(ids[i - 1], ids[i]);
    }
  }
  const SearchResult one_server = index.search(make_query("ech", 10000, "s1"));
  EXPECT_EQ(one_server.total_matches, matches_on_s1);
  EXPECT_THAT(hit_ids(index, one_server), Each(StartsWith("s1::")));
}

TEST(CatalogIndexTest, RebuildReplacesThePreviousCatalog) {
  TestIndex index = make_index(
      {catalog_index_make_tool("fs", "read_file"), catalog_index_make_tool("fs", "write_file")});

  index.rebuild({catalog_index_make_tool("web", "fetch_url")});

  EXPECT_EQ(index.size(), 1U);
  EXPECT_EQ(catalog_index_search(index, "file").total_matches, 0U);
  EXPECT_THAT(hit_ids(index, catalog_index_search(index, "fetch")), ElementsAre("web::fetch_url"));
  EXPECT_EQ(index.search(make_query("", 20, "fs")).total_matches, 0U);
}

TEST(CatalogIndexTest, EmptyCatalogAnswersEveryQueryWithNothing) {
  const CatalogIndex index{};

  EXPECT_EQ(catalog_index_search(index, "").total_matches, 0U);
  EXPECT_EQ(catalog_index_search(index, "read").total_matches, 0U);
}

}  // namespace
}  // namespace sluice::gateway
