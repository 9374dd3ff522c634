#include "store/token_store.hpp"

#include "core/json.hpp"
#include "store/cache_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cerrno>
#include <utility>
#include <vector>

namespace sluice::store {
namespace bj = boost::json;
namespace {

constexpr int kFormatVersion = 1;

// Closes a descriptor on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

core::Error fail(std::string_view what) { return core::make_error(std::string(what)); }

// The file's text; "" when it does not exist.
core::Result<std::string> read_file(const std::filesystem::path& file) {
  Fd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return core::Result<std::string>(boost::system::in_place_value);
    return fail(errno == ELOOP ? "the token file is a symbolic link; it is not followed"
                               : "the token file cannot be read (not permitted)");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return fail("the token file is not a regular file of yours");
  }
  if ((st.st_mode & 077) != 0) return fail("the token file is readable by others; not used");
  if (static_cast<std::size_t>(st.st_size) > kMaxTokenFileBytes) {
    return fail("the token file is larger than its bound");
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("the token file cannot be read");
    got += static_cast<std::size_t>(n);
  }
  return core::Result<std::string>(boost::system::in_place_value, std::move(text));
}

std::string text_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  const bj::string* s = v != nullptr ? v->if_string() : nullptr;
  return s != nullptr ? std::string(s->data(), s->size()) : std::string();
}

std::optional<TokenRecord> record_of(const bj::value& v) {
  const bj::object* o = v.if_object();
  if (o == nullptr) return std::nullopt;
  TokenRecord r;
  r.server = text_of(*o, "server");
  r.fingerprint = text_of(*o, "fingerprint");
  if (r.server.empty() || r.fingerprint.empty()) return std::nullopt;
  r.issuer = text_of(*o, "issuer");
  r.token_endpoint = text_of(*o, "token_endpoint");
  r.resource = text_of(*o, "resource");
  if (const bj::value* c = o->if_contains("client"); c != nullptr && c->is_object()) {
    const bj::object& client = c->get_object();
    r.client.client_id = text_of(client, "client_id");
    r.client.client_secret = text_of(client, "client_secret");
    r.client.auth_method = text_of(client, "auth_method");
    const bj::value* reg = client.if_contains("registered");
    r.client.registered = reg != nullptr && reg->is_bool() && reg->get_bool();
  }
  r.access_token = text_of(*o, "access_token");
  r.refresh_token = text_of(*o, "refresh_token");
  r.scope = text_of(*o, "scope");
  if (const bj::value* e = o->if_contains("expires_at_ms"); e != nullptr && e->is_int64()) {
    r.expires_at_ms = e->get_int64();
  }
  return r;
}

bj::value value_of(const TokenRecord& r) {
  bj::object client{{"client_id", r.client.client_id},
                    {"client_secret", r.client.client_secret},
                    {"auth_method", r.client.auth_method},
                    {"registered", r.client.registered}};
  return bj::object{{"server", r.server},
                    {"fingerprint", r.fingerprint},
                    {"issuer", r.issuer},
                    {"token_endpoint", r.token_endpoint},
                    {"resource", r.resource},
                    {"client", std::move(client)},
                    {"access_token", r.access_token},
                    {"refresh_token", r.refresh_token},
                    {"scope", r.scope},
                    {"expires_at_ms", r.expires_at_ms}};
}

// Every record in the file's text; a text that is not the format is an error.
core::Result<std::vector<TokenRecord>> parse_records(std::string_view text) {
  std::vector<TokenRecord> out;
  if (text.empty()) return out;
  auto doc = core::json::parse_strict(text, core::json::ParseLimits{});
  if (!doc || !doc->is_object()) return fail("the token file is not valid JSON");
  const bj::value* servers = doc->get_object().if_contains("servers");
  if (servers == nullptr || !servers->is_array()) return fail("the token file has no servers list");
  for (const bj::value& v : servers->get_array()) {
    if (std::optional<TokenRecord> r = record_of(v)) out.push_back(std::move(*r));
  }
  return out;
}

