#include "config/secrets_store.hpp"

#include "core/display.hpp"
#include "core/json.hpp"
#include "core/private_file.hpp"

#include <fmt/format.h>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace sluice::config {
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr int kFormatVersion = 1;
constexpr std::size_t kMaxSecretNameLength = 128;

core::Error fail(std::string message) { return core::make_error(std::move(message)); }

std::string shown(const fs::path& path) { return core::display_safe(path.string()); }

std::string mode_text(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

// The directory as it must be: a real directory of yours that only you can enter. Empty when
// it is; else the refusal, with the fix.
std::string directory_problem(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return fmt::format("the secrets directory {} cannot be read (not permitted)", shown(dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    return fmt::format(
        "the secrets directory {} is not a directory (a symbolic link is not followed): "
        "move it away, and sluice creates the directory itself",
        shown(dir));
  }
  if (st.st_uid != ::geteuid()) {
    return fmt::format("the secrets directory {} belongs to another user: move it away",
                       shown(dir));
  }
  if ((st.st_mode & 077) != 0) {
    return fmt::format(
        "the secrets directory {} is open to other users (mode {}); run: chmod 700 {}", shown(dir),
        mode_text(st.st_mode), shown(dir));
  }
  return {};
}

constexpr std::string_view kNoun = "the secrets file";

// The file's text; nullopt when there is no file.
core::Result<std::optional<std::string>> read_text(const fs::path& file) {
  core::PrivateRead read = core::read_private_file(file, kMaxSecretsFileBytes);
  if (read.problem) return fail(core::describe(*read.problem, kNoun, file));
  return std::move(read.text);
}

// {"version": 1, "secrets": {NAME: value, ...}}. The error names the file, never its text.
core::Result<Secrets> parse_secrets(std::string_view text, const fs::path& file) {
  auto not_format = [&](std::string_view why) {
    return fail(
        fmt::format("the secrets file {} is not in sluice's format ({})", shown(file), why));
  };
  auto doc = core::json::parse_strict(text, core::json::ParseLimits{});
  if (!doc) return not_format(doc.error().message);
  const bj::object* root = doc->if_object();
  if (root == nullptr) return not_format("not a JSON object");
  const bj::value* version = root->if_contains("version");
  if (version == nullptr || !version->is_int64() || version->get_int64() != kFormatVersion) {
    return not_format("a version other than 1");
  }
  const bj::value* secrets = root->if_contains("secrets");
  if (secrets == nullptr || !secrets->is_object()) return not_format("no \"secrets\" object");
  Secrets out;
  for (const auto& kv : secrets->get_object()) {
    std::string_view name(kv.key().data(), kv.key().size());
    const bj::string* value = kv.value().if_string();
    if (!is_valid_secret_name(name) || value == nullptr) {
      return not_format("an entry that is not a secret name with a string value");
    }
    out.emplace(std::string(name), std::string(value->data(), value->size()));
  }
  return out;
}

std::string serialize(const Secrets& secrets) {
  bj::object list;
  for (const auto& [name, value] : secrets) list[name] = value;
  return bj::serialize(bj::object{{"version", kFormatVersion}, {"secrets", std::move(list)}});
}

// Writes `secrets` to a temporary file (0600, fsynced) and renames it over `file`.
core::Result<void> replace_file(const fs::path& file, const Secrets& secrets) {
  if (std::optional<core::PrivateFileProblem> problem =
          core::replace_private_file(file, serialize(secrets))) {
    return fail(core::describe(*problem, kNoun, file));
  }
  return {};
}

// The directory, created 0700 (with any missing parent) when it does not exist, then checked.
std::string prepare_directory(const fs::path& dir) {
  if (!core::make_private_directories(dir)) {
    return fmt::format("the secrets directory {} cannot be created (not permitted)", shown(dir));
  }
  return directory_problem(dir);
}

}  // namespace

bool is_valid_secret_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxSecretNameLength) return false;
  auto start = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!start(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

fs::path secrets_dir_of(const EnvLookup& getenv) {
  if (!getenv) return {};
  if (std::optional<std::string> xdg = getenv("XDG_CONFIG_HOME"); xdg && xdg->starts_with('/')) {
    return fs::path(*xdg) / "sluice";
  }
  if (std::optional<std::string> home = getenv("HOME"); home && home->starts_with('/')) {
    return fs::path(*home) / ".config" / "sluice";
  }
  return {};
}

EnvLookup environment_then_secrets(EnvLookup environment, Secrets secrets) {
  return [environment = std::move(environment),
          secrets = std::move(secrets)](std::string_view name) -> std::optional<std::string> {
    if (environment) {
      if (std::optional<std::string> value = environment(name)) return value;
    }
    if (auto it = secrets.find(name); it != secrets.end()) return it->second;
    return std::nullopt;
  };
}

SecretsStore::SecretsStore(fs::path dir)
    : dir_(std::move(dir)), file_(dir_.empty() ? dir_ : dir_ / kSecretsFileName) {}

core::Result<Secrets> SecretsStore::load() const {
  if (dir_.empty()) return fail("no secrets store: neither XDG_CONFIG_HOME nor HOME is set");
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0 && errno == ENOENT) return Secrets{};
  if (std::string problem = directory_problem(dir_); !problem.empty()) return fail(problem);
  core::Result<std::optional<std::string>> text = read_text(file_);
  if (!text) return text.error();
  if (!*text) return Secrets{};
  return parse_secrets(**text, file_);
}

core::Result<void> SecretsStore::set(std::string_view name, std::string_view value) {
  if (!is_valid_secret_name(name)) return fail("a secret name is [A-Za-z_][A-Za-z0-9_]*");
  if (value.empty()) return fail("the value is empty");
  if (value.size() > kMaxSecretValueBytes) {
    return fail(fmt::format("the value is larger than {} bytes", kMaxSecretValueBytes));
  }
  if (value.find('\0') != std::string_view::npos) return fail("the value holds a NUL character");
  if (dir_.empty()) return fail("no secrets store: neither XDG_CONFIG_HOME nor HOME is set");
  if (std::string problem = prepare_directory(dir_); !problem.empty()) return fail(problem);
  core::PrivateFileLock lock(file_);
  if (!lock.held()) {
    return fail(
        fmt::format("the secrets file's lock in {} cannot be taken (not permitted)", shown(dir_)));
  }
  core::Result<Secrets> secrets = load();
  if (!secrets) return secrets.error();
  (*secrets)[std::string(name)] = std::string(value);
  // A value that would not read back (bytes that are not UTF-8) must not break the file.
  if (!parse_secrets(serialize(*secrets), file_)) return fail("the value is not UTF-8 text");
  return replace_file(file_, *secrets);
}

core::Result<bool> SecretsStore::remove(std::string_view name) {
  if (dir_.empty()) return fail("no secrets store: neither XDG_CONFIG_HOME nor HOME is set");
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0 && errno == ENOENT) return false;
  if (std::string problem = directory_problem(dir_); !problem.empty()) return fail(problem);
  core::PrivateFileLock lock(file_);
  if (!lock.held()) {
    return fail(
        fmt::format("the secrets file's lock in {} cannot be taken (not permitted)", shown(dir_)));
  }
  core::Result<Secrets> secrets = load();
  if (!secrets) return secrets.error();
  auto it = secrets->find(name);
  if (it == secrets->end()) return false;
  secrets->erase(it);
  if (core::Result<void> written = replace_file(file_, *secrets); !written) {
    return written.error();
  }
  return true;
}

}  // namespace sluice::config
