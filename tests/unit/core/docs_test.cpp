// The documentation describes only what is built: every source folder that README.md or a page
// under docs/ names exists and holds sources, and every test docs/invariants.md names as
// holding a rule exists (and every rule there names one).
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<fs::path> doc_pages() {
  const fs::path root(SLUICE_SOURCE_DIR);
  std::vector<fs::path> pages{root / "README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  return pages;
}

// The `src/<folder>/` names in `text`.
std::set<std::string> source_folders_named(const std::string& text) {
  static const re2::RE2 kFolder(R"(\bsrc/([a-z_]+)/)");
  std::set<std::string> folders;
  re2::StringPiece rest(text);
  std::string folder;
  while (re2::RE2::FindAndConsume(&rest, kFolder, &folder)) folders.insert(folder);
  return folders;
}

bool holds_sources(const fs::path& folder) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".cpp") return true;
  }
  return false;
}

TEST(Docs, EverySourceFolderTheDocsNameHoldsSources) {
  std::size_t named = 0;
  for (const fs::path& page : doc_pages()) {
    for (const std::string& folder : source_folders_named(read_text(page))) {
      ++named;
      EXPECT_TRUE(holds_sources(fs::path(SLUICE_SOURCE_DIR) / "src" / folder))
          << page.filename().string() << " names src/" << folder << "/, which holds no sources";
    }
  }
  EXPECT_GT(named, 5u) << "the scan found too few folder names to be looking at the docs";
}

TEST(Docs, AFolderWithoutSourcesIsReported) {
  EXPECT_EQ(source_folders_named("| `src/later/` | later |, see src/core/json.hpp"),
            (std::set<std::string>{"core", "later"}));
  EXPECT_FALSE(holds_sources(fs::path(SLUICE_SOURCE_DIR) / "src" / "later"));
  EXPECT_TRUE(holds_sources(fs::path(SLUICE_SOURCE_DIR) / "src" / "core"));
}

// ---- The tests docs/invariants.md names -------------------------------------------------

// Every test the tree defines: `Suite.Name` for each TEST, TEST_F and TEST_P, `Prefix/Suite`
// for each INSTANTIATE_TEST_SUITE_P, and the ctest name of each add_test(NAME ...).
struct KnownTests {
  std::set<std::string> gtests;          // Suite.Name
  std::set<std::string> instantiations;  // Prefix/Suite
  std::set<std::string> ctests;          // name
};

void add_tests_of(std::string_view text, KnownTests& known) {
  static const re2::RE2 kTest(R"(\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  static const re2::RE2 kInstantiation(R"(\bINSTANTIATE_TEST_SUITE_P\(\s*(\w+)\s*,\s*(\w+))");
  static const re2::RE2 kCtest(R"(\badd_test\(\s*NAME\s+([A-Za-z0-9_.-]+))");
  std::string a, b;
  re2::StringPiece rest(text.data(), text.size());
  while (re2::RE2::FindAndConsume(&rest, kTest, &a, &b)) known.gtests.insert(a + "." + b);
  rest = re2::StringPiece(text.data(), text.size());
  while (re2::RE2::FindAndConsume(&rest, kInstantiation, &a, &b)) {
    known.instantiations.insert(a + "/" + b);
  }
  rest = re2::StringPiece(text.data(), text.size());
  while (re2::RE2::FindAndConsume(&rest, kCtest, &a)) known.ctests.insert(a);
}

KnownTests tests_in_the_tree() {
  KnownTests known;
  const fs::path root(SLUICE_SOURCE_DIR);
  for (const char* dir : {"tests", "tools", "bench"}) {
    std::error_code ec;
    fs::recursive_directory_iterator it(root / dir, ec);
    for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory() && it->path().filename() == "node_modules") {
        it.disable_recursion_pending();
      } else if (it->path().extension() == ".cpp" || it->path().filename() == "CMakeLists.txt") {
        add_tests_of(read_text(it->path()), known);
      }
    }
  }
  return known;
}

bool is_known(const std::string& name, const KnownTests& known) {
  const std::size_t slash = name.find('/');
  if (slash == std::string::npos) return known.gtests.contains(name) || known.ctests.contains(name);
  const std::size_t dot = name.find('.', slash);
  return dot != std::string::npos && known.instantiations.contains(name.substr(0, dot)) &&
         known.gtests.contains(name.substr(slash + 1));
}

