// The rules the sources keep, checked by scanning them: file and function length, no citation
// of a document outside the repository, every invariant id a comment cites defined in
// docs/invariants.md, time only from core::Clock, and the folder order of the includes.
// Each scan is a function over text, and each has a test that feeds it a violation and sees
// it fire. A failure lists every offending file and line.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cstddef>
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

const fs::path kRoot(SLUICE_SOURCE_DIR);

std::string source_rules_read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string in_repo(const fs::path& path) { return fs::relative(path, kRoot).string(); }

bool is_code_file(const fs::path& path) {
  static const std::set<std::string> kCode{".cpp", ".hpp", ".h", ".in", ".mjs", ".js"};
  return kCode.contains(path.extension().string());
}

bool is_text_file(const fs::path& path) {
  static const std::set<std::string> kText{".cpp", ".hpp", ".h",   ".in",  ".mjs",  ".js",
                                           ".md",  ".sh",  ".txt", ".yml", ".cmake"};
  return kText.contains(path.extension().string()) || path.filename() == "CMakeLists.txt";
}

// Every file under `dir` (relative to the repository) that `keep` accepts, in a stable
// order, skipping the npm trees of the end-to-end and conformance tests.
template <typename Keep>
std::vector<fs::path> files_under(const fs::path& dir, Keep keep) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(kRoot / dir, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory() && it->path().filename() == "node_modules") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && keep(it->path())) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "\n  " + line;
  return out;
}

// ---- File length -------------------------------------------------------------------------

constexpr std::size_t kMaxFileLines = 600;

std::size_t line_count(std::string_view text) {
  std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// ---- Function length ---------------------------------------------------------------------

constexpr std::size_t kMaxFunctionLines = 80;

struct FunctionSpan {
  std::size_t first_line;  // 1-based
  std::size_t lines;
  std::string head;
};

bool starts_with_word(std::string_view line, std::string_view word) {
  return line.starts_with(word) &&
         (line.size() == word.size() || line[word.size()] == ' ' || line[word.size()] == '{');
}

// Google style puts a function definition at column 0 inside its namespaces. A definition
// starts at a column-0 line that is not a comment, a preprocessor line, a closing brace or a
// namespace/struct/class/enum/union/extern line, and whose signature (that line, or it and
// its indented continuation lines) ends with `{` before any line ends with `;`. A
// `template <...>` line of its own is followed by the definition's first line, which counts. It
// ends at the next line that is exactly `}`. A data table (a column-0 initializer such as
// `constexpr std::array<Row, 3> kRows{{`) ends with `};` or `}};` instead, and is not a
// function. Lambdas and members defined inside a class body are indented, so they count
// toward the function or class around them, not on their own.
std::vector<FunctionSpan> functions_over(std::string_view text, std::size_t max_lines) {
  static constexpr std::array<std::string_view, 6> kNotFunctions{"namespace", "struct", "class",
                                                                 "enum",      "union",  "extern"};
  const std::vector<std::string_view> lines = lines_of(text);
  std::vector<FunctionSpan> long_ones;
  std::size_t candidate = 0;  // 1-based line of a possible signature's start, 0 for none
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const bool column0 = !line.empty() && line[0] != ' ' && line[0] != '\t';
    if (line.empty() || line.starts_with("//")) continue;
    if (column0) {
      const bool not_a_function =
          line[0] == '#' || line[0] == '}' ||
          std::any_of(kNotFunctions.begin(), kNotFunctions.end(),
                      [&](std::string_view word) { return starts_with_word(line, word); });
      candidate = not_a_function ? 0 : i + 1;
    }
    if (candidate == 0) continue;
    if (line.ends_with(";")) {
      candidate = 0;
      continue;
    }
    if (!line.ends_with("{")) continue;
    std::size_t end = i + 1;
    while (end < lines.size() && !(lines[end].starts_with("}"))) ++end;
    const bool table = end < lines.size() && lines[end] != "}";
    const std::size_t length = end - (candidate - 1) + 1;
    if (!table && end < lines.size() && length > max_lines) {
      long_ones.push_back({candidate, length, std::string(lines[candidate - 1])});
    }
    candidate = 0;
    i = end;
  }
  return long_ones;
}

// ---- Citations of documents outside the repository ----------------------------------------

