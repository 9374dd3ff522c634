// Every command's --help, as the binary prints it: an Examples section and no line wider than
// 80 columns. The commands come from `sluice --help` itself (and each command's own list of
// commands), so a command added later is checked without editing this file.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::test {
namespace {

// The commands a help text lists under "Subcommands:".
std::vector<std::string> commands_in(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream lines(help);
  bool in_list = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "Subcommands:") {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (!line.empty() && line[0] != ' ') break;
    if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] >= 'a' && line[2] <= 'z') {
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return out;
}

std::vector<std::string> words_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(path);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

class Help : public ::testing::Test {
 protected:
  RunResult help_of(const std::string& path) {
    std::vector<std::string> args = words_of(path);
    args.push_back("--help");
    return run_sluice(args, dir_.path(), dir_.path());
  }
  TempDir dir_;
};

TEST_F(Help, EveryCommandsHelpHasExamplesAndFitsEightyColumns) {
  std::vector<std::string> paths{""};
  for (std::size_t i = 0; i < paths.size(); ++i) {
    RunResult r = help_of(paths[i]);
    const std::string name = "sluice " + paths[i];
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    EXPECT_NE(r.out.find("\nExamples:\n  sluice"), std::string::npos)
        << name << " --help has no Examples section\n"
        << r.out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 80u) << name << " --help:\n" << line;
    }
    for (const std::string& command : commands_in(r.out)) {
      paths.push_back(paths[i].empty() ? command : paths[i] + " " + command);
    }
  }
  // The walk saw the commands of today, nested ones included.
  for (const char* path : {"serve", "call", "init", "secrets set", "trust approve", "auth login"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), path), paths.end()) << path;
  }
}

TEST_F(Help, ACommandsExamplesAreItsOwnNotTheTopLevels) {
  RunResult top = help_of("");
  RunResult init = help_of("init");
  const std::string top_examples = top.out.substr(top.out.find("\nExamples:"));
  const std::string init_examples = init.out.substr(init.out.find("\nExamples:"));
  EXPECT_NE(top_examples, init_examples);
  EXPECT_NE(init_examples.find("sluice init --force"), std::string::npos) << init.out;
}

}  // namespace
}  // namespace sluice::test