// The rules of an invariants page (each `### <id>` heading whose text is one word) with the
// names in backticks of the "Held by:" paragraph under each, in order.
std::vector<std::pair<std::string, std::vector<std::string>>> held_by(const std::string& doc) {
  static const re2::RE2 kName("`([^`]+)`");
  std::vector<std::pair<std::string, std::vector<std::string>>> rules;
  std::istringstream in(doc);
  bool in_held_by = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) in_held_by = false;
    if (line.starts_with("### ") && line.find(' ', 4) == std::string::npos) {
      rules.push_back({line.substr(4), {}});
      continue;
    }
    if (line.empty()) in_held_by = false;
    if (line.starts_with("Held by:")) in_held_by = !rules.empty();
    if (!in_held_by) continue;
    re2::StringPiece rest(line);
    std::string name;
    while (re2::RE2::FindAndConsume(&rest, kName, &name)) rules.back().second.push_back(name);
  }
  return rules;
}

std::string invariants_doc() {
  return read_text(fs::path(SLUICE_SOURCE_DIR) / "docs" / "invariants.md");
}

TEST(Docs, EveryTestTheInvariantsDocNamesExists) {
  const KnownTests known = tests_in_the_tree();
  ASSERT_GT(known.gtests.size(), 300u) << "the scan found too few tests to be looking at tests/";
  std::size_t named = 0;
  for (const auto& [rule, names] : held_by(invariants_doc())) {
    for (const std::string& name : names) {
      ++named;
      EXPECT_TRUE(is_known(name, known))
          << "docs/invariants.md: " << rule << " is held by `" << name << "`, which no test "
          << "in tests/, tools/ or bench/ defines (renamed or moved?)";
    }
  }
  EXPECT_GT(named, 50u) << "the scan found too few test names to be reading the doc";
}

TEST(Docs, EveryRuleInTheInvariantsDocNamesATestThatHoldsIt) {
  const auto rules = held_by(invariants_doc());
  EXPECT_GT(rules.size(), 30u) << "the scan found too few rules to be reading the doc";
  for (const auto& [rule, names] : rules) {
    EXPECT_FALSE(names.empty()) << "docs/invariants.md: " << rule << " names no test that holds it";
  }
}

TEST(Docs, ATestNameThatNoTestDefinesIsReported) {
  KnownTests known;
  // `(` written as \050, so that the scan of tests/ does not take these for tests of the tree.
  add_tests_of(
      "TEST\050Child, LeadsItsOwnSession) {}\nTEST_P\050HostileTable,\n    NoneLeft) {}\n"
      "INSTANTIATE_TEST_SUITE_P\050P6, HostileTable, ::testing::Values(1));\n"
      "add_test\050NAME forbidden_calls_source_scan\n  COMMAND x)\n",
      known);
  EXPECT_TRUE(is_known("Child.LeadsItsOwnSession", known));
  EXPECT_TRUE(is_known("P6/HostileTable.NoneLeft", known));
  EXPECT_TRUE(is_known("HostileTable.NoneLeft", known));
  EXPECT_TRUE(is_known("forbidden_calls_source_scan", known));
  EXPECT_FALSE(is_known("Child.LeadsItsOwnGroup", known));
  EXPECT_FALSE(is_known("P7/HostileTable.NoneLeft", known));
  EXPECT_FALSE(is_known("P6/Child.LeadsItsOwnSession", known));
  EXPECT_FALSE(is_known("forbidden_calls_symbol_scan", known));
}

TEST(Docs, ARuleWithoutHeldByHasNoTests) {
  const auto rules = held_by(
      "## §1 Children\n\n### P1\n\nText `Child.Named` in the rule.\n\nHeld by: `A.B`,\n`C.D`.\n\n"
      "More `E.F`.\n\n### P2\n\nNo tests.\n\n### What health shows\n\n`G.H`\n");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].first, "P1");
  EXPECT_EQ(rules[0].second, (std::vector<std::string>{"A.B", "C.D"}));
  EXPECT_EQ(rules[1].first, "P2");
  EXPECT_TRUE(rules[1].second.empty());
}

}  // namespace
}  // namespace sluice
