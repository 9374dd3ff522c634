#include "cli/setup.hpp"

#include "cli/client_files.hpp"
#include "cli/help.hpp"
#include "cli/serve.hpp"
#include "cli/usage.hpp"
#include "config/client_config.hpp"
#include "core/display.hpp"
#include "core/file_identity.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace sluice::cli {
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace {

void print_raw(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// This binary: `sluice` when the first `sluice` on PATH is this same file in /usr/bin or
// /usr/local/bin (on every PATH, a desktop session's included: a package upgrade keeps
// working), else its absolute path.
config::SluiceLaunch launch_of_this_binary() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string self = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "sluice";
  std::optional<core::FileIdentity> me = core::identity_of(self);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; me && std::getline(dirs, dir, ':');) {
    std::optional<core::FileIdentity> found = core::identity_of(dir + "/sluice");
    if (!found) continue;
    if (found->same_file(*me) && (dir == "/usr/bin" || dir == "/usr/local/bin")) {
      return {"sluice", {"serve"}};
    }
    break;
  }
  return {self, {"serve"}};
}

// A server of `name` in the user scope that does not start sluice.
bool name_is_taken(const config::ClientServers& all, const std::string& name) {
  for (const config::ClientServer& s : all.servers) {
    if (s.name == name && s.scope == "user") return true;
  }
  for (const config::SkippedServer& s : all.skipped) {
    if (s.name == name && s.scope == "user") return true;
  }
  return false;
}

// Whether `text` parses as `client`'s file, starts sluice, and no longer lists `moved`.
bool came_out_right(config::Client client, const std::string& text,
                    const std::vector<config::ClientServer>& moved) {
  config::ParsedClientConfig again = config::parse_client_config(client, text);
  if (!again.document || !again.document->sluice_entry()) return false;
  for (const config::ClientServer& s : again.document->servers().servers) {
    for (const config::ClientServer& m : moved) {
      if (s.name == m.name && s.scope == m.scope) return false;
    }
  }
  return true;
}

std::string diff_of(config::Client client, const fs::path& path, std::string_view before,
                    std::string_view after) {
  return core::display_safe(
      unified_diff(masked_for_display(client, before), masked_for_display(client, after),
                   path.string(), path.string()),
      {.keep_newlines = true});
}

// What setup does to one file: the client's, and sluice's own with --import.
struct SetupEdit {
  config::Client client;
  ClientFile file;
  std::string after;
  std::optional<std::string> existing;  // the entry that already starts sluice
  std::string entry;                    // the entry that starts sluice after the edit
  std::optional<UserConfig> user;
  ImportPlan plan;
};

void print_setup_result(const SetupLine& line, const SetupEdit& edit,
                        const std::optional<fs::path>& backup, bool changed) {
  if (line.json) {
    bj::object out{{"file", edit.file.path.string()},
                   {"client", std::string(config::client_name(edit.client))},
                   {"entry", edit.entry},
                   {"alreadySluice", edit.existing.has_value()},
                   {"changed", changed},
                   {"dryRun", line.dry_run},
                   {"backup", backup ? bj::value(backup->string()) : bj::value(nullptr)}};
    if (edit.user) {
      out["into"] = edit.user->file.path.string();
      plan_json(edit.plan, out);
    }
    print_raw(bj::serialize(out) + "\n");
    return;
  }
  std::string out;
  if (line.dry_run) {
    out += diff_of(edit.client, edit.file.path, edit.file.text, edit.after);
    if (edit.user) {
      out += diff_of(config::Client::claude_desktop, edit.user->file.path, edit.user->file.text,
                     edit.user->document.text());
    }
  }
  if (edit.existing) {
    out += wrapped(
        fmt::format("{} already starts sluice (entry {})", edit.file.path.string(), edit.entry), 0,
        2);
  } else if (!line.dry_run) {
    out +=
        wrapped(fmt::format("{} now starts sluice (entry {}, command {})", edit.file.path.string(),
                            edit.entry, launch_of_this_binary().command),
                0, 2);
  }
  if (edit.user) out += describe_plan(edit.plan);
  if (line.dry_run) {
    out += "dry run: nothing was written\n";
  } else if (!changed) {
    out += "nothing changed\n";
  } else {
    out += wrapped(fmt::format("backup: {}; `sluice setup --client {} --undo` puts it back",
                               backup ? backup->string() : std::string("none"),
                               config::client_name(edit.client)),
                   0, 2);
    out += wrapped(
        fmt::format("restart {} so that it reads the file", config::client_name(edit.client)), 0,
        2);
  }
  print_raw(out);
}

