#include "gateway/calls/task_table.hpp"

#include "gateway/auth/codec.hpp"

#include <boost/json/array.hpp>

#include <algorithm>
#include <stdexcept>

namespace sluice::gateway {

namespace {

std::string random_task_id() { return "task-" + auth::random_urlsafe(16); }

}  // namespace

TaskTable::TaskTable(std::size_t capacity, MakeId make_id)
    : capacity_(capacity), make_id_(make_id ? std::move(make_id) : MakeId(random_task_id)) {}

bool TaskTable::ended(std::string_view status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

std::optional<std::string> TaskTable::add(BrokeredTask task,
                                          std::optional<std::chrono::milliseconds> ttl) {
  expire();
  if (tasks_.size() >= capacity_ && !make_room()) return std::nullopt;
  std::string id;
  try {
    id = make_id_();
  } catch (const std::runtime_error&) {
    return std::nullopt;  // no random bytes: no id that could be guessed instead
  }
  if (id.empty() || tasks_.contains(id)) return std::nullopt;
  const auto longest = std::chrono::duration_cast<std::chrono::milliseconds>(kLongestKept);
  task.id = id;
  task.created = core::Clock::now();
  task.expires =
      task.created + (ttl ? std::clamp(*ttl, std::chrono::milliseconds(0), longest) : longest);
  tasks_.emplace(id, std::move(task));
  return id;
}

BrokeredTask* TaskTable::find(std::string_view id, std::string_view caller) {
  BrokeredTask* task = find(id);
  return task && task->caller == caller ? task : nullptr;
}

BrokeredTask* TaskTable::find(std::string_view id) {
  auto it = tasks_.find(std::string(id));
  if (it == tasks_.end()) return nullptr;
  if (core::Clock::now() >= it->second.expires) {
    tasks_.erase(it);
    return nullptr;
  }
  return &it->second;
}

void TaskTable::erase(std::string_view id) { tasks_.erase(std::string(id)); }

bool TaskTable::live_on(std::string_view server) const {
  const auto now = core::Clock::now();
  return std::any_of(tasks_.begin(), tasks_.end(), [&](const auto& entry) {
    const BrokeredTask& t = entry.second;
    return t.server == server && !ended(t.status) && now < t.expires;
  });
}

boost::json::array TaskTable::list(std::optional<std::string_view> server) const {
  const auto now = core::Clock::now();
  boost::json::array rows;
  for (const auto& [id, t] : tasks_) {
    if ((server && t.server != *server) || now >= t.expires) continue;
    rows.push_back(boost::json::object{
        {"task_id", id},
        {"tool_id", t.tool_id},
        {"status", t.status},
        {"age_ms", std::chrono::duration_cast<std::chrono::milliseconds>(now - t.created).count()},
        {"client", t.client}});
  }
  return rows;
}

void TaskTable::expire() {
  const auto now = core::Clock::now();
  std::erase_if(tasks_, [now](const auto& entry) { return now >= entry.second.expires; });
}

bool TaskTable::make_room() {
  auto oldest = tasks_.end();
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    if (!ended(it->second.status)) continue;
    if (oldest == tasks_.end() || it->second.created < oldest->second.created) oldest = it;
  }
  if (oldest == tasks_.end()) return false;
  tasks_.erase(oldest);
  return true;
}

}  // namespace sluice::gateway
