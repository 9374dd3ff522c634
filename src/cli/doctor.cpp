#include "cli/doctor.hpp"

#include "cli/doctor_checks.hpp"
#include "cli/doctor_probe.hpp"
#include "cli/doctor_report.hpp"
#include "cli/secrets.hpp"
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"
#include "config/secrets_store.hpp"
#include "config/trust_store.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace sluice::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDoctorFooter = R"(Examples:
  sluice doctor                      check everything, explain each problem
  sluice doctor --json               the same as one JSON object
  sluice doctor --project ~/src/app  check that project's .mcp.json too
  sluice doctor --port 8080          check the port the HTTP service will use

Each failed check names the command that fixes it. Nothing is started,
written or signalled. Warnings do not fail the run.

Exit codes:
  0  no check failed (warnings allowed)
  1  at least one check failed
  2  usage error)";

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

// The files whose "sluice" settings count (every file read but the project's and those left
// out), each with the settings it sets, in discovery order.
std::vector<std::pair<std::string, config::FilePolicy>> operator_files(
    const config::GatewayConfig& config) {
  std::vector<std::pair<std::string, config::FilePolicy>> out;
  for (const std::string& file : config.files_read) {
    const bool rejected = std::any_of(config.files_rejected.begin(), config.files_rejected.end(),
                                      [&](const auto& r) { return r.path == file; });
    const bool project =
        config.project_trust && config::real_path_of(file).string() == config.project_trust->path;
    if (rejected || project) continue;
    auto parsed = config::parse_file(file, config::Origin::user, {});
    if (parsed) out.emplace_back(file, std::move(parsed->policy));
  }
  return out;
}

// The long names of the options given on the command line.
std::vector<std::string> flags_given(const CLI::App& command) {
  std::vector<std::string> out;
  for (const CLI::Option* option : command.get_options()) {
    if (option->count() > 0) out.push_back(option->get_name());
  }
  return out;
}

void append(std::vector<doctor::Check>& to, std::vector<doctor::Check>&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

std::vector<doctor::Check> every_check(const DoctorLine& line, const config::GatewayConfig& config,
                                       const fs::path& state) {
  const std::string path = environment("PATH");
  std::error_code ec;
  doctor::ConfigFacts files;
  files.config = &config;
  files.user_config = config::user_config_file_of(process_environment());
  files.cwd = fs::current_path(ec);
  if (!state.empty()) {
    config::TrustStore trust(state);
    files.trust_file = trust.file();
    files.approvals = trust.list();
  }
  std::vector<doctor::Check> checks = doctor::check_config_files(files);

  std::vector<doctor::ServerFacts> servers;
  for (const config::ServerConfig& server : config.servers) {
    servers.push_back(doctor::server_facts(server, path, state));
  }
  append(checks, doctor::check_servers(servers));
  append(checks, doctor::check_private_directory(doctor::state_directory_facts(state)));
  append(checks, doctor::check_private_directory(doctor::secrets_directory_facts(
                     config::secrets_dir_of(process_environment()))));
  append(checks, doctor::check_http_port(doctor::probe_port(line.host, line.port, state)));
  append(checks, doctor::check_binary(doctor::binary_facts(path)));
  return checks;
}

int run_doctor(const DoctorLine& line) {
  const CommonOptions& options = line.options;
  const auto config = load_config(options);
  const fs::path state = state_dir_of(options);
  const std::vector<doctor::Check> checks = every_check(line, *config, state);
  const doctor::SettingSources sources{operator_files(*config), flags_given(*line.command)};
  const std::vector<doctor::Setting> settings =
      doctor::settings_of(options.limits, config->policy, sources);
  // Both reports are built whole: the human one is display-safe already (doctor_report.hpp),
  // the JSON one byte-exact.
  const std::string report =
      line.json ? doctor::json_report(checks, settings) : doctor::human_report(checks, settings);
  std::fwrite(report.data(), 1, report.size(), stdout);
  std::fflush(stdout);
  return doctor::tally(checks).fail == 0 ? 0 : 1;
}

}  // namespace

void add_doctor_command(CLI::App& app, DoctorLine& line) {
  line.options.log_level = "warn";
  line.command = app.add_subcommand(
      "doctor", "Check the setup (config files, servers, state, port, binary) and explain");
  CLI::App& doctor = *line.command;
  doctor.add_flag("--json", line.json, "Print one JSON object (byte-exact) instead of the report");
  doctor.add_option("--host", line.host, "The HTTP service's address whose port to check")
      ->capture_default_str();
  doctor.add_option("--port", line.port, "The HTTP service's port to check")
      ->check(CLI::Range(1, 65535))
      ->type_name("INT")
      ->capture_default_str();
  doctor.footer(kDoctorFooter);
}

std::optional<int> run_doctor_command(const DoctorLine& line) {
  if (line.command == nullptr || !*line.command) return std::nullopt;
  return run_doctor(line);
}

}  // namespace sluice::cli
