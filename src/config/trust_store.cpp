#include "config/trust_store.hpp"

#include "core/hex.hpp"
#include "core/json.hpp"
#include "core/private_file.hpp"

// The digest through SHA256_Init/Update/Final, not EVP (nor the one-shot SHA256(), which is
// EVP inside): EVP loads OpenSSL 3's provider tables on first use, measured at 1.8 MiB of
// resident library pages, in a process that otherwise needs no crypto until a TLS server is
// configured (store/fingerprint.cpp hashes every configured server at start with it). Those
// functions are deprecated in OpenSSL 3.0 in favour of EVP, not removed; API level 1.1.0
// declares them without the deprecation attribute.
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/sha.h>

#include <fmt/format.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <system_error>
#include <utility>

namespace sluice::config {
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr int kTrustFormatVersion = 1;

core::Error trust_error(std::string what) { return core::make_error(std::move(what)); }

constexpr std::string_view kTrustNoun = "the trust file";

std::string text_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  const bj::string* s = v != nullptr ? v->if_string() : nullptr;
  return s != nullptr ? std::string(s->data(), s->size()) : std::string();
}

std::optional<TrustApproval> approval_of(const bj::value& v) {
  const bj::object* o = v.if_object();
  if (o == nullptr) return std::nullopt;
  TrustApproval a;
  a.path = text_of(*o, "path");
  a.sha256 = text_of(*o, "sha256");
  if (a.path.empty() || a.sha256.size() != 64) return std::nullopt;
  if (const bj::value* at = o->if_contains("approved_at_ms"); at != nullptr && at->is_int64()) {
    a.approved_at_ms = at->get_int64();
  }
  return a;
}

core::Result<std::vector<TrustApproval>> parse_approvals(std::string_view text,
                                                         const fs::path& file) {
  std::vector<TrustApproval> out;
  if (text.empty()) return out;
  auto doc = core::json::parse_strict(text, core::json::ParseLimits{});
  const bj::value* files =
      doc && doc->is_object() ? doc->get_object().if_contains("files") : nullptr;
  if (files == nullptr || !files->is_array()) {
    return trust_error(
        fmt::format("the trust file {} is not the format sluice writes", file.string()));
  }
  for (const bj::value& v : files->get_array()) {
    if (std::optional<TrustApproval> a = approval_of(v)) out.push_back(std::move(*a));
  }
  return out;
}

// Creates `dir` and its missing parents 0700 (whatever the umask); refuses one that is not
// the user's own or is writable by others.
core::Result<void> prepare_trust_directory(const fs::path& dir) {
  if (!core::make_private_directories(dir)) {
    return trust_error("the state directory " + dir.string() +
                       " cannot be created (read-only or not permitted)");
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return trust_error("the state directory " + dir.string() +
                       " must be a directory of yours, not writable by others");
  }
  return {};
}

// Writes `approvals` to a temporary file (0600) and renames it over `file`.
core::Result<void> write_approvals(const fs::path& file,
                                   const std::vector<TrustApproval>& approvals) {
  bj::array list;
  for (const TrustApproval& a : approvals) {
    list.push_back(
        bj::object{{"path", a.path}, {"sha256", a.sha256}, {"approved_at_ms", a.approved_at_ms}});
  }
  const std::string text =
      bj::serialize(bj::object{{"version", kTrustFormatVersion}, {"files", std::move(list)}}) +
      "\n";
  if (std::optional<core::PrivateFileProblem> problem = core::replace_private_file(file, text)) {
    return trust_error(core::describe(*problem, kTrustNoun, file));
  }
  return {};
}

bool shell_plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_./+,:@%=-").find(c) != std::string_view::npos;
}

}  // namespace

std::string content_digest(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, bytes.data(), bytes.size());
  SHA256_Final(digest, &ctx);
  return core::to_hex(digest);
}

fs::path real_path_of(const fs::path& file) {
  std::error_code ec;
  fs::path absolute = fs::absolute(file, ec);
  if (ec) absolute = file;
  fs::path real = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : real;
}

std::string approve_command(std::string_view file) {
  std::string out = "sluice trust approve ";
  if (!file.empty() && std::all_of(file.begin(), file.end(), shell_plain)) {
    out += file;
    return out;
  }
  out += '\'';
  for (char c : file) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

TrustStore::TrustStore(fs::path state_dir)
    : dir_(std::move(state_dir)), file_(dir_.empty() ? dir_ : dir_ / kTrustFileName) {}

core::Result<std::vector<TrustApproval>> TrustStore::list() const {
  if (dir_.empty()) return std::vector<TrustApproval>{};
  core::Result<std::string> text = core::read_private_text(file_, kMaxTrustFileBytes, kTrustNoun);
  if (!text) return text.error();
  return parse_approvals(*text, file_);
}

core::Result<bool> TrustStore::approves(std::string_view real_path, std::string_view sha256) const {
  core::Result<std::vector<TrustApproval>> approvals = list();
  if (!approvals) return approvals.error();
  return std::any_of(approvals->begin(), approvals->end(), [&](const TrustApproval& a) {
    return a.path == real_path && a.sha256 == sha256;
  });
}

core::Result<void> TrustStore::approve(const TrustApproval& approval) {
  if (dir_.empty())
    return trust_error("no state directory: set HOME or XDG_STATE_HOME, or give --state-dir");
  if (core::Result<void> dir = prepare_trust_directory(dir_); !dir) return dir;
  core::PrivateFileLock lock(file_);
  if (!lock.held())
    return trust_error("the trust file's lock beside " + file_.string() +
                       " cannot be taken (not permitted)");
  core::Result<std::vector<TrustApproval>> approvals = list();
  if (!approvals) return approvals.error();
  std::erase_if(*approvals, [&](const TrustApproval& a) { return a.path == approval.path; });
  approvals->push_back(approval);
  return write_approvals(file_, *approvals);
}

core::Result<bool> TrustStore::revoke(std::string_view real_path) {
  if (dir_.empty()) return false;
  std::error_code ec;
  if (!fs::exists(file_, ec)) return false;
  core::PrivateFileLock lock(file_);
  if (!lock.held())
    return trust_error("the trust file's lock beside " + file_.string() +
                       " cannot be taken (not permitted)");
  core::Result<std::vector<TrustApproval>> approvals = list();
  if (!approvals) return approvals.error();
  const std::size_t before = approvals->size();
  std::erase_if(*approvals, [&](const TrustApproval& a) { return a.path == real_path; });
  if (approvals->size() == before) return false;
  core::Result<void> written = write_approvals(file_, *approvals);
  if (!written) return written.error();
  return true;
}

}  // namespace sluice::config
