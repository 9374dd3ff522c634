#include "cli/trust.hpp"

#include "cli/help.hpp"
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"
#include "config/trust_store.hpp"
#include "core/display.hpp"
#include "core/json.hpp"
#include "core/wall_clock.hpp"

#include <fmt/format.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace sluice::cli {
namespace bj = boost::json;
namespace fs = std::filesystem;

namespace {

// A value from the file, escaped for the terminal on its own (newlines included), so that no
// value can forge a line of the listing.
std::string shown(std::string_view text) { return core::display_safe(text); }

std::string shown(const bj::value& value) { return core::display_safe(bj::serialize(value)); }

// One server of the file as its entry is written: the command and args (or the URL), and the
// names of the variables it sets.
std::string server_lines(std::string_view name, const bj::value& entry) {
  std::string out = fmt::format("  {}:", shown(name));
  const bj::object* o = entry.if_object();
  if (o == nullptr) return out;
  if (const bj::value* url = o->if_contains("url"); url && url->is_string()) {
    out += fmt::format("\n    url: {}", shown(std::string_view(url->get_string())));
  }
  if (const bj::value* command = o->if_contains("command"); command && command->is_string()) {
    out += fmt::format("\n    command: {}", shown(std::string_view(command->get_string())));
  }
  if (const bj::value* args = o->if_contains("args")) out += "\n    args: " + shown(*args);
  if (const bj::value* cwd = o->if_contains("cwd"); cwd && cwd->is_string()) {
    out += fmt::format("\n    cwd: {}", shown(std::string_view(cwd->get_string())));
  }
  if (const bj::value* env = o->if_contains("env"); env && env->is_object()) {
    std::string names;
    for (const auto& kv : env->get_object()) {
      names += (names.empty() ? "" : ", ") + shown(std::string_view(kv.key()));
    }
    if (!names.empty()) out += "\n    env (names): " + names;
  }
  return out;
}

// The project file the current directory (or --project) belongs to, or nullopt.
std::optional<fs::path> project_file(const CommonOptions& options) {
  std::error_code ec;
  std::optional<fs::path> home;
  if (const char* h = std::getenv("HOME"); h && *h) home = h;
  std::optional<fs::path> dir = options.project.empty()
                                    ? config::find_project_dir(fs::current_path(ec), home)
                                    : std::optional<fs::path>(fs::absolute(options.project, ec));
  if (!dir) return std::nullopt;
  return *dir / ".mcp.json";
}

int approve(const TrustLine& line) {
  std::optional<fs::path> given =
      line.path.empty() ? project_file(line.options) : std::optional<fs::path>(line.path);
  if (!given) {
    print_err(
        "sluice trust approve: no project .mcp.json was found from here; give the file's "
        "path");
    return 2;
  }
  const fs::path real = config::real_path_of(*given);
  const std::string where = shown(real.string());
  core::Result<std::string> text = config::read_config_text(real);
  if (!text) {
    print_err(fmt::format("sluice trust approve: {} {}", where, text.error().message));
    return 1;
  }
  core::Result<config::ConfigFile> parsed =
      config::parse_text(*text, real, config::Origin::project, {});
  auto doc = core::json::parse_strict(*text, core::json::ParseLimits{});
  if (!parsed || !doc || !doc->is_object()) {
    print_err(
        fmt::format("sluice trust approve: {} is not a valid .mcp.json ({}); nothing is "
                    "approved",
                    where, parsed ? "not an object" : parsed.error().message));
    return 1;
  }
  const std::string digest = config::content_digest(*text);
  std::string listing =
      fmt::format("{} (sha256 {}) defines {} server(s):", where, digest, parsed->servers.size());
  if (const bj::value* servers = doc->get_object().if_contains("mcpServers");
      servers && servers->is_object()) {
    for (const auto& kv : servers->get_object()) {
      listing += "\n" + server_lines(std::string_view(kv.key()), kv.value());
    }
  }
  print_out(listing);
  config::TrustStore store(state_dir_of(line.options));
  core::Result<void> recorded = store.approve({real.string(), digest, core::unix_ms_now()});
  if (!recorded) {
    print_err("sluice trust approve: " + recorded.error().message);
    return 1;
  }
  print_out(
      fmt::format("approved: sluice may start these servers; any change to the file "
                  "needs a new approval (recorded in {})",
                  shown(store.file().string())));
  return 0;
}

int revoke(const TrustLine& line) {
  const fs::path real = config::real_path_of(line.path);
  config::TrustStore store(state_dir_of(line.options));
  core::Result<bool> removed = store.revoke(real.string());
  if (!removed) {
    print_err("sluice trust revoke: " + removed.error().message);
    return 1;
  }
  if (!*removed) {
    print_err(fmt::format("sluice trust revoke: {} has no approval", shown(real.string())));
    return 1;
  }
  print_out(fmt::format("revoked: the servers of {} are untrusted again", shown(real.string())));
  return 0;
}

// Whether the file at `path` still holds the approved bytes: matches, changed or missing.
std::string file_state(const config::TrustApproval& approval) {
  std::error_code ec;
  if (!fs::exists(approval.path, ec)) return "missing";
  core::Result<std::string> text = config::read_config_text(approval.path);
  if (!text) return "unreadable";
  return config::content_digest(*text) == approval.sha256 ? "matches" : "changed";
}

int list(const TrustLine& line) {
  config::TrustStore store(state_dir_of(line.options));
  core::Result<std::vector<config::TrustApproval>> approvals = store.list();
  if (!approvals) {
    print_err("sluice trust list: " + approvals.error().message);
    return 1;
  }
  auto found = load_config(line.options);  // the pending project file, found as serve finds it
  bj::array approved, pending;
  for (const config::TrustApproval& a : *approvals) {
    approved.push_back(
        bj::object{{"path", a.path},
                   {"approved_at", core::utc_text(std::chrono::system_clock::time_point(
                                       std::chrono::milliseconds(a.approved_at_ms)))},
                   {"state", file_state(a)}});
  }
  using State = config::GatewayConfig::ProjectTrust::State;
  if (found->project_trust && found->project_trust->state == State::untrusted) {
    pending.push_back(
        bj::object{{"path", found->project_trust->path},
                   {"next_step", config::approve_command(found->project_trust->path)}});
  }
  if (line.json) {
    std::string out =
        bj::serialize(bj::object{{"approved", approved}, {"pending", pending}}) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  if (approved.empty()) print_out("no approved project files");
  for (const auto& a : approved) {
    const bj::object& o = a.as_object();
    print_out(fmt::format("approved {}  {}  {}", std::string_view(o.at("approved_at").as_string()),
                          std::string_view(o.at("state").as_string()),
                          std::string_view(o.at("path").as_string())));
  }
  for (const auto& p : pending) {
    const bj::object& o = p.as_object();
    print_out(fmt::format("pending  {}  (not approved; review it, then run: {})",
                          std::string_view(o.at("path").as_string()),
                          std::string_view(o.at("next_step").as_string())));
  }
  return 0;
}

void add_place_options(CLI::App& command, CommonOptions& o) {
  command
      .add_option("--project", o.project,
                  "Project directory (default: walk up from the working directory)")
      ->type_name("DIR");
  command
      .add_option("--state-dir", o.state_dir,
                  "State directory holding trust.json (default $XDG_STATE_HOME/sluice or "
                  "~/.local/state/sluice)")
      ->type_name("DIR");
}

}  // namespace

void add_trust_command(CLI::App& app, TrustLine& line) {
  CLI::App* trust = app.add_subcommand(
      "trust", "Approve project .mcp.json files: their servers run only once approved");
  trust->require_subcommand(1);
  line.list = trust->add_subcommand(
      "list", "Show approved files (and whether they still match) and the pending project file");
  line.list->add_flag("--json", line.json, "Print JSON");
  add_place_options(*line.list, line.options);
  line.approve = trust->add_subcommand(
      "approve", "Show a project file's servers and approve its exact content");
  line.approve->add_option("path", line.path, "The file (default: the project's .mcp.json)")
      ->type_name("PATH");
  add_place_options(*line.approve, line.options);
  line.revoke = trust->add_subcommand("revoke", "Withdraw the approval of a file");
  line.revoke->add_option("path", line.path, "The approved file")->required()->type_name("PATH");
  add_place_options(*line.revoke, line.options);
  set_examples(*line.list, {{"sluice trust list", "Approved files, and the project file if pending"},
                            {"sluice trust list --json", "The same as JSON"}});
  set_examples(*line.approve,
               {{"sluice trust approve", "Review and approve this project's .mcp.json"},
                {"sluice trust approve ~/src/app/.mcp.json", "Approve that file"}});
  set_examples(*line.revoke,
               {{"sluice trust revoke ~/src/app/.mcp.json", "Its servers no longer run"}});
  set_examples(*trust, {{"sluice trust approve", "Let this project's servers run"},
                        {"sluice trust list", "What is approved"}});
}

void add_trust_project_flag(CLI::App& command, CommonOptions& options) {
  command.add_flag("--trust-project", options.trust_project,
                   "Trust the project .mcp.json as it is now, for this run only (nothing is "
                   "recorded; `sluice trust approve` records an approval)");
}

std::optional<int> run_trust_command(const TrustLine& line) {
  if (line.list != nullptr && *line.list) return list(line);
  if (line.approve != nullptr && *line.approve) return approve(line);
  if (line.revoke != nullptr && *line.revoke) return revoke(line);
  return std::nullopt;
}

}  // namespace sluice::cli
