#pragma once
// FileWatch: tells its owner, once per burst, that one of a set of files changed on disk.
//
// It watches the DIRECTORY of each file (inotify) and keeps only events that name one of the
// files, so an editor's atomic save (write a temporary file, rename it over the original), a
// file that appears later, a deletion and a plain write are all seen. Events are debounced:
// `changed` runs once, `debounce` after the last event of a burst (core::Timer, so tests
// drive it in simulated time). A kernel queue overflow counts as a change.
//
// Ownership: owns one inotify descriptor (IN_CLOEXEC | IN_NONBLOCK, read through an asio
// stream_descriptor on the loop) and its timer; the destructor closes both synchronously and
// `changed` never runs after stop() or destruction. Threading: the loop thread of `io` only.
// Guarantees: never throws for anything found on disk; a directory that cannot be watched
// (missing, or the inotify limits reached) is reported by watch() as a value-free problem,
// and the other directories are still watched.
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace sluice::config {

class FileWatch {
 public:
  FileWatch(boost::asio::io_context& io, std::chrono::milliseconds debounce,
            std::function<void()> changed);
  ~FileWatch();
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // Watches exactly `files` from now on (absolute paths; earlier ones are dropped). Returns
  // one display-safe line per directory that exists but could not be watched (limits,
  // permissions); an empty list when every existing directory is watched. A missing
  // directory is not a problem: nothing in it can be a file yet.
  std::vector<std::string> watch(const std::vector<std::filesystem::path>& files);
  // No more `changed` calls; the descriptor is closed.
  void stop();
  // Directories watched now.
  std::size_t directories() const { return dirs_.size(); }

 private:
  struct Impl;
  void read_events();
  void on_event(int wd, std::string_view name, std::uint32_t mask);
  void arm();

  std::unique_ptr<Impl> impl_;
  std::chrono::milliseconds debounce_;
  std::function<void()> changed_;
  // Watch descriptor -> the directory and the names in it that count.
  struct Directory {
    std::filesystem::path path;
    std::set<std::string, std::less<>> names;
  };
  std::map<int, Directory> dirs_;
  bool stopped_ = false;
};

}  // namespace sluice::config
