#include "cli/secrets.hpp"

#include "cli/help.hpp"
#include "cli/serve.hpp"
#include "cli/usage.hpp"
#include "config/secrets_store.hpp"
#include "core/display.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace sluice::cli {
namespace bj = boost::json;
namespace {

constexpr std::string_view kNameRule = "a secret name is [A-Za-z_][A-Za-z0-9_]*";

config::SecretsStore store() {
  return config::SecretsStore(config::secrets_dir_of(process_environment()));
}

// The signal that interrupted the prompt (0: none). sluice never kills itself, so a signal
// while echo is off only interrupts the read; the command then puts the terminal back and
// returns 128 + the signal's number.
volatile sig_atomic_t g_interrupted = 0;

extern "C" void note_interrupt(int sig) { g_interrupted = sig; }

constexpr int kPromptSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Echo off on the terminal at stdin, and the shutdown signals interrupting a read instead of
// ending the process, until destroyed; then both are put back.
class NoEcho {
 public:
  NoEcho() {
    struct sigaction interrupt {};
    interrupt.sa_handler = note_interrupt;  // no SA_RESTART: read() returns EINTR
    sigemptyset(&interrupt.sa_mask);
    for (std::size_t i = 0; i < std::size(kPromptSignals); ++i) {
      ::sigaction(kPromptSignals[i], &interrupt, &saved_actions_[i]);
    }
    if (::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    struct termios quiet = saved_;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    echo_off_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
  }
  ~NoEcho() {
    if (echo_off_) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
    for (std::size_t i = 0; i < std::size(kPromptSignals); ++i) {
      ::sigaction(kPromptSignals[i], &saved_actions_[i], nullptr);
    }
  }
  NoEcho(const NoEcho&) = delete;
  NoEcho& operator=(const NoEcho&) = delete;

 private:
  struct termios saved_ {};
  bool echo_off_ = false;
  struct sigaction saved_actions_[std::size(kPromptSignals)]{};
};

// The value on stdin: one line on a terminal (prompted on stderr, not echoed), else
// everything up to EOF; one trailing newline (LF or CRLF) is not part of it. nullopt when it
// is longer than the store takes or stdin cannot be read.
std::optional<std::string> read_value(const std::string& name) {
  const bool terminal = ::isatty(STDIN_FILENO) == 1;
  std::optional<NoEcho> quiet;
  if (terminal) {
    const std::string prompt = fmt::format("Value of {} (not shown; Enter ends it): ", name);
    std::fwrite(prompt.data(), 1, prompt.size(), stderr);
    quiet.emplace();
  }
  std::string value;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR && g_interrupted == 0) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    value.append(buf, static_cast<std::size_t>(n));
    if (value.size() > config::kMaxSecretValueBytes + 2) return std::nullopt;
    if (terminal && value.find('\n') != std::string::npos) break;
  }
  if (terminal) {
    quiet.reset();
    std::fputs("\n", stderr);
    if (std::size_t end = value.find('\n'); end != std::string::npos) value.resize(end + 1);
  }
  if (value.ends_with('\n')) value.pop_back();
  if (value.ends_with('\r')) value.pop_back();
  return value;
}

int set_secret(const SecretsLine& line) {
  if (!line.extra.empty() || !line.set->remaining().empty()) {
    print_err(
        "sluice secrets set: the value is read from stdin, never from the command line (other "
        "users and your shell's history see a command line); nothing was saved");
    return kUsageExit;
  }
  if (!config::is_valid_secret_name(line.name)) {
    print_err(fmt::format("sluice secrets set: {}; nothing was saved", kNameRule));
    return kUsageExit;
  }
  std::optional<std::string> value = read_value(line.name);
  if (g_interrupted != 0) {
    print_err("\nsluice secrets set: interrupted; nothing was saved");
    return 128 + g_interrupted;
  }
  if (!value) {
    print_err(fmt::format(
        "sluice secrets set: the value on stdin is longer than {} bytes or cannot be read; "
        "nothing was saved",
        config::kMaxSecretValueBytes));
    return 1;
  }
  if (value->empty()) {
    print_err("sluice secrets set: the value is empty; nothing was saved");
    return 1;
  }
  config::SecretsStore secrets = store();
  if (core::Result<void> saved = secrets.set(line.name, *value); !saved) {
    print_err(fmt::format("sluice secrets set: {}; nothing was saved", saved.error().message));
    return 1;
  }
  print_out(fmt::format("secret {} saved in {}", line.name, secrets.file().string()));
  return 0;
}

