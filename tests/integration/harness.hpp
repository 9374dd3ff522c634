#pragma once
// Drives the real `sluice` binary over stdio framing, as an MCP client would, and checks
// that nothing a test started is left behind. Every wait has a generous guard bound and
// waits on state (a line arriving, a process exiting), never on a sleep.
#include <boost/json/value.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice::test {

using namespace std::chrono_literals;

inline constexpr auto kGuard = 20s;  // generous bound for any single awaited event

// A scratch directory with a HOME of its own, removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

// A unique marker value placed in every fixture's environment, so a test can find every
// process its servers started (grandchildren included) by scanning /proc.
std::string new_marker();
std::vector<pid_t> processes_with_marker(const std::string& marker);
// Waits until no process carries the marker; returns the ones still there after the guard.
std::vector<pid_t> wait_no_marker(const std::string& marker, std::chrono::milliseconds guard);

// A .mcp.json server entry for the fixture server.
std::string fixture_entry(const std::string& marker, const std::vector<std::string>& args = {});

class Sluice {
 public:
  // Starts `sluice <args...>` with HOME set to `home` and cwd `cwd`.
  // With `read_stderr` false, sluice's stderr is a pipe nobody reads (as a client may leave
  // it, the MCP specification allows it) until read_stderr_now().
  Sluice(const std::vector<std::string>& args, const std::filesystem::path& home,
         const std::filesystem::path& cwd, const std::string& binary = SLUICE_BINARY,
         bool read_stderr = true);
  ~Sluice();

  void send(const std::string& line);
  // Writes `bytes` to sluice's stdin as they are (no newline added).
  void send_raw(std::string_view bytes);
  // The next stdout line, or nullopt at EOF or after `guard`.
  std::optional<std::string> read_line(std::chrono::milliseconds guard = kGuard);
  // Sends a request and returns the raw response line with that id (skipping notifications;
  // these are kept in notifications()).
  std::string request_raw(const std::string& method, const std::string& params_json,
                          const std::string& id_json = "");
  boost::json::value request(const std::string& method, const std::string& params_json);
  // initialize + notifications/initialized.
  boost::json::value initialize();
  // tools/call of a meta-tool; returns the CallToolResult object.
  boost::json::value call_tool(const std::string& name, const std::string& args_json);

  void close_stdin();
  // Stops reading sluice's stdout: its next write fails with EPIPE.
  void close_stdout();
  // Waits for exit; returns the exit code (or 128+signal), nullopt after the guard.
  std::optional<int> wait_exit(std::chrono::milliseconds guard = kGuard);
  void signal(int sig);
  pid_t pid() const { return pid_; }
  std::string stderr_text();
  // Bytes written to an unread stderr pipe and not read yet.
  std::size_t stderr_unread_bytes() const;
  // Starts reading an unread stderr from now on (stderr_text() collects it).
  void read_stderr_now();
  // Waits for the stderr reader to see EOF (after exit).
  void join_stderr();
  const std::vector<std::string>& notifications() const { return notifications_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_buf_;
  std::thread err_thread_;
  std::mutex err_mu_;
  std::string err_text_;
  std::optional<int> exit_code_;
  int next_id_ = 1000;
  std::vector<std::string> notifications_;
};

// A CallToolResult's isError, and the text of its first content item ("" when none).
bool is_error(const boost::json::value& result);
std::string text_of(const boost::json::value& result);
// Waits (bounded by kGuard) for a file a fixture creates; false after the guard.
bool wait_file(const std::filesystem::path& path);
// Closes sluice's stdin and expects exit code 0; on any other outcome the failure carries
// the tail of sluice's stderr.
void expect_clean_exit(Sluice& sluice);

// Runs sluice to completion with `input` on its stdin (then closed) and captures both streams.
struct RunResult {
  int exit_code = -1;
  std::string out, err;
};
RunResult run_sluice(const std::vector<std::string>& args, const std::filesystem::path& home,
                     const std::filesystem::path& cwd, std::string_view input = {});

}  // namespace sluice::test