// The lines of `text` that cite a document outside the repository: the design notes or the
// gateway invariants kept beside the checkout, or anything in the shared directory beside it.
// In a CMake file the one setting that points the JSON-Schema-Test-Suite data at that
// directory (SLUICE_SHARED_DIR) is data, not a citation.
std::vector<std::size_t> outside_citations(std::string_view text, bool cmake_file) {
  // Written with an octal escape (\056 '.', \055 '-', \057 '/') so that this file does not
  // match its own scan; the same in the tests below.
  static constexpr std::array<std::string_view, 3> kCitations{
      "DESIGN\056md", "GATEWAY\055INVARIANTS", "..\057shared"};
  std::vector<std::size_t> found;
  const std::vector<std::string_view> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (cmake_file && lines[i].find("SLUICE_SHARED_DIR") != std::string_view::npos) continue;
    for (std::string_view citation : kCitations) {
      if (lines[i].find(citation) != std::string_view::npos) {
        found.push_back(i + 1);
        break;
      }
    }
  }
  return found;
}

// ---- Invariant ids -----------------------------------------------------------------------

// The comment text of C++ or JavaScript source: what follows `//` on each line (a `//` right
// after `:` is part of a URL and is skipped), one line of output per line of input.
std::string comments_of(std::string_view code) {
  std::string out;
  for (std::string_view line : lines_of(code)) {
    std::size_t at = line.find("//");
    while (at != std::string_view::npos && at > 0 && line[at - 1] == ':') {
      at = line.find("//", at + 2);
    }
    if (at != std::string_view::npos) out += line.substr(at + 2);
    out += '\n';
  }
  return out;
}

// The invariant ids `text` cites: rule ids (P1, A2, C7: a letter of the three families and a
// number from 1), sections (§1) and restart-path ids (ds_*, gw_*, kill_by_name,
// singleton_takeover).
std::set<std::string> cited_ids(std::string_view text) {
  static const re2::RE2 kId(
      R"((\b[PAC][1-9][0-9]?\b|§[0-9]+|\b(?:ds|gw)_[a-z_]*[a-z]\b|\bkill_by_name\b|)"
      R"(\bsingleton_takeover\b))");
  std::set<std::string> ids;
  re2::StringPiece rest(text.data(), text.size());
  std::string id;
  while (re2::RE2::FindAndConsume(&rest, kId, &id)) ids.insert(id);
  return ids;
}

// The ids docs/invariants.md defines: the first word of each heading (`## §2 Admission`,
// `### A1`, `### ds_refresh`).
std::set<std::string> defined_ids(std::string_view doc) {
  static const re2::RE2 kHeading(R"(^#{1,6} +(\S+))");
  std::set<std::string> ids;
  for (std::string_view line : lines_of(doc)) {
    std::string id;
    if (re2::RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), kHeading, &id)) {
      ids.insert(id);
    }
  }
  return ids;
}

// ---- Time --------------------------------------------------------------------------------

// The lines of `code` that read the steady clock or start a steady timer directly instead of
// through core::Clock and core::Timer (comments are not code and are not looked at).
std::vector<std::size_t> direct_clock_uses(std::string_view code) {
  std::vector<std::size_t> found;
  const std::vector<std::string_view> lines = lines_of(code);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view code_part = lines[i].substr(0, lines[i].find("//"));
    if (code_part.find("steady_clock::now()") != std::string_view::npos ||
        code_part.find("steady_timer") != std::string_view::npos) {
      found.push_back(i + 1);
    }
  }
  return found;
}

// ---- Folder order ------------------------------------------------------------------------

// The folders of src/ from the bottom up: each may include only itself and those before it.
constexpr std::array<std::string_view, 10> kFolderOrder{
    "core", "schema", "rpc", "mcp", "transport", "process", "config", "store", "gateway", "cli"};

std::size_t rank_of(std::string_view folder) {
  return static_cast<std::size_t>(std::find(kFolderOrder.begin(), kFolderOrder.end(), folder) -
                                  kFolderOrder.begin());
}

// The `#include "<folder>/..."` lines of a file in src/<folder>/ that reach a folder above
// it, as "line: folder".
std::vector<std::string> upward_includes(std::string_view folder, std::string_view code) {
  static const re2::RE2 kInclude(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  std::vector<std::string> found;
  const std::vector<std::string_view> lines = lines_of(code);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string included;
    if (!re2::RE2::PartialMatch(re2::StringPiece(lines[i].data(), lines[i].size()), kInclude,
                                &included)) {
      continue;
    }
    if (rank_of(included) < kFolderOrder.size() && rank_of(included) > rank_of(folder)) {
      found.push_back(std::to_string(i + 1) + ": " + included);
    }
  }
  return found;
}

