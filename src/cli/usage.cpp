#include "cli/usage.hpp"

#include "cli/serve.hpp"
#include "core/describe.hpp"

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace sluice::cli {
namespace {

// one_of() validators carry the human list of their choices in their name.
constexpr std::string_view kChoicesPrefix = "one of ";

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// A name that may be shown: a letter, then up to 63 letters, digits, '-' or '_'.
bool is_plain_identifier(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return letter(c) || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

// "sluice" or "sluice call".
std::string command_path(const CLI::App& where) {
  if (where.get_parent() == nullptr) return "sluice";
  return command_path(*where.get_parent()) + " " + where.get_name();
}

// The commands a person may use (internal ones have no group).
std::vector<std::string> public_commands(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); })) {
    names.push_back(sub->get_name());
  }
  return names;
}

// The apps to search for an option named in an error: the command being parsed first, then
// the top level, then the other commands.
std::vector<CLI::App*> search_order(CLI::App& app) {
  std::vector<CLI::App*> apps = app.get_subcommands();
  apps.push_back(&app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (std::find(apps.begin(), apps.end(), sub) == apps.end()) apps.push_back(sub);
  }
  return apps;
}

// The option defined on `app` or a command that `message` names (the longest name that
// stands as a word: "--port" is not found in "--port-file"), with its app; only names of
// defined options are ever returned, so nothing from the command line is repeated.
std::pair<CLI::Option*, CLI::App*> named_option(CLI::App& app, std::string_view message) {
  std::pair<CLI::Option*, CLI::App*> best{nullptr, nullptr};
  std::size_t best_length = 0;
  for (CLI::App* a : search_order(app)) {
    for (CLI::Option* option : a->get_options()) {
      const std::string name = option->get_name();
      if (name.size() <= best_length) continue;
      for (std::size_t at = message.find(name); at != std::string_view::npos;
           at = message.find(name, at + 1)) {
        std::size_t end = at + name.size();
        bool starts = at == 0 || message[at - 1] == ' ';
        bool ends = end == message.size() || message[end] == ':' || message[end] == ' ' ||
                    message[end] == ',';
        if (starts && ends) {
          best = {option, a};
          best_length = name.size();
          break;
        }
      }
    }
  }
  return best;
}

// "an integer from 0 to 65535", from the option's check: a one_of() list, CLI::Range's
// description ("INT in [0 - 65535]") or CLI::IsMember's ("{a,b}"); else from its type.
std::string accepted_values(CLI::Option& option) {
  for (int i = 0;; ++i) {
    CLI::Validator* check = nullptr;
    try {
      check = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    const std::string& name = check->get_name();
    if (name.starts_with(kChoicesPrefix)) return name;
    const std::string description = check->get_description();
    const std::size_t in = description.find(" in [");
    const std::size_t dash = description.find(" - ", in);
    if (in != std::string::npos && dash != std::string::npos && description.back() == ']') {
      const std::string_view text(description);
      return fmt::format(
          "{} from {} to {}", text.substr(0, in) == "FLOAT" ? "a number" : "an integer",
          text.substr(in + 5, dash - in - 5), text.substr(dash + 3, text.size() - dash - 4));
    }
    if (description.size() > 2 && description.front() == '{' && description.back() == '}') {
      return "one of " + description.substr(1, description.size() - 2);
    }
  }
  const std::string type = option.get_type_name();
  if (type.starts_with("INT")) return "an integer";
  if (type.starts_with("UINT")) return "an integer of 0 or more";
  if (type.starts_with("FLOAT")) return "a number";
  return "a valid " + type;
}

std::string option_problem(CLI::Option& option, const CLI::App& owner,
                           const CLI::ParseError& error) {
  const std::string name = option.get_name();
  const bool flag = option.get_expected_max() == 0;
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    if (option.get_positional()) return owner.get_name() + " needs " + option.get_type_name();
    return name + " is required";
  }
  if (flag) return name + " takes no value";
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    if (option.count() > 1) return name + " may be given only once";
    return name + " needs a value";
  }
  return name + " must be " + accepted_values(option);
}

// The commands other than `where` that define an option `name`: " (an option of `sluice
// serve`)", or "".
std::string defined_elsewhere(CLI::App& app, const CLI::App& where, const std::string& name) {
  std::vector<std::string> owners;
  for (CLI::App* a : search_order(app)) {
    if (a == &where || a->get_group().empty()) continue;
    if (a->get_option_no_throw(name) != nullptr) owners.push_back("`" + command_path(*a) + "`");
  }
  if (owners.empty()) return "";
  return " (an option of " + join(owners, ", ") + ")";
}

std::string unknown_argument(CLI::App& app, CLI::App& where, const std::string& arg) {
  if (arg.size() > 1 && arg.front() == '-') {
    std::string name = arg.substr(0, arg.find('='));
    std::string_view bare(name);
    bare.remove_prefix(bare.starts_with("--") ? 2 : 1);
    if (!is_plain_identifier(bare)) return "unknown option (" + core::describe_text(arg) + ")";
    return "unknown option " + name + defined_elsewhere(app, where, name);
  }
  if (&where == &app && app.get_subcommands().empty()) {
    const std::string command =
        is_plain_identifier(arg) ? arg : "(" + core::describe_text(arg) + ")";
    return "unknown command " + command + "; the commands are " + join(public_commands(app), ", ");
  }
  return "unexpected argument (" + core::describe_text(arg) + ")";
}

}  // namespace

UsageProblem unclaimed_argument(CLI::App& app) {
  std::vector<CLI::App*> apps{&app};
  for (CLI::App* sub : app.get_subcommands()) apps.push_back(sub);
  for (CLI::App* a : apps) {
    for (const std::string& arg : a->remaining()) {
      if (arg != "--") return {unknown_argument(app, *a, arg), a};  // "--" only ends options
    }
  }
  for (CLI::App* command : app.get_subcommands()) {
    for (CLI::Option* option : app.get_options()) {
      if (option->count() == 0) continue;
      return {option->get_name() + " before `" + command->get_name() +
                  "` is not read; put it after `" + command->get_name() + "`",
              command};
    }
  }
  return {"", &app};
}

CLI::Validator one_of(std::vector<std::string> choices) {
  std::string listed = std::string(kChoicesPrefix) + join(choices, ", ");
  return CLI::Validator(
      [choices = std::move(choices), listed](std::string& text) -> std::string {
        if (std::find(choices.begin(), choices.end(), text) != choices.end()) return {};
        return "must be " + listed;
      },
      "", listed);
}

UsageProblem parse_problem(CLI::App& app, const CLI::ParseError& error) {
  // An argument nobody took comes first: it may be why the rest did not parse.
  if (UsageProblem unclaimed = unclaimed_argument(app); !unclaimed.problem.empty()) {
    return unclaimed;
  }
  auto [option, owner] = named_option(app, error.what());
  if (option != nullptr) return {option_problem(*option, *owner, error), owner};
  std::vector<CLI::App*> commands = app.get_subcommands();
  return {"the command line cannot be read", commands.empty() ? &app : commands.front()};
}

int usage_error(const UsageProblem& usage) {
  print_err(fmt::format("sluice: {}; see `{} --help`", usage.problem, command_path(*usage.where)));
  return kUsageExit;
}

}  // namespace sluice::cli