// Writes `records` to a temporary file (0600) and renames it over `file`.
core::Result<void> write_records(const std::filesystem::path& file,
                                 const std::vector<TokenRecord>& records) {
  bj::array list;
  for (const TokenRecord& r : records) list.push_back(value_of(r));
  const std::string text =
      bj::serialize(bj::object{{"version", kFormatVersion}, {"servers", std::move(list)}});
  std::filesystem::path temp = file;
  temp += ".tmp-" + std::to_string(::getpid());
  ::unlink(temp.c_str());
  {
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) return fail("the token file cannot be written (not permitted)");
    std::size_t put = 0;
    while (put < text.size()) {
      ssize_t n = ::write(fd.get(), text.data() + put, text.size() - put);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::unlink(temp.c_str());
        return fail("the token file cannot be written (the disk may be full)");
      }
      put += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd.get(), 0600) != 0 || ::fsync(fd.get()) != 0) {
      ::unlink(temp.c_str());
      return fail("the token file cannot be written (the disk may be full)");
    }
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    ::unlink(temp.c_str());
    return fail("the token file cannot be replaced (not permitted)");
  }
  Fd dir(::open(file.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
  return {};
}

// An exclusive flock of <file>.lock for one read-change-write.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& file) : fd_(open_lock(file)) {
    if (fd_.get() >= 0) {
      while (::flock(fd_.get(), LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  bool held() const { return fd_.get() >= 0; }

 private:
  static int open_lock(const std::filesystem::path& file) {
    std::filesystem::path lock = file;
    lock += ".lock";
    return ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  Fd fd_;  // closing it releases the lock
};

// The records on disk for a change: an unreadable format starts over (its tokens are lost
// either way), a file that is not ours is an error.
core::Result<std::vector<TokenRecord>> records_for_change(const std::filesystem::path& file) {
  core::Result<std::string> text = read_file(file);
  if (!text) return text.error();
  core::Result<std::vector<TokenRecord>> records = parse_records(*text);
  if (!records) return std::vector<TokenRecord>{};
  return records;
}

}  // namespace

TokenStore::TokenStore(std::filesystem::path state_dir)
    : dir_(std::move(state_dir)), file_(dir_.empty() ? dir_ : dir_ / kTokenFileName) {}

core::Result<std::optional<TokenRecord>> TokenStore::load(std::string_view server,
                                                          std::string_view fingerprint) const {
  if (dir_.empty()) return fail("no state directory (HOME is not set)");
  core::Result<std::string> text = read_file(file_);
  if (!text) return text.error();
  core::Result<std::vector<TokenRecord>> records = parse_records(*text);
  if (!records) return records.error();
  for (TokenRecord& r : *records) {
    if (r.server == server && r.fingerprint == fingerprint) {
      return std::optional<TokenRecord>(std::move(r));
    }
  }
  return std::optional<TokenRecord>();
}

core::Result<void> TokenStore::save(const TokenRecord& record) {
  if (std::string problem = detail::prepare_directory(dir_); !problem.empty()) {
    return fail(problem);
  }
  FileLock lock(file_);
  if (!lock.held()) return fail("the token file's lock cannot be taken (not permitted)");
  core::Result<std::vector<TokenRecord>> records = records_for_change(file_);
  if (!records) return records.error();
  std::erase_if(*records, [&](const TokenRecord& r) { return r.server == record.server; });
  records->push_back(record);
  return write_records(file_, *records);
}

core::Result<void> TokenStore::forget(std::string_view server) {
  if (dir_.empty()) return fail("no state directory (HOME is not set)");
  std::error_code ec;
  if (!std::filesystem::exists(dir_, ec)) return {};  // nothing was ever saved
  FileLock lock(file_);
  if (!lock.held()) return fail("the token file's lock cannot be taken (not permitted)");
  core::Result<std::vector<TokenRecord>> records = records_for_change(file_);
  if (!records) return records.error();
  const std::size_t before = records->size();
  std::erase_if(*records, [&](const TokenRecord& r) { return r.server == server; });
  if (records->size() == before) return {};
  return write_records(file_, *records);
}

}  // namespace sluice::store
