#include "cli/help.hpp"

#include <algorithm>
#include <sstream>

namespace sluice::cli {
namespace {

// The name column: options and commands are padded to it, their descriptions follow.
constexpr std::size_t kNameColumn = 30;
// Descriptions never get narrower than this, even beside a long option name (which CLI11
// then puts on a line of its own).
constexpr std::size_t kMinDescription = 20;

std::size_t description_width(std::size_t name_column) {
  return std::max(kMinDescription, kHelpColumns - std::min(kHelpColumns, name_column));
}

}  // namespace

std::string wrap_words(std::string_view text, std::size_t width) {
  std::string out;
  out.reserve(text.size());
  std::size_t line_start = 0;  // in `out`
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '\n') {
      out += '\n';
      line_start = out.size();
      ++pos;
      continue;
    }
    std::size_t end = text.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    const std::size_t line_length = out.size() - line_start;
    if (line_length > 0 && line_length + 1 + word.size() > width) {
      out += '\n';
      line_start = out.size();
    } else if (line_length > 0) {
      out += ' ';
    }
    out += word;
    pos = end;
    while (pos < text.size() && text[pos] == ' ') ++pos;  // runs of spaces become one
  }
  return out;
}

HelpFormatter::HelpFormatter() { column_width(kNameColumn); }

std::string HelpFormatter::make_option_desc(const CLI::Option* option) const {
  return wrap_words(CLI::Formatter::make_option_desc(option), description_width(kNameColumn));
}

std::string HelpFormatter::make_subcommand(const CLI::App* command) const {
  std::stringstream out;
  CLI::detail::format_help(out, command->get_display_name(true),
                           wrap_words(command->get_description(), description_width(kNameColumn)),
                           kNameColumn);
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  std::string text = CLI::Formatter::make_description(app);
  if (text.empty()) return text;
  return wrap_words(text, kHelpColumns);
}

void set_examples(CLI::App& command, std::initializer_list<Example> examples) {
  constexpr std::string_view kIndent = "      ";
  std::string footer = "Examples:";
  for (const Example& example : examples) {
    footer += "\n  ";
    footer += example.command;
    const std::string what = wrap_words(example.what, kHelpColumns - kIndent.size());
    std::size_t from = 0;
    while (from <= what.size()) {
      std::size_t to = std::min(what.find('\n', from), what.size());
      footer += "\n";
      footer += kIndent;
      footer.append(what, from, to - from);
      from = to + 1;
    }
  }
  command.footer(footer);
}

}  // namespace sluice::cli