// Writes sluice's file (with --import), then the client's; when the second fails the first is
// put back, so both are written or neither is. The backup is made first.
std::optional<std::string> write_edit(const SetupEdit& edit, std::optional<fs::path>& backup) {
  std::string error;
  backup = write_backup(edit.file, error);
  if (!backup) return error;
  const bool user_changed = edit.user && edit.user->document.text() != edit.user->file.text;
  if (user_changed) {
    if (std::optional<std::string> failed =
            replace_file(edit.user->file, edit.user->document.text(), 0600)) {
      std::error_code ec;
      fs::remove(*backup, ec);
      return failed;
    }
  }
  std::optional<std::string> failed = replace_file(edit.file, edit.after, 0600);
  if (!failed) {
    stamp_backup(*backup, edit.file.real);
    return std::nullopt;
  }
  std::error_code ec;
  fs::remove(*backup, ec);
  if (user_changed) {
    std::optional<ClientFile> now = read_client_file(edit.user->file.path, error);
    if (!edit.user->file.exists) {
      fs::remove(edit.user->file.real, ec);
    } else if (now) {
      replace_file(*now, edit.user->file.text, 0600);
    }
  }
  return failed;
}

// Builds the edit; nullopt with the exit code when it is refused.
std::optional<SetupEdit> plan_setup(const SetupLine& line, config::Client client,
                                    const fs::path& path, int& exit_code) {
  exit_code = 1;
  std::string error;
  std::optional<ClientFile> file = read_client_file(path, error);
  if (!file) {
    print_err("sluice setup: " + error + "; nothing was written");
    return std::nullopt;
  }
  config::ParsedClientConfig parsed = config::parse_client_config(client, file->text);
  if (!parsed.document) {
    print_err(fmt::format("sluice setup: {}:{}:{}: {}; nothing was written",
                          core::display_path(path), parsed.failure.line, parsed.failure.column,
                          core::display_safe(parsed.failure.problem)));
    return std::nullopt;
  }
  SetupEdit edit{client, std::move(*file), {}, parsed.document->sluice_entry(), line.name, {}, {}};
  config::ClientServers found = parsed.document->servers();  // before sluice's entry is added
  std::erase_if(found.skipped, [&](const config::SkippedServer& s) {
    return edit.existing && s.name == *edit.existing && s.scope == "user";
  });
  if (edit.existing) {
    edit.entry = *edit.existing;
  } else if (name_is_taken(found, line.name)) {
    print_err(wrapped(fmt::format("sluice setup: {} has a server named {} that does not start "
                                  "sluice; nothing was written: pass --name OTHER",
                                  path.string(), line.name),
                      0, 2));
    return std::nullopt;
  } else {
    parsed.document->set_sluice_entry(line.name, launch_of_this_binary());
  }
  if (line.import) {
    edit.user = open_user_config(error);
    if (!edit.user) {
      print_err("sluice setup: " + error + "; nothing was written");
      return std::nullopt;
    }
    ImportChoice choice;
    if (!line.project.empty()) choice.project = fs::weakly_canonical(fs::absolute(line.project));
    choice.all_projects = line.all_projects;
    choice.force = line.force;
    if (std::optional<std::string> bad =
            plan_import(found, choice, edit.user->document, edit.user->file.path, edit.plan)) {
      print_err("sluice setup: " + *bad);
      return std::nullopt;
    }
    for (const config::ClientServer& s : edit.plan.taken) {
      parsed.document->remove_server(s.name, s.scope);
    }
  }
  edit.after = parsed.document->text();
  if (!came_out_right(client, edit.after, edit.plan.taken)) {
    print_err(
        fmt::format("sluice setup: the edit of {} did not come out as intended; nothing "
                    "was written",
                    core::display_path(path)));
    return std::nullopt;
  }
  exit_code = 0;
  return edit;
}

int setup(const SetupLine& line, config::Client client, const fs::path& path) {
  int exit_code = 1;
  std::optional<SetupEdit> edit = plan_setup(line, client, path, exit_code);
  if (!edit) return exit_code;
  const bool changed = edit->after != edit->file.text ||
                       (edit->user && edit->user->document.text() != edit->user->file.text);
  std::optional<fs::path> backup;
  if (changed && !line.dry_run) {
    if (std::optional<std::string> failed = write_edit(*edit, backup)) {
      print_err("sluice setup: " + *failed);
      return 1;
    }
  }
  print_setup_result(line, *edit, backup, changed && !line.dry_run);
  return 0;
}