// ---- The rules over the tree -------------------------------------------------------------

std::vector<fs::path> sources() {
  return files_under("src", [](const fs::path& p) {
    return p.extension() == ".cpp" || p.extension() == ".hpp" || p.extension() == ".in";
  });
}

TEST(SourceRules, NoFileInSrcIsOver600Lines) {
  std::vector<std::string> over;
  for (const fs::path& file : sources()) {
    const std::size_t lines = line_count(source_rules_read_text(file));
    if (lines > kMaxFileLines) over.push_back(in_repo(file) + ": " + std::to_string(lines));
  }
  EXPECT_GT(sources().size(), 20u) << "the scan found too few files to be looking at src/";
  EXPECT_TRUE(over.empty()) << "files over " << kMaxFileLines << " lines:" << joined(over);
}

TEST(SourceRules, NoFunctionInSrcIsOver80Lines) {
  std::vector<std::string> over;
  for (const fs::path& file : sources()) {
    if (file.extension() != ".cpp") continue;
    for (const FunctionSpan& f : functions_over(source_rules_read_text(file), kMaxFunctionLines)) {
      over.push_back(in_repo(file) + ":" + std::to_string(f.first_line) + ": " +
                     std::to_string(f.lines) + " lines: " + f.head);
    }
  }
  EXPECT_TRUE(over.empty()) << "functions over " << kMaxFunctionLines << " lines:" << joined(over);
}

// Everything a reader of the repository reads: the sources, the tests (not the npm trees),
// the tools and benchmarks, the docs, the README and the changelog.
std::vector<fs::path> readable_files() {
  std::vector<fs::path> files;
  for (const char* dir : {"src", "tests", "tools", "bench", "docs"}) {
    for (const fs::path& file : files_under(dir, is_text_file)) files.push_back(file);
  }
  for (const char* top : {"README.md", "CHANGELOG.md", "CMakeLists.txt"}) {
    files.push_back(kRoot / top);
  }
  return files;
}

TEST(SourceRules, NoCommentOrDocCitesADocumentOutsideTheRepository) {
  std::vector<std::string> citing;
  for (const fs::path& file : readable_files()) {
    const bool cmake = file.filename() == "CMakeLists.txt" || file.extension() == ".cmake";
    for (std::size_t line : outside_citations(source_rules_read_text(file), cmake)) {
      citing.push_back(in_repo(file) + ":" + std::to_string(line));
    }
  }
  EXPECT_TRUE(citing.empty())
      << "lines that cite a document outside the repository (cite docs/invariants.md, "
         "docs/architecture.md or another page under docs/ instead):"
      << joined(citing);
}

TEST(SourceRules, EveryInvariantIdACommentCitesIsInTheInvariantsDoc) {
  const std::set<std::string> defined =
      defined_ids(source_rules_read_text(kRoot / "docs/invariants.md"));
  ASSERT_TRUE(defined.contains("§1") && defined.contains("P4") && defined.contains("ds_refresh"))
      << "docs/invariants.md does not define the ids it should";
  std::vector<std::string> undefined;
  auto check = [&](const fs::path& file, const std::string& text) {
    const std::vector<std::string_view> lines = lines_of(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      for (const std::string& id : cited_ids(lines[i])) {
        if (!defined.contains(id)) {
          undefined.push_back(in_repo(file) + ":" + std::to_string(i + 1) + ": " + id);
        }
      }
    }
  };
  for (const char* dir : {"src", "tests", "tools", "bench"}) {
    for (const fs::path& file : files_under(dir, is_code_file)) {
      check(file, comments_of(source_rules_read_text(file)));
    }
  }
  for (const fs::path& file : files_under("docs", is_text_file)) {
    if (file.filename() != "invariants.md") check(file, source_rules_read_text(file));
  }
  for (const char* top : {"README.md", "CHANGELOG.md"})
    check(kRoot / top, source_rules_read_text(kRoot / top));
  EXPECT_TRUE(undefined.empty()) << "ids cited but not defined (a heading) in docs/invariants.md:"
                                 << joined(undefined);
}

