#include "store/audit_log.hpp"

#include "core/clock.hpp"
#include "core/log.hpp"
#include "core/signals_blocked.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <typeinfo>
#include <utility>

namespace sluice::store {

struct AuditLog::Shared {
  Shared(std::unique_ptr<AuditSink> s, std::string path, AuditLogOptions o)
      : sink(std::move(s)), options(o) {
    status.path = std::move(path);
  }

  std::unique_ptr<AuditSink> sink;  // the writer thread's only
  const AuditLogOptions options;
  std::atomic<bool> accepting{true};

  mutable std::mutex mutex;          // guards everything below
  std::condition_variable wake;      // the writer: lines queued, or stop
  std::condition_variable finished;  // the destructor: the writer ended
  std::string pending;               // whole lines, at most options.queue_bytes
  std::size_t pending_lines = 0;
  bool writer_idle = false;  // the writer waits for lines: append() must wake it
  bool stopping = false;
  bool writer_done = false;
  std::chrono::steady_clock::time_point stop_deadline{};  // core::Clock's time
  AuditLogStatus status;

  void write_until_stopped();
};

AuditLog::AuditLog(std::unique_ptr<AuditSink> sink, std::string path, AuditLogOptions options)
    : shared_(std::make_shared<Shared>(std::move(sink), std::move(path), options)) {
  core::SignalsBlocked blocked;
  writer_ = std::thread([shared = shared_] { run_writer(shared); });
}

AuditLog::~AuditLog() {
  std::unique_lock lock(shared_->mutex);
  shared_->stopping = true;
  shared_->stop_deadline = core::Clock::now() + shared_->options.drain_bound;
  shared_->wake.notify_all();
  // The drain bound, and a little more for a write already under way to come back.
  const bool ended = shared_->finished.wait_for(lock, shared_->options.drain_bound * 2,
                                                [&] { return shared_->writer_done; });
  lock.unlock();
  if (ended) {
    writer_.join();
  } else {
    writer_.detach();  // stuck in the kernel: it owns `shared_` and ends with the process
  }
}

void AuditLog::append(std::string_view line) {
  Shared& s = *shared_;
  if (!s.accepting.load(std::memory_order_relaxed)) return;
  bool wake = false;
  {
    std::lock_guard lock(s.mutex);
    if (s.stopping) return;
    if (s.pending.size() + line.size() > s.options.queue_bytes) {
      ++s.status.dropped;
      return;
    }
    s.pending.append(line);
    ++s.pending_lines;
    wake = std::exchange(s.writer_idle, false);
  }
  if (wake) s.wake.notify_one();
}

bool AuditLog::accepting() const { return shared_->accepting.load(std::memory_order_relaxed); }

AuditLogStatus AuditLog::status() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->status;
}

// The writer's loop once the sink is open: waits for lines, gathers for the coalescing
// interval, swaps the queue out and writes it, until stopped and drained (or the drain bound
// passed; what is left then is counted dropped).
void AuditLog::Shared::write_until_stopped() {
  std::string batch;
  std::unique_lock lock(mutex);
  for (;;) {
    writer_idle = true;
    wake.wait(lock, [&] { return stopping || !pending.empty(); });
    writer_idle = false;
    if (!stopping && options.coalesce.count() > 0) {
      wake.wait_for(lock, options.coalesce,
                    [&] { return stopping || pending.size() >= options.queue_bytes / 2; });
    }
    if (pending.empty()) return;  // stopping, nothing left
    if (stopping && core::Clock::now() >= stop_deadline) {
      status.dropped += pending_lines;
      pending.clear();
      pending_lines = 0;
      return;
    }
    batch.swap(pending);
    const std::size_t lines = std::exchange(pending_lines, 0);
    lock.unlock();
    const std::size_t done = sink->write(batch, lines);
    batch.clear();
    lock.lock();
    status.written += done;
    status.rotations = sink->rotations();
    if (done < lines) {
      status.dropped += lines - done;
      ++status.write_errors;
      status.problem = sink->problem();
    }
  }
}

void AuditLog::run_writer(const std::shared_ptr<Shared>& shared) {
  Shared& s = *shared;
  bool failed = false;
  try {
    std::string problem = s.sink->open();
    bool opened = problem.empty();
    {
      std::lock_guard lock(s.mutex);
      s.status.active = opened;
      s.status.problem = problem;
      if (!opened) {
        s.accepting.store(false, std::memory_order_relaxed);
        s.pending.clear();
        s.pending_lines = 0;
      }
    }
    if (!opened) {
      core::log::warn("audit log: not written: {}", problem);
    } else {
      s.write_until_stopped();
    }
  } catch (const std::exception& e) {
    core::log::error("audit log: the writer stopped on an exception of type {}", typeid(e).name());
    failed = true;
  } catch (...) {
    core::log::error("audit log: the writer stopped on an unknown exception");
    failed = true;
  }
  s.accepting.store(false, std::memory_order_relaxed);
  std::lock_guard lock(s.mutex);
  s.status.active = false;
  if (failed) s.status.problem = "the writer stopped on an internal error (logged)";
  s.writer_done = true;
  s.finished.notify_all();
}

}  // namespace sluice::store