int undo(const SetupLine& line, config::Client client, const fs::path& path) {
  std::string error;
  std::optional<ClientFile> file = read_client_file(path, error);
  if (!file) {
    print_err("sluice setup --undo: " + error);
    return 1;
  }
  std::vector<fs::path> backups = backups_of(file->real);
  if (backups.empty()) {
    print_err(wrapped(fmt::format("sluice setup --undo: there is no backup of {} made by sluice "
                                  "setup",
                                  path.string()),
                      0, 2));
    return 1;
  }
  const fs::path& backup = backups.back();
  if (!unchanged_since_stamp(file->real, backup) && !line.force) {
    print_err(wrapped(fmt::format("sluice setup --undo: {} changed since sluice setup wrote it; "
                                  "nothing was restored: --force puts {} back anyway, and "
                                  "what changed since is lost",
                                  path.string(), backup.string()),
                      0, 2));
    return 1;
  }
  std::optional<ClientFile> saved = read_client_file(backup, error);
  const bool was_missing = saved && saved->text.empty();
  if (line.dry_run) {
    print_raw(diff_of(client, path, file->text, saved ? saved->text : ""));
    print_raw("dry run: nothing was written\n");
    return 0;
  }
  std::error_code ec;
  if (was_missing) {
    fs::remove(file->real, ec);
    fs::remove(backup, ec);
  } else {
    fs::rename(backup, file->real, ec);
  }
  if (ec) {
    print_err(fmt::format("sluice setup --undo: cannot restore {}: {}", core::display_path(path),
                          ec.message()));
    return 1;
  }
  print_raw(wrapped(
      was_missing ? fmt::format("removed {}: it did not exist before sluice setup", path.string())
                  : fmt::format("restored {} from {}", path.string(), backup.string()),
      0, 2));
  return 0;
}

}  // namespace

void add_setup_command(CLI::App& app, SetupLine& line) {
  line.command =
      app.add_subcommand("setup", "Make a client start sluice: edit its own config file");
  CLI::App& cmd = *line.command;
  std::vector<std::string> names;
  for (config::Client c : config::all_clients()) names.emplace_back(config::client_name(c));
  cmd.add_option("--client", line.client,
                 "claude-code, claude-desktop, cursor, vscode, codex or gemini")
      ->required()
      ->check(one_of(names))
      ->type_name("NAME");
  cmd.add_option("--config-file", line.config_file, "Edit this file instead of the client's own")
      ->type_name("FILE");
  cmd.add_option("--name", line.name, "The entry's name in the client's file")
      ->capture_default_str()
      ->type_name("NAME");
  cmd.add_flag("--import", line.import,
               "Also move the client's servers into sluice's user config (out of its file)");
  cmd.add_option("--project", line.project,
                 "With --import: also move Claude Code's local servers of this project")
      ->type_name("DIR");
  cmd.add_flag("--all-projects", line.all_projects,
               "With --import: also move Claude Code's local servers of every project");
  cmd.add_flag("--undo", line.undo, "Put the newest backup of the file back");
  cmd.add_flag("--force", line.force,
               "--import: replace servers of the same name in sluice's config; "
               "--undo: restore even though the file changed since");
  cmd.add_flag("--dry-run", line.dry_run, "Print the diff (values masked); write nothing");
  cmd.add_flag("--json", line.json, "Print what was done as JSON");
  set_examples(cmd, {{"sluice setup --client claude-code --import",
                      "Claude Code starts sluice; its servers move behind sluice"},
                     {"sluice setup --client vscode --dry-run", "The diff, nothing written"},
                     {"sluice setup --client cursor --undo", "Put the backup back"},
                     {"sluice setup --client gemini --config-file .gemini/settings.json",
                      "A project's own settings file"}});
  cmd.footer(cmd.get_footer() +
             wrap_words("\nExit codes: 0 done or nothing to do, 1 refused or failed (nothing "
                        "written), 2 a usage error.",
                        kHelpColumns) +
             "\n");
}

std::optional<int> run_setup_command(const SetupLine& line) {
  if (line.command == nullptr || !*line.command) return std::nullopt;
  if (!line.command->remaining().empty()) {
    print_err("sluice setup: unexpected argument; see `sluice setup --help`");
    return kUsageExit;
  }
  if (line.undo && line.import) {
    print_err("sluice setup: --undo and --import do not go together; see `sluice setup --help`");
    return kUsageExit;
  }
  const config::Client client = *config::client_by_name(line.client);
  const fs::path path =
      line.config_file.empty() ? default_client_path(client) : fs::path(line.config_file);
  return line.undo ? undo(line, client, path) : setup(line, client, path);
}

}  // namespace sluice::cli