TEST(SourceRules, TimeComesFromTheOneClock) {
  std::vector<std::string> direct;
  for (const fs::path& file : sources()) {
    if (in_repo(file) == "src/core/clock.hpp") continue;
    for (std::size_t line : direct_clock_uses(source_rules_read_text(file))) {
      direct.push_back(in_repo(file) + ":" + std::to_string(line));
    }
  }
  EXPECT_TRUE(direct.empty())
      << "steady_clock::now() or steady_timer outside core/clock.hpp (use core::Clock::now() "
         "and core::Timer):"
      << joined(direct);
}

TEST(SourceRules, AFolderIncludesOnlyFoldersAboveIt) {
  std::vector<std::string> upward;
  std::size_t scanned = 0;
  for (const fs::path& file : sources()) {
    const fs::path rel = fs::relative(file, kRoot / "src");
    if (rel.begin() == rel.end() || std::next(rel.begin()) == rel.end()) continue;  // main.cpp
    const std::string folder = rel.begin()->string();
    ASSERT_LT(rank_of(folder), kFolderOrder.size())
        << "src/" << folder << "/ is not in the folder order; add it where it belongs";
    ++scanned;
    for (const std::string& include : upward_includes(folder, source_rules_read_text(file))) {
      upward.push_back(in_repo(file) + ":" + include);
    }
  }
  EXPECT_GT(scanned, 20u);
  EXPECT_TRUE(upward.empty()) << "includes of a folder above the including one (order: core, "
                                 "schema, rpc, mcp, transport, process, config, store, gateway, "
                                 "cli):"
                              << joined(upward);
}

// ---- The scans fire on a violation -------------------------------------------------------

TEST(SourceRulesScans, TheLineCountCountsAnUnterminatedLastLine) {
  EXPECT_EQ(line_count(""), 0u);
  EXPECT_EQ(line_count("a\nb\n"), 2u);
  EXPECT_EQ(line_count("a\nb"), 2u);
  EXPECT_EQ(line_count(std::string(601, '\n')), 601u);
}

std::string function_of(std::string_view head, std::size_t body_lines, std::string_view close) {
  std::string text = "namespace sluice {\n\n" + std::string(head) + "\n";
  for (std::size_t i = 0; i < body_lines; ++i) text += "  step();\n";
  text += std::string(close) + "\n\n}  // namespace sluice\n";
  return text;
}

TEST(SourceRulesScans, AFunctionOverTheLimitIsFoundWithItsFirstLine) {
  const std::vector<FunctionSpan> found =
      functions_over(function_of("void Gateway::run(int a) {", 79, "}"), 80);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].first_line, 3u);
  EXPECT_EQ(found[0].lines, 81u);
  EXPECT_EQ(found[0].head, "void Gateway::run(int a) {");
  EXPECT_TRUE(functions_over(function_of("void Gateway::run(int a) {", 78, "}"), 80).empty());
}

TEST(SourceRulesScans, AFunctionWhoseSignatureSpansLinesStartsAtItsFirstLine) {
  const std::vector<FunctionSpan> found =
      functions_over(function_of("asio::awaitable<void> Gateway::invoke(std::string name,\n"
                                 "                                      int timeout) {",
                                 90, "}"),
                     80);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].first_line, 3u);
  EXPECT_EQ(found[0].lines, 93u);
  const std::vector<FunctionSpan> constructor = functions_over(
      function_of("template <typename T>\nLane<T>::Lane(int n)\n    : n_(n) {", 90, "}"), 80);
  ASSERT_EQ(constructor.size(), 1u);
  EXPECT_EQ(constructor[0].first_line, 4u);
  const std::vector<FunctionSpan> one_line_template =
      functions_over(function_of("template <typename T> T Lane<T>::get() {", 90, "}"), 80);
  ASSERT_EQ(one_line_template.size(), 1u);
  EXPECT_EQ(one_line_template[0].first_line, 3u);
}