int list_secrets(const SecretsLine& line) {
  config::SecretsStore secrets = store();
  core::Result<config::Secrets> all = secrets.load();
  if (!all) {
    print_err("sluice secrets list: " + all.error().message);
    return 1;
  }
  if (line.json) {
    bj::array names;
    for (const auto& entry : *all) names.emplace_back(entry.first);
    std::string text =
        bj::serialize(bj::object{{"file", secrets.file().string()}, {"names", std::move(names)}}) +
        "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  if (all->empty()) {
    print_err(fmt::format("no secrets (the store is {})", secrets.file().string()));
    return 0;
  }
  for (const auto& entry : *all) print_out(entry.first);
  return 0;
}

int remove_secret(const SecretsLine& line) {
  if (!config::is_valid_secret_name(line.name)) {
    print_err(fmt::format("sluice secrets rm: {}", kNameRule));
    return kUsageExit;
  }
  core::Result<bool> removed = store().remove(line.name);
  if (!removed) {
    print_err("sluice secrets rm: " + removed.error().message);
    return 1;
  }
  if (!*removed) {
    print_err(fmt::format("sluice secrets rm: there is no secret named {}", line.name));
    return 1;
  }
  print_out(fmt::format("secret {} removed", line.name));
  return 0;
}

}  // namespace

void add_secrets_command(CLI::App& app, SecretsLine& line) {
  CLI::App* secrets = app.add_subcommand(
      "secrets",
      "Values for ${NAME} in server entries, kept out of config files (names only "
      "are ever shown)");
  secrets->require_subcommand(1);
  line.set = secrets->add_subcommand("set", "Save a secret: the value is read from stdin");
  line.set->add_option("name", line.name, "The secret's name")->required()->type_name("NAME");
  // Anything after the name is taken here, so that it is refused without being repeated.
  line.set->add_option("value", line.extra)->group("");
  line.list = secrets->add_subcommand("list", "Show the names of the secrets");
  line.list->add_flag("--json", line.json, "Print JSON");
  line.rm = secrets->add_subcommand("rm", "Remove a secret");
  line.rm->add_option("name", line.name, "The secret's name")->required()->type_name("NAME");
  set_examples(*line.set, {{"sluice secrets set GITHUB_TOKEN",
                            "Type the value (not echoed); ${GITHUB_TOKEN} in a server's env or "
                            "headers then reads it"},
                           {"gh auth token | sluice secrets set GITHUB_TOKEN",
                            "The value from another command's output"}});
  set_examples(*line.list, {{"sluice secrets list", "The names, one a line"},
                            {"sluice secrets list --json", "The names as JSON"}});
  set_examples(*line.rm, {{"sluice secrets rm GITHUB_TOKEN", "Forget that secret"}});
  set_examples(*secrets, {{"sluice secrets set GITHUB_TOKEN", "Save a value from stdin"},
                          {"sluice secrets list", "Show the names"}});
}

std::optional<int> run_secrets_command(const SecretsLine& line) {
  if (line.set != nullptr && *line.set) return set_secret(line);
  for (CLI::App* command : {line.list, line.rm}) {
    // The parser keeps what nobody took (usage.hpp); it is refused here, not repeated.
    if (command != nullptr && *command && !command->remaining().empty()) {
      print_err(
          fmt::format("sluice secrets {}: unexpected argument; see `sluice secrets {} "
                      "--help`",
                      command->get_name(), command->get_name()));
      return kUsageExit;
    }
  }
  if (line.list != nullptr && *line.list) return list_secrets(line);
  if (line.rm != nullptr && *line.rm) return remove_secret(line);
  return std::nullopt;
}

config::EnvLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    if (const char* v = std::getenv(std::string(name).c_str())) return std::string(v);
    return std::nullopt;
  };
}

config::EnvLookup variable_lookup(std::vector<std::string>& warnings) {
  config::EnvLookup environment = process_environment();
  const std::filesystem::path dir = config::secrets_dir_of(environment);
  if (dir.empty()) return environment;  // no HOME: no store to read
  core::Result<config::Secrets> secrets = config::SecretsStore(dir).load();
  if (!secrets) {
    warnings.push_back(fmt::format("secrets are not used: {}", secrets.error().message));
    return environment;
  }
  if (secrets->empty()) return environment;
  return config::environment_then_secrets(std::move(environment), std::move(*secrets));
}

}  // namespace sluice::cli
