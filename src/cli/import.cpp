#include "cli/import.hpp"

#include "cli/client_files.hpp"
#include "cli/help.hpp"
#include "cli/serve.hpp"
#include "cli/usage.hpp"
#include "config/client_config.hpp"
#include "core/display.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace sluice::cli {
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace {

std::vector<std::string> client_names() {
  std::vector<std::string> names;
  for (config::Client c : config::all_clients()) names.emplace_back(config::client_name(c));
  return names;
}

// The client whose file `path` is, from its name and place, else from its shape.
std::optional<config::Client> guess_client(const fs::path& path, std::string_view text) {
  const std::string name = path.filename().string();
  const std::string parent = path.parent_path().filename().string();
  if (name == ".claude.json" || name == ".mcp.json") return config::Client::claude_code;
  if (name == "claude_desktop_config.json") return config::Client::claude_desktop;
  if (name == "config.toml") return config::Client::codex;
  if (name == "settings.json" && parent == ".gemini") return config::Client::gemini;
  if (name == "mcp.json" && parent == ".cursor") return config::Client::cursor;
  if (name == "mcp.json" && (parent == "User" || parent == ".vscode"))
    return config::Client::vscode;
  config::JsonTextFailure failure;
  std::optional<config::JsonText> json = config::JsonText::parse(std::string(text), true, failure);
  if (!json || !json->value().is_object()) return std::nullopt;
  const bj::object& root = json->value().get_object();
  if (root.contains("servers")) return config::Client::vscode;
  if (root.contains("mcpServers")) return config::Client::claude_code;
  return std::nullopt;
}

void print_report(const ImportLine& line, config::Client client, const fs::path& from,
                  const fs::path& into, const ImportPlan& plan, bool written) {
  if (line.json) {
    bj::object out{{"from", from.string()},
                   {"client", std::string(config::client_name(client))},
                   {"into", into.string()},
                   {"dryRun", line.dry_run},
                   {"written", written}};
    plan_json(plan, out);
    std::string text = bj::serialize(out) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::string out = wrapped(fmt::format("from {} ({}) into {}", config::client_name(client),
                                        from.string(), into.string()),
                            0, 2);
  out += describe_plan(plan);
  if (plan.taken.empty() && plan.skipped.empty()) out += "the file lists no servers\n";
  if (line.dry_run) {
    out += "dry run: nothing was written\n";
  } else if (written) {
    out += wrapped(fmt::format("wrote {}", into.string()), 0, 2);
  } else {
    out += "nothing to write\n";
  }
  if (!plan.taken.empty()) {
    out += wrapped(fmt::format("{} still starts these servers itself; `sluice setup --client {} "
                               "--import` moves them behind sluice instead",
                               config::client_name(client), config::client_name(client)),
                   0, 2);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

int run_import(const ImportLine& line) {
  std::optional<config::Client> named = config::client_by_name(line.from);
  const fs::path from = named ? default_client_path(*named) : fs::path(line.from);
  std::string error;
  std::optional<ClientFile> file = read_client_file(from, error);
  if (file && !file->exists) error = fmt::format("there is no file {}", core::display_path(from));
  if (!file || !file->exists) {
    print_err("sluice import: " + error);
    return 1;
  }
  std::optional<config::Client> client =
      named ? named
            : (line.client.empty() ? guess_client(from, file->text)
                                   : config::client_by_name(line.client));
  if (!client) {
    print_err(
        fmt::format("sluice import: cannot tell which client's file {} is; pass --client "
                    "NAME (see `sluice import --help`)",
                    core::display_path(from)));
    return kUsageExit;
  }
  config::ParsedClientConfig parsed = config::parse_client_config(*client, file->text);
  if (!parsed.document) {
    print_err(fmt::format("sluice import: {}:{}:{}: {}; nothing was imported",
                          core::display_path(from), parsed.failure.line, parsed.failure.column,
                          core::display_safe(parsed.failure.problem)));
    return 1;
  }
  std::optional<UserConfig> user = open_user_config(error);
  if (!user) {
    print_err("sluice import: " + error + "; nothing was imported");
    return 1;
  }
  ImportChoice choice;
  if (!line.project.empty()) choice.project = fs::weakly_canonical(fs::absolute(line.project));
  choice.all_projects = line.all_projects;
  choice.force = line.force;
  ImportPlan plan;
  if (std::optional<std::string> bad =
          plan_import(parsed.document->servers(), choice, user->document, user->file.path, plan)) {
    print_err("sluice import: " + *bad);
    return 1;
  }
  const bool changed = user->document.text() != user->file.text;
  if (!line.dry_run && changed) {
    if (std::optional<std::string> failed = replace_file(user->file, user->document.text(), 0600)) {
      print_err("sluice import: " + *failed);
      return 1;
    }
  }
  print_report(line, *client, from, user->file.path, plan, !line.dry_run && changed);
  return 0;
}

}  // namespace

void add_import_command(CLI::App& app, ImportLine& line) {
  line.command = app.add_subcommand(
      "import",
      "Copy a client's MCP servers into sluice's user config (the client's file is "
      "only read)");
  CLI::App& cmd = *line.command;
  cmd.add_option("--from", line.from,
                 "A client (claude-code, claude-desktop, cursor, vscode, codex, gemini: its own "
                 "file) or the path of a file")
      ->required()
      ->type_name("NAME|PATH");
  cmd.add_option("--client", line.client, "The client whose format PATH is in (default: guessed)")
      ->check(one_of(client_names()))
      ->type_name("NAME");
  cmd.add_option("--project", line.project,
                 "Also take Claude Code's local servers of this project directory")
      ->type_name("DIR");
  cmd.add_flag("--all-projects", line.all_projects,
               "Also take Claude Code's local servers of every project");
  cmd.add_flag("--force", line.force, "Replace a server of the same name in sluice's config");
  cmd.add_flag("--dry-run", line.dry_run, "Report what would be taken; write nothing");
  cmd.add_flag("--json", line.json, "Print the report as JSON");
  set_examples(cmd, {{"sluice import --from claude-code", "Claude Code's user-level servers"},
                     {"sluice import --from claude-code --project ~/src/app",
                      "Those, and the local ones of that project"},
                     {"sluice import --from ./team.json --client cursor --dry-run",
                      "What a file in Cursor's format holds, writing nothing"},
                     {"sluice import --from vscode --json", "The report as JSON"}});
  cmd.footer(cmd.get_footer() +
             wrap_words("\nExit codes: 0 done (some servers may be skipped), 1 the file cannot "
                        "be read or parsed or sluice's config cannot be written, 2 a usage error.",
                        kHelpColumns) +
             "\n");
}

std::optional<int> run_import_command(const ImportLine& line) {
  if (line.command == nullptr || !*line.command) return std::nullopt;
  if (!line.command->remaining().empty()) {
    print_err("sluice import: unexpected argument; see `sluice import --help`");
    return kUsageExit;
  }
  return run_import(line);
}

}  // namespace sluice::cli
