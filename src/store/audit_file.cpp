// The audit log's file (store::open_audit_file): opened with its checks, written whole lines
// at a time, rotated by size. Runs on the audit log's writer thread only.
#include "store/audit_log.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

namespace sluice::store {
namespace {

constexpr int kOpenFlags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

class AuditFile final : public AuditSink {
 public:
  explicit AuditFile(AuditFileOptions options) : options_(std::move(options)) {}
  ~AuditFile() override { close_fd(); }
  AuditFile(const AuditFile&) = delete;
  AuditFile& operator=(const AuditFile&) = delete;

  std::string open() override;
  std::size_t write(std::string_view lines, std::size_t count) override;
  std::string problem() const override { return problem_; }
  std::uint64_t rotations() const override { return rotations_; }

 private:
  std::string path_text() const { return options_.path.string(); }
  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Opens the path (creating it 0600 when `create`); empty, or the problem.
  std::string open_path();
  // Reopens when another process rotated the file away from under this one's descriptor.
  void follow_rotation();
  bool rotate();
  // Writes `data` whole, waiting at most kAuditFifoWait for room in a FIFO.
  bool write_all(std::string_view data);

  AuditFileOptions options_;
  int fd_ = -1;
  bool regular_ = true;
  std::uint64_t size_ = 0;  // of the open file, as last seen
  std::uint64_t rotations_ = 0;
  bool mid_line_ = false;  // a failed write stopped inside a line
  std::string problem_;
};

std::string errno_text(int err) { return std::strerror(err); }

// Makes `dir` and every missing parent 0700, whatever the umask.
std::error_code make_private_dirs(const std::filesystem::path& dir) {
  std::error_code ec;
  if (dir.empty() || std::filesystem::is_directory(dir, ec)) return {};
  if (std::error_code up = make_private_dirs(dir.parent_path())) return up;
  if (::mkdir(dir.c_str(), 0700) == 0) {
    ::chmod(dir.c_str(), 0700);
  } else if (errno != EEXIST) {
    return {errno, std::generic_category()};
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return std::make_error_code(std::errc::not_a_directory);
  }
  return {};
}

std::string AuditFile::open() {
  if (std::error_code ec = make_private_dirs(options_.path.parent_path())) {
    return fmt::format("cannot make the directory of {}: {}", path_text(), ec.message());
  }
  problem_ = open_path();
  return problem_;
}

std::string AuditFile::open_path() {
  close_fd();
  const std::string path = path_text();
  // Created here: exactly 0600 whatever the umask (fchmod). Else an existing file, checked.
  int fd = ::open(path.c_str(), kOpenFlags | O_CREAT | O_EXCL, 0600);
  const bool created = fd >= 0;
  if (created) {
    ::fchmod(fd, 0600);
  } else if (errno == EEXIST) {
    fd = ::open(path.c_str(), kOpenFlags);
  }
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return fmt::format("{} is a symbolic link; give the file itself", path);
    if (err == ENXIO) return fmt::format("{} is a FIFO that no process reads", path);
    return fmt::format("cannot open {}: {}", path, errno_text(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return fmt::format("{} is not a regular file", path);
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return fmt::format("{} belongs to another user; remove it or give another file", path);
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return fmt::format("{} is open to other users (mode {:04o}); run: chmod 600 {}", path,
                       st.st_mode & 07777, path);
  }
  fd_ = fd;
  regular_ = S_ISREG(st.st_mode);
  size_ = static_cast<std::uint64_t>(st.st_size);
  return "";
}

void AuditFile::follow_rotation() {
  if (!regular_ || fd_ < 0) return;
  struct stat mine {};
  struct stat named {};
  if (::fstat(fd_, &mine) != 0) return;
  size_ = static_cast<std::uint64_t>(mine.st_size);
  if (::lstat(path_text().c_str(), &named) == 0 && named.st_ino == mine.st_ino &&
      named.st_dev == mine.st_dev) {
    return;
  }
  if (std::string why = open_path(); !why.empty()) problem_ = std::move(why);
}

bool AuditFile::rotate() {
  const std::string base = path_text();
  auto numbered = [&](std::size_t n) { return fmt::format("{}.{}", base, n); };
  if (options_.keep == 0) {
    ::unlink(base.c_str());
  } else {
    for (std::size_t n = options_.keep; n > 1; --n) {
      ::rename(numbered(n - 1).c_str(), numbered(n).c_str());  // a missing one is fine
    }
    if (::rename(base.c_str(), numbered(1).c_str()) != 0 && errno != ENOENT) {
      problem_ = fmt::format("cannot rotate {}: {}", base, errno_text(errno));
      return false;
    }
  }
  ++rotations_;
  if (std::string why = open_path(); !why.empty()) {
    problem_ = std::move(why);
    return false;
  }
  return true;
}

bool AuditFile::write_all(std::string_view data) {
  const auto deadline = core::Clock::now() + kAuditFifoWait;
  std::size_t off = 0;
  // Bytes went out but not the line's end: the next write starts a new line first.
  auto failed = [&] {
    if (off > 0) mid_line_ = data[off - 1] != '\n';
    size_ += off;
    return false;
  };
  while (off < data.size()) {
    ssize_t n = ::write(fd_, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - core::Clock::now()).count();
      pollfd pfd{fd_, POLLOUT, 0};
      if (left > 0 && ::poll(&pfd, 1, static_cast<int>(left)) > 0) continue;
      problem_ =
          fmt::format("{} took no more lines for {} ms", path_text(), kAuditFifoWait.count());
      return failed();
    }
    problem_ = fmt::format("cannot write {}: {}", path_text(),
                           n == 0 ? std::string("nothing written") : errno_text(errno));
    return failed();
  }
  size_ += data.size();
  mid_line_ = false;
  return true;
}

std::size_t AuditFile::write(std::string_view lines, std::size_t count) {
  if (fd_ < 0) {
    if (std::string why = open_path(); !why.empty()) {
      problem_ = std::move(why);
      return 0;
    }
  }
  follow_rotation();
  if (fd_ < 0) return 0;
  std::size_t done = 0;
  while (!lines.empty() && done < count) {
    // The lines that fit in the current file (at least one, into an empty file).
    std::size_t take = 0, taken_lines = 0;
    for (;;) {
      std::size_t end = lines.find('\n', take);
      end = end == std::string_view::npos ? lines.size() : end + 1;
      if (regular_ && size_ + end > options_.max_bytes && (size_ > 0 || taken_lines > 0)) break;
      take = end;
      ++taken_lines;
      if (take == lines.size()) break;
    }
    if (taken_lines == 0) {
      if (!rotate()) return done;
      continue;
    }
    // A line a failed write cut short ends before the next one starts.
    if (mid_line_ && !write_all("\n")) return done;
    if (!write_all(lines.substr(0, take))) return done;
    done += taken_lines;
    lines.remove_prefix(take);
  }
  return done;
}

}  // namespace

std::unique_ptr<AuditSink> open_audit_file(AuditFileOptions options) {
  return std::make_unique<AuditFile>(std::move(options));
}

}  // namespace sluice::store
