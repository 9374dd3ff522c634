#include "gateway/downstream/restart_paths.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::gateway {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The cells of a Markdown table row "| a | b | c |", trimmed.
std::vector<std::string_view> cells_of(std::string_view row) {
  row = trim(row);
  if (row.starts_with('|')) row.remove_prefix(1);
  if (row.ends_with('|')) row.remove_suffix(1);
  std::vector<std::string_view> cells;
  while (true) {
    std::size_t bar = row.find('|');
    cells.push_back(trim(row.substr(0, bar)));
    if (bar == std::string_view::npos) break;
    row.remove_prefix(bar + 1);
  }
  return cells;
}

std::string_view unquote(std::string_view cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return cell;
}

struct DocRow {
  std::string id, restart_class, rule;
};

// The rows of the table headed "| id | class | rule |" in `doc`.
std::vector<DocRow> parse_doc_table(std::string_view doc, std::vector<std::string>& problems) {
  std::vector<DocRow> rows;
  std::vector<std::string_view> lines = lines_of(doc);
  auto header = std::find_if(lines.begin(), lines.end(), [](std::string_view line) {
    return cells_of(line) == std::vector<std::string_view>{"id", "class", "rule"};
  });
  if (header == lines.end() || header + 1 == lines.end()) {
    problems.emplace_back("no table headed | id | class | rule | in the doc");
    return rows;
  }
  for (auto it = header + 2; it != lines.end() && trim(*it).starts_with('|'); ++it) {
    std::vector<std::string_view> cells = cells_of(*it);
    if (cells.size() != 3) {
      problems.push_back("a doc row does not have 3 cells: " + std::string(*it));
      continue;
    }
    rows.push_back({std::string(unquote(cells[0])), std::string(cells[1]), std::string(cells[2])});
  }
  return rows;
}

// Every difference between the doc's table and the compiled registry, one line each;
// empty when they list the same ids, classes and rules in the same order.
std::vector<std::string> doc_mismatches(std::string_view doc) {
  std::vector<std::string> problems;
  std::vector<DocRow> rows = parse_doc_table(doc, problems);
  std::span<const RestartPath> table = restart_paths();

  std::vector<std::string> doc_ids, table_ids;
  std::set<std::string> seen;
  for (const DocRow& row : rows) {
    if (!seen.insert(row.id).second) problems.push_back("listed twice in the doc: " + row.id);
    doc_ids.push_back(row.id);
  }
  for (const RestartPath& path : table) table_ids.emplace_back(path.id);
  auto contains = [](const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (const std::string& id : table_ids) {
    if (!contains(doc_ids, id)) problems.push_back("missing from the doc: " + id);
  }
  for (const std::string& id : doc_ids) {
    if (!contains(table_ids, id)) problems.push_back("not in the compiled table: " + id);
  }

  // Order, over the ids both sides have.
  std::vector<std::string> doc_common, table_common;
  std::copy_if(doc_ids.begin(), doc_ids.end(), std::back_inserter(doc_common),
               [&](const std::string& id) { return contains(table_ids, id); });
  std::copy_if(table_ids.begin(), table_ids.end(), std::back_inserter(table_common),
               [&](const std::string& id) { return contains(doc_ids, id); });
  if (seen.size() == doc_ids.size() && doc_common != table_common) {
    auto [d, t] = std::mismatch(doc_common.begin(), doc_common.end(), table_common.begin());
    problems.push_back("order differs: the doc has " + *d + " where the table has " + *t);
  }

  for (const DocRow& row : rows) {
    auto found = find_restart_path(row.id);
    if (!found) continue;
    const RestartPath& path = **found;
    if (row.restart_class != to_string(path.restart_class)) {
      problems.push_back("class of " + row.id + " differs: doc " + row.restart_class + ", table " +
                         std::string(to_string(path.restart_class)));
    }
    if (row.rule != path.rule) problems.push_back("rule of " + row.id + " differs");
  }
  return problems;
}

std::string restart_paths_doc() {
  return read_text(fs::path(SLUICE_SOURCE_DIR) / "docs" / "restart-paths.md");
}

// `doc` without the first line containing `needle`; fails the test when no line does.
std::string remove_line(const std::string& doc, std::string_view needle) {
  std::size_t at = doc.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  if (at == std::string::npos) return doc;
  std::size_t begin = doc.rfind('\n', at) + 1;
  std::size_t end = doc.find('\n', at);
  std::string out = doc;
  out.erase(begin, end == std::string::npos ? std::string::npos : end + 1 - begin);
  return out;
}

bool mentions(const std::vector<std::string>& problems, std::string_view a, std::string_view b) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& p) {
    return p.find(a) != std::string::npos && p.find(b) != std::string::npos;
  });
}

