#pragma once
// The persistent audit log: JSON lines appended to a file (by default <state_dir>/audit.jsonl),
// rotated by size. The gateway formats each record (gateway/audit.hpp); this class only moves
// whole lines to the file, off the loop. docs/state.md describes the file and its records.
//
// Threading: append(), status() and accepting() are safe from any thread; the gateway calls
// append() on its loop thread. One writer thread, started by the constructor, opens the sink
// and writes; it blocks every signal and has a catch-all boundary (what it catches is logged
// by type and ends the log's writing, never the process).
//
// Nothing blocks the caller (invariant P8): append() copies the line into a bounded queue
// (kQueueBytes of lines) under a mutex the writer holds only to swap buffers, and wakes the
// writer only when it is idle. A full queue drops the line and counts it; a slow or full disk
// or a FIFO nobody reads costs dropped records, never a stalled call.
//
// Guarantees on error: nothing throws. A sink that cannot be opened (a looser mode than 0600,
// another owner, a symbolic link, a directory that cannot be made) leaves the log inactive:
// status() says why (value-free; the path is the operator's own), append() takes nothing
// more, and sluice serves without the file. A failed write drops the lines of that batch
// (counted in dropped and write_errors) and the writer goes on with the next batch.
//
// Destruction gives what is queued at most AuditLogOptions::drain_bound to be written, then
// stops the writer and joins it; a writer stuck in the kernel (a regular file on a hung file
// system) past that bound is detached, and ends with the process (it owns what it uses).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace sluice::store {

inline constexpr std::string_view kAuditFileName = "audit.jsonl";
inline constexpr std::size_t kAuditQueueBytes = 256u * 1024u;  // lines waiting for the writer
inline constexpr std::chrono::milliseconds kAuditDrainBound{1000};
// After waking, the writer gathers lines this long before it writes them, so that a stream of
// calls costs one wake-up and one write per interval, not per call.
inline constexpr std::chrono::milliseconds kAuditCoalesce{20};

// Where the lines go. Used only by the writer thread, one call at a time.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  // Makes the sink ready; returns an empty string, or why it cannot be used (value-free).
  virtual std::string open() = 0;
  // Writes `lines` (`count` whole lines, each ending in '\n'); returns how many of the first
  // lines were written whole. Fewer than `count`: a write failed, and problem() says why.
  virtual std::size_t write(std::string_view lines, std::size_t count) = 0;
  // The last failure (value-free); empty when none.
  virtual std::string problem() const = 0;
  // Files rotated so far.
  virtual std::uint64_t rotations() const { return 0; }
};

struct AuditFileOptions {
  std::filesystem::path path;  // absolute
  // A regular file is rotated before a line would take it past this size: audit.jsonl
  // becomes audit.jsonl.1, .1 becomes .2 ... up to .keep (the oldest is overwritten).
  std::uint64_t max_bytes = 10u << 20;
  std::size_t keep = 5;  // rotated files kept; 0: the full file is removed instead
};

// The real sink: the file at `options.path` (docs/state.md), created 0600 in a directory made
// 0700 when missing, appended with O_APPEND (other sluice processes may append to the same
// file; a rotation by one of them is noticed and the new file opened). An existing file must
// be the user's own, not a symbolic link, and not readable or writable by others (else open()
// says which chmod to run); a FIFO is accepted (never rotated) and waited on at most
// kAuditFifoWait for room.
inline constexpr std::chrono::milliseconds kAuditFifoWait{200};
std::unique_ptr<AuditSink> open_audit_file(AuditFileOptions options);

struct AuditLogOptions {
  std::size_t queue_bytes = kAuditQueueBytes;
  std::chrono::milliseconds drain_bound = kAuditDrainBound;
  std::chrono::milliseconds coalesce = kAuditCoalesce;  // 0: write as soon as woken
};

struct AuditLogStatus {
  bool active = false;             // the sink is open and takes lines
  std::string path;                // what the log was made for (shown in health)
  std::string problem;             // why it is not active, or the last write failure; value-free
  std::uint64_t written = 0;       // records written whole
  std::uint64_t dropped = 0;       // records lost: full queue, failed write, left at exit
  std::uint64_t write_errors = 0;  // failed writes
  std::uint64_t rotations = 0;
};

class AuditLog {
 public:
  // Starts the writer, which opens `sink` first. `path` is only what status() shows.
  AuditLog(std::unique_ptr<AuditSink> sink, std::string path, AuditLogOptions options = {});
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Queues one record: `line` must end in '\n'. Never blocks on the sink; a line that does not
  // fit in the queue is dropped and counted. Ignored once the sink is known to be unusable.
  void append(std::string_view line);
  // False once the sink could not be opened or the writer stopped: callers may skip formatting.
  bool accepting() const;
  AuditLogStatus status() const;

 private:
  struct Shared;  // the queue, the counters and the sink; owned with the writer thread
  static void run_writer(const std::shared_ptr<Shared>& shared);

  std::shared_ptr<Shared> shared_;
  std::thread writer_;
};

}  // namespace sluice::store
