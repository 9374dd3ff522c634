// The documentation describes only what is built: every source folder that README.md or a page
// under docs/ names exists and holds sources.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
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
  EXPECT_EQ(source_folders_named("| `src/store/` | later |, see src/core/json.hpp"),
            (std::set<std::string>{"core", "store"}));
  EXPECT_FALSE(holds_sources(fs::path(SLUICE_SOURCE_DIR) / "src" / "store"));
  EXPECT_TRUE(holds_sources(fs::path(SLUICE_SOURCE_DIR) / "src" / "core"));
}

}  // namespace
}  // namespace sluice