// The text of every source file under src/ except the registry itself.
std::string code_outside_the_registry() {
  std::string code;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(SLUICE_SOURCE_DIR) / "src")) {
    const fs::path& path = entry.path();
    if (!entry.is_regular_file() || path.stem() == "restart_paths") continue;
    if (path.extension() == ".cpp" || path.extension() == ".hpp") code += read_text(path);
  }
  return code;
}

// The sanctioned recoveries no part of `code` names.
std::vector<std::string> unnamed_recoveries(const std::string& code) {
  std::vector<std::string> unnamed;
  for (const RestartPath& path : restart_paths()) {
    if (path.restart_class != RestartClass::sanctioned_narrow_recovery) continue;
    if (code.find(path.id) == std::string::npos) unnamed.emplace_back(path.id);
  }
  return unnamed;
}

// A sanctioned recovery is a path sluice takes, and the code that takes it names it; a row for
// a recovery nothing implements would tell the reader sluice does what it cannot.
TEST(RestartPaths, EverySanctionedRecoveryIsNamedByTheCodeThatTakesIt) {
  EXPECT_EQ(unnamed_recoveries(code_outside_the_registry()), std::vector<std::string>{});
}

TEST(RestartPaths, ARecoveryTheCodeDoesNotNameIsReported) {
  std::string code = code_outside_the_registry();
  for (std::size_t at = code.find("ds_refresh"); at != std::string::npos;
       at = code.find("ds_refresh", at)) {
    code.replace(at, std::string_view("ds_refresh").size(), "ds_other");
  }
  EXPECT_EQ(unnamed_recoveries(code), std::vector<std::string>{"ds_refresh"});
}

TEST(RestartPaths, DocListsTheCompiledIdsClassesAndRulesInOrder) {
  std::string doc = restart_paths_doc();
  ASSERT_FALSE(doc.empty()) << "docs/restart-paths.md is missing or empty";
  std::vector<std::string> problems = doc_mismatches(doc);
  for (const std::string& p : problems) ADD_FAILURE() << p;

  std::vector<std::string> none;
  std::vector<DocRow> rows = parse_doc_table(doc, none);
  ASSERT_EQ(rows.size(), restart_paths().size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, restart_paths()[i].id);
    EXPECT_EQ(rows[i].restart_class, to_string(restart_paths()[i].restart_class));
  }
}

// Every restart rule that sluice implements, in the order of the rules.
TEST(RestartPaths, TableHasEveryRowOfTheInvariantsInTheirOrder) {
  const std::vector<std::string_view> expected = {"gw_self_reexec",
                                                  "gw_exit_from_request_path",
                                                  "gw_startup_stop",
                                                  "gw_binary_stale",
                                                  "gw_shutdown",
                                                  "ds_restart_explicit",
                                                  "ds_auto_restart_after_exit",
                                                  "ds_external_kill",
                                                  "ds_stale_code",
                                                  "ds_refresh",
                                                  "ds_idle_stop",
                                                  "ds_config_reload",
                                                  "kill_by_name",
                                                  "ds_kill_to_cancel",
                                                  "singleton_takeover"};
  std::vector<std::string_view> ids;
  for (const RestartPath& path : restart_paths()) ids.push_back(path.id);
  EXPECT_EQ(ids, expected);
}

TEST(RestartPaths, IdsAreUniqueAndRulesAreSingleNonEmptyLines) {
  std::set<std::string_view> ids;
  for (const RestartPath& path : restart_paths()) {
    EXPECT_TRUE(ids.insert(path.id).second) << path.id;
    EXPECT_FALSE(path.rule.empty()) << path.id;
    EXPECT_EQ(path.rule.find('\n'), std::string_view::npos) << path.id;
    EXPECT_EQ(path.rule.find('|'), std::string_view::npos) << path.id;
  }
}

