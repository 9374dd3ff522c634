#include "cli/help.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

namespace sluice::cli {
namespace {

std::size_t widest_line(const std::string& text) {
  std::istringstream lines(text);
  std::size_t widest = 0;
  for (std::string line; std::getline(lines, line);) widest = std::max(widest, line.size());
  return widest;
}

TEST(WrapWords, BreaksAtSpacesSoThatNoLinePassesTheWidth) {
  EXPECT_EQ(wrap_words("one two three four", 9), "one two\nthree\nfour");
  EXPECT_EQ(wrap_words("one two", 7), "one two");
}

TEST(WrapWords, KeepsLineBreaksAndLeavesAWordLongerThanTheWidthWhole) {
  EXPECT_EQ(wrap_words("a\nb c", 3), "a\nb c");
  EXPECT_EQ(wrap_words("x ~/.config/sluice/mcp.json y", 8), "x\n~/.config/sluice/mcp.json\ny");
}

TEST(HelpFormatter, WrapsEveryDescriptionWithinEightyColumns) {
  CLI::App app{std::string(120, 'd').replace(40, 1, " "), "tool"};
  app.formatter(std::make_shared<HelpFormatter>());
  std::string sentence;
  for (int i = 0; i < 30; ++i) sentence += "word" + std::to_string(i) + " ";
  app.add_flag("--short", sentence);
  app.add_option("--a-very-long-option-name-indeed", sentence)->type_name("TEXT");
  app.add_subcommand("sub", sentence);
  const std::string help = app.help();
  EXPECT_LE(widest_line(help), kHelpColumns) << help;
  EXPECT_NE(help.find("word29"), std::string::npos) << help;
}

TEST(SetExamples, PutsAnExamplesSectionAtTheEndOfTheHelp) {
  CLI::App app{"a tool", "tool"};
  app.formatter(std::make_shared<HelpFormatter>());
  set_examples(app, {{"tool --x",
                      "Does x, which is explained here in many words so that the "
                      "sentence is longer than one line of eighty columns"}});
  const std::string help = app.help();
  const std::size_t examples = help.find("Examples:\n  tool --x\n      Does x");
  ASSERT_NE(examples, std::string::npos) << help;
  EXPECT_GT(examples, help.find("Options:"));
  EXPECT_LE(widest_line(help), kHelpColumns) << help;
  EXPECT_NE(help.find("the sentence is\n      longer than"), std::string::npos) << help;
}

}  // namespace
}  // namespace sluice::cli