TEST(SourceRulesScans, ADataTableOrATypeIsNotAFunction) {
  EXPECT_TRUE(
      functions_over(function_of("constexpr std::array<Row, 90> kRows{{", 90, "}};"), 80).empty());
  EXPECT_TRUE(functions_over(function_of("const Table kTable = {", 90, "};"), 80).empty());
  EXPECT_TRUE(functions_over(function_of("struct Row {", 90, "};"), 80).empty());
  EXPECT_TRUE(functions_over(function_of("class Gateway {", 90, "};"), 80).empty());
  EXPECT_TRUE(functions_over(function_of("enum class Phase {", 90, "};"), 80).empty());
  EXPECT_TRUE(functions_over(function_of("namespace detail {", 90, "}"), 80).empty());
  EXPECT_TRUE(functions_over(function_of("extern \"C\" {", 90, "}"), 80).empty());
  // A declaration ends with `;`: the body of the next definition is not counted from it.
  EXPECT_TRUE(functions_over("int f(int a);\n  x {\n" + std::string(90, '\n') + "}\n", 80).empty());
}

TEST(SourceRulesScans, ACitationOfAnOutsideDocumentIsFoundOnItsLine) {
  EXPECT_EQ(outside_citations("ok\n// the rules (GATEWAY\055INVARIANTS §2)\n", false),
            (std::vector<std::size_t>{2}));
  EXPECT_EQ(outside_citations("see DESIGN\056md\n", false), (std::vector<std::size_t>{1}));
  EXPECT_EQ(
      outside_citations("a\nb\n(reference §5 of ..\057shared/reference/conformance.md)", false),
      (std::vector<std::size_t>{3}));
  EXPECT_TRUE(outside_citations("see invariants §2 (docs/invariants.md)\n", false).empty());
}

TEST(SourceRulesScans, OnlyTheSharedDataSettingOfACMakeFileIsExempt) {
  const std::string cmake =
      "set(SLUICE_SHARED_DIR \"${CMAKE_SOURCE_DIR}/..\057shared\" CACHE PATH\n"
      "# a folder links only folders listed above it in DESIGN\056md.\n";
  EXPECT_EQ(outside_citations(cmake, true), (std::vector<std::size_t>{2}));
  EXPECT_EQ(outside_citations(cmake, false), (std::vector<std::size_t>{1, 2}));
}

TEST(SourceRulesScans, CommentsAreReadAndCodeAndUrlsAreNot) {
  EXPECT_EQ(comments_of("int P4 = 1;  // P9: a signal\nauto u = \"http://x\";  // C7\n"),
            " P9: a signal\n C7\n");
}

TEST(SourceRulesScans, CitedIdsAreRulesSectionsAndRestartPaths) {
  EXPECT_EQ(cited_ids(" invariants §2 (A1-A3), C7 then P4; ds_restart_explicit, gw_binary_stale,"
                      " kill_by_name"),
            (std::set<std::string>{"§2", "A1", "A3", "C7", "P4", "ds_restart_explicit",
                                   "gw_binary_stale", "kill_by_name"}));
  EXPECT_TRUE(cited_ids(" C0 controls, AP1, P10x, gw_, ds_").empty());
}

TEST(SourceRulesScans, AnIdWithoutAHeadingIsNotDefined) {
  const std::set<std::string> defined = defined_ids(
      "# Invariants\n\n## §1 Children\n\n### P1\n\nP2 in a sentence\n#### ds_refresh\n");
  EXPECT_TRUE(defined.contains("§1"));
  EXPECT_TRUE(defined.contains("P1"));
  EXPECT_TRUE(defined.contains("ds_refresh"));
  EXPECT_FALSE(defined.contains("P2"));
}

TEST(SourceRulesScans, ADirectSteadyClockOrSteadyTimerIsFound) {
  EXPECT_EQ(direct_clock_uses("auto t = core::Clock::now();\n"
                              "auto u = std::chrono::steady_clock::now();\n"
                              "asio::steady_timer timer(io);\n"
                              "// not asio::steady_timer but core::Timer\n"
                              "std::chrono::steady_clock::time_point at;\n"),
            (std::vector<std::size_t>{2, 3}));
}

TEST(SourceRulesScans, AnIncludeOfAFolderAboveIsFound) {
  const std::string code =
      "#include \"core/json.hpp\"\n#include \"mcp/session.hpp\"\n#include \"gateway/x.hpp\"\n"
      "#include <vector>\n";
  EXPECT_EQ(upward_includes("transport", code), (std::vector<std::string>{"3: gateway"}));
  EXPECT_EQ(upward_includes("core", code), (std::vector<std::string>{"2: mcp", "3: gateway"}));
  EXPECT_TRUE(upward_includes("cli", code).empty());
}

}  // namespace
}  // namespace sluice