TEST(RestartPaths, ClassesAreTheOnesTheInvariantsName) {
  auto class_of = [](std::string_view id) { return find_restart_path(id).value()->restart_class; };
  EXPECT_EQ(class_of("gw_self_reexec"), RestartClass::forbidden);
  EXPECT_EQ(class_of("gw_startup_stop"), RestartClass::guarded_fail_closed);
  EXPECT_EQ(class_of("gw_shutdown"), RestartClass::host_residual);
  EXPECT_EQ(class_of("ds_refresh"), RestartClass::sanctioned_narrow_recovery);
  EXPECT_EQ(class_of("singleton_takeover"), RestartClass::forbidden_live_sanctioned_released);
  EXPECT_EQ(to_string(RestartClass::forbidden_live_sanctioned_released), "forbidden / sanctioned");
}

TEST(RestartPaths, UnknownIdIsAnErrorThatDoesNotRepeatTheId) {
  auto found = find_restart_path("gw_secret_reexec_path");
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().message.find("gw_secret_reexec_path"), std::string::npos);
  EXPECT_FALSE(found.error().message.empty());
  EXPECT_FALSE(find_restart_path("").has_value());
  EXPECT_FALSE(find_restart_path("GW_SHUTDOWN").has_value());
}

// Guard the guard: the comparison notices each kind of drift between doc and table.

TEST(RestartPathsDocComparison, ReportsARowMissingFromTheDoc) {
  std::string doc = remove_line(restart_paths_doc(), "| `ds_refresh` |");
  std::vector<std::string> problems = doc_mismatches(doc);
  EXPECT_TRUE(mentions(problems, "missing from the doc", "ds_refresh"));
  EXPECT_EQ(problems.size(), 1u);
}

TEST(RestartPathsDocComparison, ReportsAnExtraRowInTheDoc) {
  std::string doc = restart_paths_doc();
  std::size_t at = doc.find("| `gw_shutdown` |");
  ASSERT_NE(at, std::string::npos);
  doc.insert(at, "| `gw_hot_swap` | sanctioned_narrow_recovery | swap the binary in place |\n");
  std::vector<std::string> problems = doc_mismatches(doc);
  EXPECT_TRUE(mentions(problems, "not in the compiled table", "gw_hot_swap"));
  EXPECT_EQ(problems.size(), 1u);
}

TEST(RestartPathsDocComparison, ReportsAChangedClass) {
  std::string doc = restart_paths_doc();
  std::size_t at = doc.find("| `gw_shutdown` | host_residual |");
  ASSERT_NE(at, std::string::npos);
  doc.replace(at, std::string_view("| `gw_shutdown` | host_residual |").size(),
              "| `gw_shutdown` | sanctioned_narrow_recovery |");
  std::vector<std::string> problems = doc_mismatches(doc);
  EXPECT_TRUE(mentions(problems, "class of gw_shutdown", "sanctioned_narrow_recovery"));
  EXPECT_EQ(problems.size(), 1u);
}

TEST(RestartPathsDocComparison, ReportsRowsInAnotherOrderAndADuplicate) {
  std::string doc = restart_paths_doc();
  std::size_t first = doc.find("| `kill_by_name` |");
  std::size_t second = doc.find("| `ds_kill_to_cancel` |");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  std::size_t second_end = doc.find('\n', second) + 1;
  std::string moved = doc.substr(second, second_end - second);
  std::string swapped = doc;
  swapped.erase(second, second_end - second);
  swapped.insert(first, moved);
  EXPECT_TRUE(mentions(doc_mismatches(swapped), "order differs", "ds_kill_to_cancel"));

  std::string twice = doc;
  twice.insert(first, moved);
  EXPECT_TRUE(mentions(doc_mismatches(twice), "listed twice", "ds_kill_to_cancel"));
}

TEST(RestartPathsDocComparison, ReportsADocWithoutTheTable) {
  EXPECT_TRUE(mentions(doc_mismatches("# Restart paths\n\nNo table here.\n"), "no table", "id"));
}

}  // namespace
}  // namespace sluice::gateway
