#pragma once
// The Streamable HTTP sessions (see http_server.hpp): created by initialize, found by their
// Mcp-Session-Id, ended by DELETE, by the idle sweep or at stop. A session ended while its
// calls are still running is retired, not destroyed: its handler is borrowed by the
// coroutines serving those calls, so it is kept until they finish (release_retired()).
//
// No socket here, so the table is tested on a loop without a network.
//
// Threading: the owning io_context thread only. Ownership: the table holds every live and
// retired session by shared_ptr (connections serving one hold it too); destroying the table
// destroys the sessions it still holds without ending them (stop ends them first).
#include "core/clock.hpp"
#include "core/limits.hpp"
#include "mcp/session.hpp"
#include "transport/http_session.hpp"

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sluice::transport {

// What the table counts (shown in /metrics).
struct SessionCounters {
  std::uint64_t created = 0;
  std::uint64_t deleted = 0;         // by DELETE or at stop
  std::uint64_t expired = 0;         // by the idle sweep
  std::uint64_t refused = 0;         // initialize at the session cap
  std::uint64_t replay_dropped = 0;  // SSE events dropped before they were delivered
};

class SessionTable {
 public:
  using MakeHandler = std::function<std::unique_ptr<mcp::Handler>(std::shared_ptr<mcp::Session>)>;

  // `limits` (http_max_sessions, http_session_idle, the SSE bounds) must outlive the table.
  SessionTable(boost::asio::io_context& io, const core::Limits& limits, MakeHandler make_handler);

  struct Opened {
    std::string id;                        // the new Mcp-Session-Id
    std::shared_ptr<HttpSession> session;  // null: refused
    bool at_capacity = false;              // refused at http_max_sessions (else: no id)
  };
  // A new session with its handler. At the cap, idle sessions are swept first; still at it,
  // the session is refused (and counted).
  Opened open();
  // The live session `id`, or nullptr.
  std::shared_ptr<HttpSession> find(std::string_view id) const;
  // Ends session `id` (its calls cancelled); retired while calls still run. False: unknown.
  bool end(const std::string& id, bool expired);
  // Ends every session (at stop).
  void end_all();
  // Ends the sessions idle for longer than http_session_idle by `now`, then releases the
  // retired ones whose calls finished. The number expired.
  std::size_t sweep(core::Clock::time_point now);
  // Destroys the retired sessions whose calls have finished.
  void release_retired();

  std::size_t size() const { return sessions_.size(); }
  std::size_t retired() const { return retired_.size(); }
  const SessionCounters& counters() const { return counters_; }

 private:
  boost::asio::io_context& io_;
  const core::Limits& limits_;
  MakeHandler make_handler_;
  // Looked up by the header's view, without a copy.
  struct IdHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  std::unordered_map<std::string, std::shared_ptr<HttpSession>, IdHash, std::equal_to<>> sessions_;
  std::list<std::shared_ptr<HttpSession>> retired_;
  std::uint64_t next_number_ = 1;
  SessionCounters counters_;
};

}  // namespace sluice::transport
