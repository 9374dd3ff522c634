// The catalog index's text analysis (stop words, stemming, synonyms, parameter names), its
// filters, and building an IndexedTool from a tool object as a server listed it.
#include "gateway/catalog/analyzer.hpp"
#include "gateway/catalog/catalog_index.hpp"
#include "gateway/catalog/synonyms.hpp"
#include "catalog_test_index.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

IndexedTool make_tool(std::string server, std::string name, std::string description = "",
                      std::vector<std::string> parameters = {}, bool read_only = false) {
  IndexedTool tool;
  tool.server = std::move(server);
  tool.tool_name = std::move(name);
  tool.description = std::move(description);
  tool.parameters = std::move(parameters);
  tool.read_only = read_only;
  return tool;
}

SearchResult search(const CatalogIndex& index, std::string text) {
  SearchQuery query;
  query.text = std::move(text);
  return index.search(query);
}

TEST(CatalogAnalyzerTest, StopWordsAreEnglishFunctionWordsOnly) {
  for (const char* word : {"a", "an", "the", "to", "of", "and", "how", "my"}) {
    EXPECT_TRUE(is_stop_word(word)) << word;
  }
  for (const char* word : {"get", "new", "file", "list", "read", "", "ab"}) {
    EXPECT_FALSE(is_stop_word(word)) << word;
  }
}

TEST(CatalogAnalyzerTest, StemmingMeetsSingularPluralAndVerbForms) {
  EXPECT_EQ(stem("entity"), stem("entities"));
  EXPECT_EQ(stem("directory"), stem("directories"));
  EXPECT_EQ(stem("create"), stem("creating"));
  EXPECT_NE(stem("file"), stem("filter"));
}

TEST(CatalogAnalyzerTest, TokensWithDigitsOrNonAsciiBytesAreTheirOwnStems) {
  EXPECT_EQ(stem("base64"), "base64");
  EXPECT_EQ(stem("cafés"), "cafés");
  EXPECT_EQ(stem(std::string(Stemmer::kMaxStemmed + 1, 'a') + "s"),
            std::string(Stemmer::kMaxStemmed + 1, 'a') + "s");
}

TEST(CatalogSearchQualityTest, SingularQueryFindsPluralNamesAndTheReverse) {
  const TestIndex index = make_index({
      make_tool("kg", "create_entities", "Create multiple new entities"),
      make_tool("kg", "read_graph", "Read the entire knowledge graph"),
  });

  EXPECT_THAT(hit_ids(index, search(index, "entity")), ElementsAre("kg::create_entities"));
  EXPECT_THAT(hit_ids(index, search(index, "graphs")), ElementsAre("kg::read_graph"));
}

TEST(CatalogSearchQualityTest, StopWordsInTheQueryDoNotChangeScores) {
  const TestIndex index = make_index({
      make_tool("memory", "delete_entities", "Delete an entity and the relations of it"),
      make_tool("memory", "list_entities", "List entities"),
  });

  const SearchResult plain = search(index, "entity");
  const SearchResult wordy = search(index, "an entity of the");

  ASSERT_EQ(plain.hits.size(), 2U);
  ASSERT_EQ(wordy.hits.size(), 2U);
  for (std::size_t i = 0; i < plain.hits.size(); ++i) {
    EXPECT_EQ(wordy.hits[i].doc, plain.hits[i].doc);
    EXPECT_DOUBLE_EQ(wordy.hits[i].score, plain.hits[i].score);
  }
}

TEST(CatalogSearchQualityTest, StopWordsDoNotLengthenAField) {
  const TestIndex index = make_index({
      make_tool("a", "one", "Delete an entity of the graph"),
      make_tool("b", "two", "Delete entity graph"),
  });

  const SearchResult result = search(index, "entity");

  ASSERT_EQ(result.hits.size(), 2U);
  EXPECT_DOUBLE_EQ(result.hits[0].score, result.hits[1].score);
}

TEST(CatalogSearchQualityTest, QueryOfOnlyStopWordsStillMatchesThem) {
  const TestIndex index = make_index({
      make_tool("s", "first", "Reads the file"),
      make_tool("s", "second", "Writes a file"),
  });

  EXPECT_THAT(hit_ids(index, search(index, "the")), ElementsAre("s::first"));
}

TEST(CatalogSearchQualityTest, ParameterNamesAreSearchedAsTheirWords) {
  const TestIndex index = make_index({
      make_tool("weather", "forecast", "Weather for the next days", {"cityName", "days"}),
      make_tool("weather", "alerts", "Weather alerts", {"region"}),
  });

  EXPECT_THAT(hit_ids(index, search(index, "city")), ElementsAre("weather::forecast"));
}

TEST(CatalogSearchQualityTest, CuratedSynonymFindsAToolByAWordWordNetDoesNotLink) {
  const TestIndex index = make_index({
      make_tool("fs", "create_directory", "Create a new directory or ensure a directory exists"),
      make_tool("fs", "list_directory", "Get a detailed listing of all files and directories"),
      make_tool("fs", "write_file", "Create a new file or completely overwrite an existing file"),
  });

  EXPECT_THAT(hit_ids(index, search(index, "folder")),
              UnorderedElementsAre("fs::create_directory", "fs::list_directory"));
  EXPECT_EQ(hit_ids(index, search(index, "make a new folder"))[0], "fs::create_directory");
}

TEST(CatalogSearchQualityTest, WordNetSynonymFindsAToolThatNeverSaysTheQueryWord) {
  if (!Thesaurus::shared().wordnet_available()) GTEST_SKIP() << "WordNet data not installed";
  const TestIndex index = make_index({
      make_tool("jobs", "start_job", "Starts a job"),
      make_tool("jobs", "stop_job", "Stops a job"),
  });

  EXPECT_THAT(hit_ids(index, search(index, "commence")), ElementsAre("jobs::start_job"));
}

