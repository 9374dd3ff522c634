#include "config/file_watch.hpp"

#include "core/clock.hpp"
#include "core/display.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>

#include <fmt/format.h>

#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace sluice::config {
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// What happens to a name in a watched directory that can change what a file holds: a write,
// a rename over it or away from it, a creation, a deletion; and the directory itself going.
constexpr std::uint32_t kMask = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                                IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR |
                                IN_EXCL_UNLINK;

std::string why_not(int error) {
  switch (error) {
    case ENOSPC:
      return "the inotify watch limit is reached (fs.inotify.max_user_watches)";
    case EMFILE:
      return "the inotify instance limit is reached (fs.inotify.max_user_instances)";
    case EACCES:
      return "permission denied";
    default:
      return std::error_code(error, std::generic_category()).message();
  }
}

}  // namespace

struct FileWatch::Impl {
  Impl(asio::io_context& io) : stream(io), timer(io) {}
  asio::posix::stream_descriptor stream;
  core::Timer timer;
  // Shared with every pending handler: false once the watch is stopped or destroyed, so a
  // handler that runs later (aborted) touches nothing.
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  std::string open_problem;  // why inotify could not be opened, else empty
};

FileWatch::FileWatch(asio::io_context& io, std::chrono::milliseconds debounce,
                     std::function<void()> changed)
    : impl_(std::make_unique<Impl>(io)), debounce_(debounce), changed_(std::move(changed)) {
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) {
    impl_->open_problem = "cannot watch the config files: " + why_not(errno);
    return;
  }
  impl_->stream.assign(fd);
  read_events();
}

FileWatch::~FileWatch() { stop(); }

void FileWatch::stop() {
  if (stopped_) return;
  stopped_ = true;
  *impl_->alive = false;
  impl_->timer.cancel();
  boost::system::error_code ignored;
  impl_->stream.close(ignored);  // drops every watch with the descriptor
  dirs_.clear();
}

std::vector<std::string> FileWatch::watch(const std::vector<fs::path>& files) {
  std::vector<std::string> problems;
  if (stopped_) return problems;
  if (!impl_->open_problem.empty()) {
    problems.push_back(impl_->open_problem);
    return problems;
  }
  const int fd = impl_->stream.native_handle();
  // A folder watched already keeps its watch (adding it again returns the same descriptor):
  // dropping it first would lose the events queued for it meanwhile, such as a change made
  // while the files were being read. Only folders no longer wanted are dropped, at the end.
  std::map<int, Directory> next;
  // The directories, each with the names in it that count.
  std::map<fs::path, std::set<std::string, std::less<>>> wanted;
  for (const fs::path& file : files) {
    if (!file.has_filename()) continue;
    wanted[file.parent_path()].insert(file.filename().string());
  }
  for (auto& [dir, names] : wanted) {
    int wd = ::inotify_add_watch(fd, dir.c_str(), kMask);
    if (wd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;
      problems.push_back(fmt::format("cannot watch the folder {}: {}",
                                     core::display_safe(dir.string()), why_not(errno)));
      continue;
    }
    // Two paths to one folder (a symlink) share a descriptor: their names are merged.
    Directory& d = next[wd];
    d.path = dir;
    d.names.merge(names);
  }
  for (const auto& [wd, dir] : dirs_) {
    if (!next.contains(wd)) ::inotify_rm_watch(fd, wd);
  }
  dirs_ = std::move(next);
  return problems;
}

void FileWatch::read_events() {
  impl_->stream.async_wait(
      asio::posix::stream_descriptor::wait_read,
      [this, alive = impl_->alive](const boost::system::error_code& ec) {
        if (!*alive || ec) return;
        alignas(inotify_event) std::array<char, 8192> buf;
        for (;;) {
          ssize_t n = ::read(impl_->stream.native_handle(), buf.data(), buf.size());
          if (n <= 0) break;  // EAGAIN: every queued event was read
          for (ssize_t at = 0; at < n;) {
            const auto* e = reinterpret_cast<const inotify_event*>(buf.data() + at);
            std::string_view name =
                e->len > 0 ? std::string_view(e->name, ::strnlen(e->name, e->len)) : "";
            on_event(e->wd, name, e->mask);
            at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
          }
        }
        read_events();
      });
}

void FileWatch::on_event(int wd, std::string_view name, std::uint32_t mask) {
  if (mask & IN_Q_OVERFLOW) {
    arm();  // events were lost: anything may have changed
    return;
  }
  auto it = dirs_.find(wd);
  if (it == dirs_.end()) return;  // a watch dropped by watch()
  if (mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
    // The folder went away (its files with it); it is watched again at the next watch().
    if (mask & IN_IGNORED) dirs_.erase(it);
    arm();
    return;
  }
  if (it->second.names.contains(name)) arm();
}

void FileWatch::arm() {
  impl_->timer.expires_after(debounce_);
  impl_->timer.async_wait([this, alive = impl_->alive](const boost::system::error_code& ec) {
    if (!*alive || ec) return;
    changed_();
  });
}

}  // namespace sluice::config
