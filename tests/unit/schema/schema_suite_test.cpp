// The official JSON-Schema-Test-Suite (required cases of draft2020-12 and draft7, not
// optional/) against sluice's validator. Every case passes, or its group is listed in
// kUnsupported with the reason; a listed group that starts passing fails the test too, so
// the list cannot go stale.
//
// Where the suite comes from: draft7 from Debian's json-schema-test-suite package (2.0.0,
// drafts 3 to 7; scripts/bootstrap.sh installs it), at SLUICE_SCHEMA_SUITE_DIR; draft2020-12,
// which that package lacks, from the copy under SLUICE_SHARED_DIR/data when it exists, else
// those cases are skipped with a notice.
#include "schema/schema.hpp"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::schema {
namespace {

namespace bj = boost::json;
namespace fs = std::filesystem;

constexpr std::string_view kRemoteDocument =
    "refers to a document other than the schema itself; sluice refuses remote references at "
    "compile by design";
constexpr std::string_view kMetaschema =
    "refers to the dialect's metaschema, a remote document; sluice does not embed "
    "metaschemas";
constexpr std::string_view kCustomMetaschema =
    "declares a custom metaschema (a remote document) as its $schema; sluice supports only the "
    "2020-12 and draft-07 dialects and refuses other $schema values";

// A group of the suite (one schema and its tests) that sluice does not support.
struct Unsupported {
  std::string_view file;  // relative to the suite's tests/ directory
  std::string_view group;
  std::string_view reason;
};

constexpr Unsupported kUnsupported[] = {
    {"draft2020-12/defs.json", "validate definition against metaschema", kMetaschema},
    {"draft2020-12/ref.json", "remote ref, containing refs itself", kMetaschema},
    {"draft2020-12/dynamicRef.json", "strict-tree schema, guards against misspelled properties",
     kRemoteDocument},
    {"draft2020-12/dynamicRef.json", "tests for implementation dynamic anchor and reference link",
     kRemoteDocument},
    {"draft2020-12/dynamicRef.json",
     "$ref and $dynamicAnchor are independent of order - $defs first", kRemoteDocument},
    {"draft2020-12/dynamicRef.json",
     "$ref and $dynamicAnchor are independent of order - $ref first", kRemoteDocument},
    {"draft2020-12/dynamicRef.json", "$ref to $dynamicRef finds detached $dynamicAnchor",
     kRemoteDocument},
    {"draft2020-12/refRemote.json", "remote ref", kRemoteDocument},
    {"draft2020-12/refRemote.json", "fragment within remote ref", kRemoteDocument},
    {"draft2020-12/refRemote.json", "anchor within remote ref", kRemoteDocument},
    {"draft2020-12/refRemote.json", "ref within remote ref", kRemoteDocument},
    {"draft2020-12/refRemote.json", "base URI change", kRemoteDocument},
    {"draft2020-12/refRemote.json", "base URI change - change folder", kRemoteDocument},
    {"draft2020-12/refRemote.json", "base URI change - change folder in subschema",
     kRemoteDocument},
    {"draft2020-12/refRemote.json", "root ref in remote ref", kRemoteDocument},
    {"draft2020-12/refRemote.json", "remote ref with ref to defs", kRemoteDocument},
    {"draft2020-12/refRemote.json", "Location-independent identifier in remote ref",
     kRemoteDocument},
    {"draft2020-12/refRemote.json", "retrieved nested refs resolve relative to their URI not $id",
     kRemoteDocument},
    {"draft2020-12/refRemote.json", "remote HTTP ref with different $id", kRemoteDocument},
    {"draft2020-12/refRemote.json", "remote HTTP ref with different URN $id", kRemoteDocument},
    {"draft2020-12/refRemote.json", "remote HTTP ref with nested absolute ref", kRemoteDocument},
    {"draft2020-12/refRemote.json", "$ref to $ref finds detached $anchor", kRemoteDocument},
    {"draft2020-12/vocabulary.json",
     "schema that uses custom metaschema with with no validation vocabulary", kCustomMetaschema},
    {"draft2020-12/vocabulary.json", "ignore unrecognized optional vocabulary", kCustomMetaschema},
    // draft7 as Debian's json-schema-test-suite 2.0.0 has it.
    {"draft7/definitions.json", "valid definition", kMetaschema},
    {"draft7/definitions.json", "invalid definition", kMetaschema},
    {"draft7/ref.json", "remote ref, containing refs itself", kMetaschema},
    {"draft7/refRemote.json", "remote ref", kRemoteDocument},
    {"draft7/refRemote.json", "fragment within remote ref", kRemoteDocument},
    {"draft7/refRemote.json", "ref within remote ref", kRemoteDocument},
    {"draft7/refRemote.json", "base URI change", kRemoteDocument},
    {"draft7/refRemote.json", "base URI change - change folder", kRemoteDocument},
    {"draft7/refRemote.json", "base URI change - change folder in subschema", kRemoteDocument},
    {"draft7/refRemote.json", "root ref in remote ref", kRemoteDocument},
};

constexpr std::string_view kDraft7 = "draft7";
constexpr std::string_view kDraft2020 = "draft2020-12";

// The suite's tests/ directory that holds `draft`.
fs::path suite_root(std::string_view draft) {
  if (draft == kDraft7) return fs::path(SLUICE_SCHEMA_SUITE_DIR);
  return fs::path(SLUICE_SHARED_DIR) / "data/json-schema-test-suite/tests";
}

std::string_view draft_of(std::string_view file) { return file.substr(0, file.find('/')); }

bool suite_present(std::string_view draft) {
  std::error_code ec;
  return fs::is_directory(suite_root(draft) / draft, ec);
}

// Why a draft's cases cannot run: a missing draft7 is a setup error, a missing draft2020-12 a
// skip (its only source is the shared copy).
std::string missing_suite_notice(std::string_view draft) {
  if (draft == kDraft7) {
    return "no draft7 suite at " + (suite_root(draft) / draft).string() +
           ": install Debian's json-schema-test-suite (scripts/bootstrap.sh --with-node does)";
  }
  return "draft2020-12 cases skipped: no JSON-Schema-Test-Suite copy at " +
         (suite_root(draft) / draft).string() + " (set SLUICE_SHARED_DIR to a directory "
         "holding data/json-schema-test-suite)";
}

// "draft2020-12/ref.json" for every top-level file of the draft, sorted; when the draft's
// suite is missing, the one entry "draft2020-12/" so that the test reports it.
std::vector<std::string> suite_files(std::string_view draft) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(suite_root(draft) / draft, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(std::string(draft) + "/" + entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) files.push_back(std::string(draft) + "/");
  return files;
}

bj::value load(const std::string& file) {
  std::ifstream in(suite_root(draft_of(file)) / file);
  std::stringstream text;
  text << in.rdbuf();
  bj::parse_options options;
  options.max_depth = 1024;
  return bj::parse(text.str(), {}, options);
}

const Unsupported* find_unsupported(std::string_view file, std::string_view group) {
  for (const auto& entry : kUnsupported) {
    if (entry.file == file && entry.group == group) return &entry;
  }
  return nullptr;
}

Options options_for(std::string_view file) {
  Options options;
  options.default_dialect = file.starts_with("draft7/") ? Dialect::draft7 : Dialect::draft2020_12;
  return options;
}

struct GroupOutcome {
  std::size_t cases = 0;
  std::size_t passed = 0;
  std::vector<std::string> failures;  // readable, for the test log
};

// Runs one group; a case passes when is_valid() agrees with the suite and validate() agrees
// with is_valid().
GroupOutcome run_group(std::string_view file, const bj::object& group) {
  GroupOutcome outcome;
  const bj::array& tests = group.at("tests").as_array();
  outcome.cases = tests.size();
  auto compiled = Schema::compile(group.at("schema"), options_for(file));
  if (!compiled) {
    outcome.failures.push_back("does not compile: " + compiled.error().message);
    return outcome;
  }
  for (const auto& test : tests) {
    const bj::object& t = test.as_object();
    bool expected = t.at("valid").as_bool();
    bool valid = compiled->is_valid(t.at("data"));
    bool problems_agree = compiled->validate(t.at("data")).empty() == valid;
    if (valid == expected && problems_agree) {
      ++outcome.passed;
      continue;
    }
    outcome.failures.push_back(std::string(t.at("description").as_string()) +
                               (valid != expected ? (expected ? ": rejected a valid instance"
                                                              : ": accepted an invalid instance")
                                                  : ": validate() and is_valid() disagree"));
  }
  return outcome;
}

class SchemaSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(SchemaSuite, EveryRequiredCasePassesOrItsGroupIsListedUnsupported) {
  const std::string& file = GetParam();
  if (file.ends_with("/")) {
    if (draft_of(file) == kDraft7) FAIL() << missing_suite_notice(kDraft7);
    GTEST_SKIP() << missing_suite_notice(draft_of(file));
  }
  bj::value groups = load(file);
  ASSERT_TRUE(groups.is_array()) << file;
  for (const auto& g : groups.as_array()) {
    const bj::object& group = g.as_object();
    std::string_view description = group.at("description").as_string();
    GroupOutcome outcome = run_group(file, group);
    if (find_unsupported(file, description) != nullptr) {
      EXPECT_LT(outcome.passed, outcome.cases)
          << file << " / " << description
          << ": listed as unsupported but every case passes now; remove it from kUnsupported";
      continue;
    }
    for (const auto& failure : outcome.failures) {
      ADD_FAILURE() << file << " / " << description << " / " << failure;
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.ends_with("/")
                         ? info.param + "suite_missing"
                         : info.param.substr(0, info.param.size() - std::string_view(".json").size());
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Draft2020_12, SchemaSuite, ::testing::ValuesIn(suite_files(kDraft2020)),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Draft7, SchemaSuite, ::testing::ValuesIn(suite_files(kDraft7)),
                         test_name);

TEST(SchemaSuiteList, EveryUnsupportedEntryNamesAGroupOfTheSuite) {
  ASSERT_TRUE(suite_present(kDraft7)) << missing_suite_notice(kDraft7);
  for (const auto& entry : kUnsupported) {
    if (!suite_present(draft_of(entry.file))) continue;  // reported by its draft's tests
    bj::value groups = load(std::string(entry.file));
    ASSERT_TRUE(groups.is_array()) << entry.file;
    bool found =
        std::any_of(groups.as_array().begin(), groups.as_array().end(), [&](const bj::value& g) {
          return g.as_object().at("description").as_string() == entry.group;
        });
    EXPECT_TRUE(found) << entry.file << " / " << entry.group << ": no such group";
    EXPECT_FALSE(entry.reason.empty());
  }
}

class SchemaSuiteCounts : public ::testing::TestWithParam<std::string_view> {};

TEST_P(SchemaSuiteCounts, TheSuiteIsPresentAndCountsAreReported) {
  const std::string_view draft = GetParam();
  if (!suite_present(draft)) {
    if (draft == kDraft7) FAIL() << missing_suite_notice(draft);
    GTEST_SKIP() << missing_suite_notice(draft);
  }
  std::size_t cases = 0;
  std::size_t passed = 0;
  std::size_t unsupported_groups = 0;
  std::size_t unsupported_cases = 0;
  for (const auto& file : suite_files(draft)) {
    bj::value groups = load(file);
    for (const auto& g : groups.as_array()) {
      const bj::object& group = g.as_object();
      GroupOutcome outcome = run_group(file, group);
      cases += outcome.cases;
      if (find_unsupported(file, group.at("description").as_string()) != nullptr) {
        ++unsupported_groups;
        unsupported_cases += outcome.cases;
      } else {
        passed += outcome.passed;
      }
    }
  }
  std::cout << "[ suite    ] " << draft << " (" << suite_root(draft).string() << "): " << passed
            << " of " << cases << " cases pass; " << unsupported_cases << " cases in "
            << unsupported_groups << " groups listed unsupported\n";
  EXPECT_GT(cases, 0u) << draft;
  EXPECT_EQ(passed + unsupported_cases, cases) << draft;
}

INSTANTIATE_TEST_SUITE_P(Drafts, SchemaSuiteCounts, ::testing::Values(kDraft2020, kDraft7),
                         [](const ::testing::TestParamInfo<std::string_view>& info) {
                           return info.param == kDraft7 ? std::string("draft7")
                                                        : std::string("draft2020_12");
                         });

}  // namespace
}  // namespace sluice::schema
