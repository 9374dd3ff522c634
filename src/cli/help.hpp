#pragma once
// How every command's --help reads: option and command descriptions wrapped so that no line is
// wider than kHelpColumns, and an "Examples:" section at the end (CLI11's footer).
//
// HelpFormatter: set once on the top-level App before any command is added (CLI11 copies the
// formatter into each command as it is made). Stateless after construction; used on the main
// thread while help is printed.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace sluice::cli {

// The widest line --help prints (an 80-column terminal).
inline constexpr std::size_t kHelpColumns = 80;

// CLI11's formatter with every description wrapped at word boundaries to fit kHelpColumns
// beside the name column (a word longer than the room is left whole on its own line).
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_subcommand(const CLI::App* command) const override;
  std::string make_description(const CLI::App* app) const override;
};

// `text` with its spaces turned into line breaks wherever a line would pass `width`
// characters; existing line breaks are kept.
std::string wrap_words(std::string_view text, std::size_t width);

// One example of a command line and what it does.
struct Example {
  std::string_view command;  // as typed, starting with "sluice"
  std::string_view what;     // one short sentence
};

// Sets `command`'s footer to an "Examples:" section listing `examples`; call it after the
// command's own subcommands are added (CLI11 copies a footer into commands made later).
void set_examples(CLI::App& command, std::initializer_list<Example> examples);

}  // namespace sluice::cli
