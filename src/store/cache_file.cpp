#include "store/cache_file.hpp"

#include "core/wall_clock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <system_error>

namespace sluice::store::detail {
namespace {

constexpr std::size_t kHeaderBytes = 100;
constexpr std::string_view kMagic{"SQLite format 3\0", 16};
constexpr std::size_t kUserVersionOffset = 60;

// Makes one missing directory 0700: mkdir applies the umask, chmod then sets the mode exactly.
bool make_private_directory(const std::filesystem::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0) return errno == EEXIST;
  return ::chmod(dir.c_str(), 0700) == 0;
}

CacheHeader read_header(int fd, off_t size) {
  CacheHeader header;
  if (size == 0) return header;
  header.kind = CacheHeader::Kind::not_a_database;
  std::array<unsigned char, kHeaderBytes> bytes{};
  if (size < static_cast<off_t>(kHeaderBytes) ||
      ::pread(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()) ||
      std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    return header;
  }
  header.kind = CacheHeader::Kind::database;
  const unsigned char* v = bytes.data() + kUserVersionOffset;
  header.user_version = (std::uint32_t{v[0]} << 24) | (std::uint32_t{v[1]} << 16) |
                        (std::uint32_t{v[2]} << 8) | std::uint32_t{v[3]};
  return header;
}

}  // namespace

std::string prepare_directory(const std::filesystem::path& dir) {
  if (dir.empty()) return "no state directory (HOME is not set)";
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    struct stat st {};
    if (::lstat(partial.c_str(), &st) == 0) continue;
    if (errno != ENOENT || !make_private_directory(partial)) {
      return "the state directory cannot be created (read-only or not permitted)";
    }
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return "the state directory is not a directory";
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "the state directory must belong to you and not be writable by others";
  }
  return {};
}

CacheFileCheck prepare_file(const std::filesystem::path& file) {
  CacheFileCheck check;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    check.problem = errno == ELOOP
                        ? "the cache file is a symbolic link; it is not followed"
                        : "the cache file cannot be opened for writing (read-only file or "
                          "directory, or not permitted)";
    return check;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    check.problem = "the cache file is not a regular file of yours";
  } else if ((st.st_mode & 07777) != 0600 && ::fchmod(fd, 0600) != 0) {
    check.problem = "the cache file's mode cannot be set to 0600";
  } else {
    check.header = read_header(fd, st.st_size);
  }
  ::close(fd);
  return check;
}

std::string move_aside(const std::filesystem::path& file) {
  const auto seconds = core::unix_ms_now() / 1000;
  std::filesystem::path target = file;
  target += ".corrupt-" + std::to_string(seconds);
  std::error_code ec;
  for (int n = 1; n < 100 && std::filesystem::symlink_status(target, ec).type() !=
                                 std::filesystem::file_type::not_found;
       ++n) {
    target = file;
    target += ".corrupt-" + std::to_string(seconds) + "-" + std::to_string(n);
  }
  if (::rename(file.c_str(), target.c_str()) != 0) return {};
  std::filesystem::path wal = file;
  wal += "-wal";
  std::filesystem::path wal_target = target;
  wal_target += "-wal";
  ::rename(wal.c_str(), wal_target.c_str());
  std::filesystem::path shm = file;
  shm += "-shm";
  ::unlink(shm.c_str());
  return target.filename().string();
}

}  // namespace sluice::store::detail
