#pragma once
// TaskTable: the tasks (the 2026-07-28 tasks extension, io.modelcontextprotocol/tasks) that
// sluice brokers between its 2026 clients and the servers that run them.
//
// A server's task id is the server's own; a client sees a gateway task id instead ("task-" and
// 128 random bits), bound to the caller that created it: to any other caller it is unknown, like
// an id never issued. The table keeps, per task, where it runs (the server, the server's id, the
// server's generation: a restart loses the server's tasks), which tool made it, for whom, and the
// last status seen. A task is kept as long as its server's ttlMs said, at most a day (a day when
// the server said none); once expired it is forgotten. At most `capacity` tasks are held: a new
// one takes the place of the oldest ended one, and is refused when every held task is live.
//
// Pure bookkeeping: time from core::Clock (simulated in tests). Threading: the gateway's loop.
#include "core/clock.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sluice::gateway {

struct BrokeredTask {
  std::string id;                // the gateway's task id (set by add)
  std::string server;            // the server that runs it
  std::string server_task;       // the server's own task id
  std::string tool_id;           // server::tool
  std::string caller;            // the caller it is bound to
  std::string client;            // the caller's label, as gateway.list_pending shows it
  std::uint64_t generation = 0;  // the server's generation when the task was created
  std::string status;            // the last status the server reported
  std::string created_at;        // createdAt (ISO-8601): the server's, as it said it
  std::string updated_at;        // lastUpdatedAt, for a task sluice runs itself
  std::int64_t ttl_ms = 0;       // ttlMs, for a task sluice runs itself
  // A task sluice runs itself (a server without the extension): its InputBridge exchange, and
  // once ended, the members its DetailedTask keeps (result or error). 0: the server's task.
  std::uint64_t exchange = 0;
  std::string final_members;
  core::Clock::time_point created{};
  core::Clock::time_point expires{};
};

class TaskTable {
 public:
  static constexpr std::size_t kDefaultCapacity = 4096;
  static constexpr std::chrono::hours kLongestKept{24};
  // The gateway's task ids; tests give a deterministic one.
  using MakeId = std::function<std::string()>;

  explicit TaskTable(std::size_t capacity = kDefaultCapacity, MakeId make_id = {});

  // Records `task` (its id is minted here); `ttl`: the server's ttlMs (nullopt: none said).
  // Returns the gateway id, or nullopt when every held task is live and the table is full.
  std::optional<std::string> add(BrokeredTask task, std::optional<std::chrono::milliseconds> ttl);
  // The task `id` as `caller` may see it; nullptr when it is unknown, expired or another's.
  BrokeredTask* find(std::string_view id, std::string_view caller);
  // The task `id` whoever made it (the operator's view); nullptr when unknown or expired.
  BrokeredTask* find(std::string_view id);
  void erase(std::string_view id);

  // Whether `server` runs a task that has not ended (it is then not idle).
  bool live_on(std::string_view server) const;
  // gateway.list_pending's `tasks` rows (the held tasks, of `server` only when given): task_id,
  // tool_id, status, age_ms, client.
  boost::json::array list(std::optional<std::string_view> server) const;
  std::size_t size() const { return tasks_.size(); }

  // Whether a task status is final (completed, failed, cancelled).
  static bool ended(std::string_view status);

 private:
  void expire();
  bool make_room();

  std::size_t capacity_;
  MakeId make_id_;
  std::unordered_map<std::string, BrokeredTask> tasks_;
};

}  // namespace sluice::gateway
