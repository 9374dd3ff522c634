#include "config/mcp_json.hpp"

#include "config/detail/fields.hpp"
#include "config/detail/policy_block.hpp"
#include "config/detail/server_entry.hpp"
#include "core/describe.hpp"
#include "core/json.hpp"

#include <fmt/format.h>
#include <boost/json/value.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <system_error>
#include <unordered_set>
#include <utility>

namespace sluice::config {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;
using detail::is_ascii_alnum;
using detail::problem;
using detail::Where;
using detail::wrong_type;

constexpr std::size_t kMaxServerNameLength = 64;
constexpr std::string_view kNameRule =
    "a server name is 1 to 64 of A-Z a-z 0-9 _ . -, starts with a letter or digit, and has no "
    "\"__\" and no trailing \"_\"";
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// The whole file: its server entries, autoStart list and top-level "sluice" block.
class FileParser {
 public:
  FileParser(const fs::path& file, Origin origin, const EnvLookup& lookup)
      : entries_(file, origin, lookup) {}

  core::Result<ConfigFile> parse(const bj::value& root) const {
    const bj::object* obj = root.if_object();
    if (obj == nullptr) return wrong_type({"$"}, "an object", root);
    ConfigFile out;
    detail::UnknownKeys unknown;
    if (const bj::value* servers = obj->if_contains("mcpServers")) {
      const bj::object* entries = servers->if_object();
      if (entries == nullptr) return wrong_type({"$.mcpServers"}, "an object", *servers);
      std::size_t position = 0;
      for (const auto& kv : *entries) {
        Where at{"$.mcpServers.entry", ++position};
        std::string_view name(kv.key().data(), kv.key().size());
        if (!is_valid_server_name(name)) {
          return problem(at, fmt::format("invalid server name ({})", core::describe_text(name)),
                         kNameRule);
        }
        core::Result<ServerConfig> server = entries_.parse(name, kv.value(), at, unknown);
        if (!server) return server.error();
        if (kv.value().as_object().contains("sluice")) out.has_operator_settings = true;
        out.servers.push_back(std::move(*server));
      }
    }
    if (const bj::value* auto_start = obj->if_contains("autoStart")) {
      core::Result<std::vector<std::string>> names = parse_auto_start(*auto_start);
      if (!names) return names.error();
      out.auto_start = std::move(*names);
    }
    if (const bj::value* settings = obj->if_contains("sluice")) {
      core::Result<FilePolicy> policy = detail::parse_gateway_policy(*settings);
      if (!policy) return policy.error();
      out.policy = *policy;
      out.has_operator_settings = true;
    }
    if (std::optional<std::string> w = unknown.warning(entries_.display_file())) {
      out.warnings.push_back(std::move(*w));
    }
    return out;
  }

 private:
  static core::Result<std::vector<std::string>> parse_auto_start(const bj::value& v) {
    Where at{"$.autoStart"};
    const bj::array* arr = v.if_array();
    if (arr == nullptr) return wrong_type(at, "an array of server names", v);
    std::vector<std::string> names;
    std::unordered_set<std::string_view> seen;  // views of the array's own strings
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const bj::string* s = (*arr)[i].if_string();
      if (s == nullptr) return wrong_type(at.index(i), "a server name", (*arr)[i]);
      std::string_view name(s->data(), s->size());
      if (!is_valid_server_name(name)) {
        return problem(at.index(i),
                       fmt::format("invalid server name ({})", core::describe_value((*arr)[i])),
                       kNameRule);
      }
      if (seen.insert(name).second) names.emplace_back(name);
    }
    return names;
  }

  detail::ServerEntryParser entries_;
};

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// Owns one file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

core::Result<std::string> read_whole_file(const fs::path& file, std::size_t max_bytes) {
  // O_NONBLOCK: a FIFO or device named as a config file must not block the open.
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0)
    return core::make_error(fmt::format("cannot be opened ({})", errno_text(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return core::make_error(fmt::format("cannot be read ({})", errno_text(errno)));
  }
  if (!S_ISREG(st.st_mode)) return core::make_error("not a regular file");
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::make_error(fmt::format("cannot be read ({})", errno_text(errno)));
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      return core::make_error(fmt::format("larger than {} bytes", max_bytes));
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  // In place: core::Error is constructible from a std::string too.
  return core::Result<std::string>(boost::system::in_place_value, std::move(text));
}

}  // namespace

bool is_valid_server_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxServerNameLength) return false;
  if (!is_ascii_alnum(name.front()) || name.back() == '_') return false;
  if (name.find("__") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

core::Result<ConfigFile> parse_text(std::string_view text, const fs::path& file, Origin origin,
                                    const EnvLookup& lookup) {
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  auto doc = core::json::parse_strict(text, core::json::ParseLimits{});
  if (!doc) return core::make_error(doc.error().message);
  const bj::value& root = *doc;
  return FileParser(file, origin, lookup).parse(root);
}

core::Result<std::string> read_config_text(const fs::path& file, std::size_t max_bytes) {
  return read_whole_file(file, max_bytes);
}

core::Result<ConfigFile> parse_file(const fs::path& file, Origin origin, const EnvLookup& lookup,
                                    std::size_t max_bytes) {
  core::Result<std::string> text = read_whole_file(file, max_bytes);
  if (!text) return text.error();
  return parse_text(*text, file, origin, lookup);
}

}  // namespace sluice::config