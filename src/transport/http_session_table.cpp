#include "transport/http_session_table.hpp"

#include "core/log.hpp"

#include <vector>

namespace sluice::transport {

SessionTable::SessionTable(boost::asio::io_context& io, const core::Limits& limits,
                           MakeHandler make_handler)
    : io_(io), limits_(limits), make_handler_(std::move(make_handler)) {}

SessionTable::Opened SessionTable::open() {
  Opened out;
  if (sessions_.size() >= limits_.http_max_sessions) sweep(core::Clock::now());
  if (sessions_.size() >= limits_.http_max_sessions) {
    ++counters_.refused;
    out.at_capacity = true;
    return out;
  }
  std::optional<std::string> id = new_session_id();
  if (!id) {
    core::log::error("http: no random bytes for a session id (getrandom failed)");
    return out;
  }
  auto session =
      std::make_shared<HttpSession>(io_, next_number_++, limits_, counters_.replay_dropped);
  session->attach(make_handler_(session->session()));
  sessions_[*id] = session;
  ++counters_.created;
  out.id = std::move(*id);
  out.session = std::move(session);
  return out;
}

std::shared_ptr<HttpSession> SessionTable::find(std::string_view id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

bool SessionTable::end(const std::string& id, bool expired) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  std::shared_ptr<HttpSession> s = std::move(it->second);
  sessions_.erase(it);
  s->end();
  if (expired) {
    ++counters_.expired;
  } else {
    ++counters_.deleted;
  }
  if (s->calls_running()) retired_.push_back(std::move(s));
  return true;
}

void SessionTable::end_all() {
  std::vector<std::string> ids;
  ids.reserve(sessions_.size());
  for (const auto& [id, s] : sessions_) ids.push_back(id);
  for (const auto& id : ids) end(id, false);
}

std::size_t SessionTable::sweep(core::Clock::time_point now) {
  std::vector<std::string> expired;
  for (const auto& [id, s] : sessions_) {
    if (s->idle() && now - s->last_activity() > limits_.http_session_idle) expired.push_back(id);
  }
  for (const auto& id : expired) end(id, true);
  if (!expired.empty()) core::log::info("http: {} idle session(s) expired", expired.size());
  release_retired();
  return expired.size();
}

void SessionTable::release_retired() {
  std::erase_if(retired_, [](const auto& s) { return !s->calls_running(); });
}

}  // namespace sluice::transport