TEST(CatalogSearchQualityTest, RebuildWithoutWordNetBudgetListsTheWordsItLeftToLookUp) {
  if (!Thesaurus::shared().wordnet_available()) GTEST_SKIP() << "WordNet data not installed";
  TestIndex index;

  index.rebuild({make_tool("zoo", "feed_quokka", "Feeds a wallaby")}, 0);
  // Only names, titles and parameter names are looked up in WordNet.
  EXPECT_THAT(index.unlooked_words(), UnorderedElementsAre("feed", "quokka"));

  index.rebuild({make_tool("zoo", "feed_quokka", "Feeds a wallaby")});
  EXPECT_THAT(index.unlooked_words(), IsEmpty());
  index.rebuild({make_tool("zoo", "feed_quokka", "Feeds a wallaby")}, 0);
  EXPECT_THAT(index.unlooked_words(), IsEmpty());
}

TEST(CatalogSearchQualityTest, SynonymMatchRanksBelowTheExactWordInTheSameField) {
  const TestIndex index = make_index({
      make_tool("fs", "create_directory", "Creates a directory"),
      make_tool("fs", "create_folder", "Creates a folder"),
  });

  const SearchResult result = search(index, "folder");

  EXPECT_THAT(hit_ids(index, result), ElementsAre("fs::create_folder", "fs::create_directory"));
  EXPECT_GT(result.hits[0].score, result.hits[1].score);
}

TEST(CatalogSearchQualityTest, RareSynonymStillRanksBelowACommonExactWord) {
  std::vector<IndexedTool> tools = {make_tool("fs", "make_directory", "Makes a directory")};
  for (int i = 0; i < 6; ++i) {
    tools.push_back(make_tool("fs", "folder_" + std::to_string(i), "A folder"));
  }
  const TestIndex index = make_index(std::move(tools));

  const SearchResult result = search(index, "folder");

  ASSERT_EQ(result.hits.size(), 7U);
  EXPECT_EQ(hit_ids(index, result).back(), "fs::make_directory");
}

TEST(CatalogFiltersTest, ReadOnlyKeepsOnlyToolsThatSayReadOnlyHint) {
  const TestIndex index = make_index({
      make_tool("fs", "read_file", "Reads a file", {}, true),
      make_tool("fs", "write_file", "Writes a file", {}, false),
      make_tool("fs", "stat_file", "Describes a file", {}, true),
  });
  SearchQuery query;
  query.text = "file";
  query.read_only = true;

  const SearchResult ranked = index.search(query);
  query.text = "";
  const SearchResult listed = index.search(query);

  EXPECT_THAT(hit_ids(index, ranked), UnorderedElementsAre("fs::read_file", "fs::stat_file"));
  EXPECT_EQ(ranked.total_matches, 2U);
  EXPECT_THAT(hit_ids(index, listed), ElementsAre("fs::read_file", "fs::stat_file"));
  EXPECT_EQ(listed.total_matches, 2U);
}

TEST(CatalogFiltersTest, KeepDropsTheDocsItRejectsAndTotalCountsAfterEveryFilter) {
  const TestIndex index = make_index({
      make_tool("a", "read_file", "Reads a file", {}, true),
      make_tool("b", "read_file", "Reads a file", {}, true),
      make_tool("b", "write_file", "Writes a file", {}, false),
      make_tool("c", "read_file", "Reads a file", {}, true),
  });
  SearchQuery query;
  query.text = "file";
  query.limit = 1;
  query.read_only = true;
  query.keep = [](std::size_t doc) { return doc != 0; };

  const SearchResult result = index.search(query);

  EXPECT_THAT(hit_ids(index, result), ElementsAre("b::read_file"));
  EXPECT_EQ(result.total_matches, 2U);
}

TEST(IndexedToolTest, TakesNameTitleDescriptionParameterNamesAndReadOnlyHint) {
  const IndexedTool tool =
      indexed_tool("fs", R"({"name":"read_file","title":"Read File","description":"Reads a file",)"
                         R"("inputSchema":{"type":"object","properties":{"path":{},"head":{}}},)"
                         R"("annotations":{"title":"Other","readOnlyHint":true}})");

  EXPECT_EQ(tool.server, "fs");
  EXPECT_EQ(tool.tool_name, "read_file");
  EXPECT_EQ(tool.title, "Read File");
  EXPECT_EQ(tool.description, "Reads a file");
  EXPECT_THAT(tool.parameters, ElementsAre("path", "head"));
  EXPECT_TRUE(tool.read_only);
}

TEST(IndexedToolTest, FallsBackToTheAnnotationsTitle) {
  const IndexedTool tool =
      indexed_tool("fs", R"({"name":"x","annotations":{"title":"Shown","readOnlyHint":"yes"}})");

  EXPECT_EQ(tool.title, "Shown");
  EXPECT_FALSE(tool.read_only);
}

TEST(IndexedToolTest, MalformedInputLeavesWhatIsMissingEmptyAndNeverThrows) {
  for (const char* raw :
       {"", "not json", "[1,2]", R"({"name":5,"title":[]})",
        R"({"name":"x","inputSchema":{"properties":[]}})",
        R"({"name":"x","inputSchema":"object","annotations":7})", R"({"name":"x")"}) {
    IndexedTool tool;
    ASSERT_NO_THROW(tool = indexed_tool("s", raw)) << raw;
    EXPECT_EQ(tool.server, "s") << raw;
    EXPECT_THAT(tool.parameters, IsEmpty()) << raw;
    EXPECT_TRUE(tool.title.empty()) << raw;
    EXPECT_FALSE(tool.read_only) << raw;
  }
}

}  // namespace
}  // namespace sluice::gateway
