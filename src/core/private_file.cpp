#include "core/private_file.hpp"

#include "core/display.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace sluice::core {
namespace fs = std::filesystem;
namespace {

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

PrivateRead refused(PrivateFileFault fault, unsigned mode = 0) {
  return PrivateRead{std::nullopt, PrivateFileProblem{fault, mode}};
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string describe(const PrivateFileProblem& problem, std::string_view noun,
                     const fs::path& file) {
  const std::string shown = display_safe(file.string());
  switch (problem.fault) {
    case PrivateFileFault::symlink:
      return fmt::format(
          "{} {} is a symbolic link, which sluice does not follow: replace it with the file "
          "itself",
          noun, shown);
    case PrivateFileFault::not_permitted:
      return fmt::format("{} {} cannot be opened or written (not permitted)", noun, shown);
    case PrivateFileFault::not_regular:
      return fmt::format("{} {} is not a regular file", noun, shown);
    case PrivateFileFault::foreign_owner:
      return fmt::format("{} {} belongs to another user: move it away", noun, shown);
    case PrivateFileFault::open_to_others:
      return fmt::format(
          "{} {} is readable or writable by other users (mode {:04o}); run: chmod 600 {}", noun,
          shown, problem.mode & 07777, shown);
    case PrivateFileFault::too_large:
      return fmt::format("{} {} is larger than its bound", noun, shown);
    case PrivateFileFault::unreadable:
      return fmt::format("{} {} cannot be read", noun, shown);
    case PrivateFileFault::disk_full:
      return fmt::format("{} {} cannot be written (the disk may be full)", noun, shown);
  }
  return fmt::format("{} {} cannot be used", noun, shown);
}

PrivateRead read_private_file(const fs::path& file, std::size_t max_bytes) {
  Fd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == ENOENT) return PrivateRead{};
    return refused(errno == ELOOP ? PrivateFileFault::symlink : PrivateFileFault::not_permitted);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return refused(PrivateFileFault::unreadable);
  if (!S_ISREG(st.st_mode)) return refused(PrivateFileFault::not_regular);
  if (st.st_uid != ::geteuid()) return refused(PrivateFileFault::foreign_owner);
  if ((st.st_mode & 077) != 0) {
    return refused(PrivateFileFault::open_to_others, static_cast<unsigned>(st.st_mode));
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    return refused(PrivateFileFault::too_large);
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return refused(PrivateFileFault::unreadable);
    got += static_cast<std::size_t>(n);
  }
  return PrivateRead{std::move(text), std::nullopt};
}

Result<std::string> read_private_text(const fs::path& file, std::size_t max_bytes,
                                      std::string_view noun) {
  PrivateRead read = read_private_file(file, max_bytes);
  if (read.problem) return make_error(describe(*read.problem, noun, file));
  return Result<std::string>(boost::system::in_place_value,
                             std::move(read.text).value_or(std::string()));
}

std::optional<PrivateFileProblem> replace_private_file(const fs::path& file,
                                                       std::string_view bytes) {
  fs::path temp = file;
  temp += ".tmp-" + std::to_string(::getpid());
  ::unlink(temp.c_str());
  {
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) return PrivateFileProblem{PrivateFileFault::not_permitted};
    if (!write_all(fd.get(), bytes) || ::fchmod(fd.get(), 0600) != 0 || ::fsync(fd.get()) != 0) {
      ::unlink(temp.c_str());
      return PrivateFileProblem{PrivateFileFault::disk_full};
    }
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    ::unlink(temp.c_str());
    return PrivateFileProblem{PrivateFileFault::not_permitted};
  }
  Fd dir(::open(file.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
  return std::nullopt;
}

bool make_private_directories(const fs::path& dir) {
  fs::path partial;
  for (const auto& part : dir) {
    partial /= part;
    struct stat st {};
    if (::lstat(partial.c_str(), &st) == 0) continue;
    if (errno != ENOENT || (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) ||
        ::chmod(partial.c_str(), 0700) != 0) {
      return false;
    }
  }
  return true;
}

PrivateFileLock::PrivateFileLock(const fs::path& file) : fd_(-1) {
  fs::path lock = file;
  lock += ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

PrivateFileLock::~PrivateFileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing it releases the lock
}

}  // namespace sluice::core
