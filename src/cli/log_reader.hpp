#pragma once
// Reading a log for `sluice logs`: its lines in order across the rotated parts, kept or not by
// a filter, the last N of them, and then, when following, each line as it is appended, across
// rotations, until SIGINT, SIGTERM or SIGHUP or the end of the run that writes it.
//
// Every line is printed through core::display_safe (a log may hold anything: what a server
// wrote to its stderr, or a file someone else wrote), one per output line; lines are capped
// at kMaxReadLineBytes (the rest dropped, marked "(truncated)").
// Threading: the calling (main) thread; blocking reads and polls of its own descriptors.
// Following blocks SIGINT, SIGTERM and SIGHUP in that thread and takes them as events.
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sluice::cli {

inline constexpr std::size_t kMaxReadLineBytes = 128u * 1024u;

struct ReadRequest {
  std::vector<std::filesystem::path> parts{};  // the rotated parts, oldest first
  std::filesystem::path file{};                // the current file, read last, followed
  std::string server{};                        // only the lines about this server ("" all)
  std::optional<std::size_t> last{};           // only the last N (of those kept)
  bool follow = false;
  pid_t writer = 0;  // following: stop once this sluice has ended (0: never)
};

// Prints what `request` asks for on stdout. Returns the number of lines printed.
std::size_t print_log(const ReadRequest& request);

}  // namespace sluice::cli
