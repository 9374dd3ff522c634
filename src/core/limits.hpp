#pragma once
// Every bound sluice enforces, with its named default. Set once at start (the defaults, then
// the command-line flags that override some of them: `sluice serve --help` lists those) and
// shared read-only.
#include <chrono>
#include <cstddef>

namespace sluice::core {

struct Limits {
  // One JSON-RPC message (a line on stdio). A larger one is refused while reading.
  std::size_t max_message_bytes = 16u * 1024u * 1024u;
  // Nesting depth accepted in any JSON message.
  std::size_t max_json_depth = 64;
  // Nesting depth accepted in a JSON Schema and while validating against it.
  std::size_t max_schema_depth = 64;
  // One stderr line of a child; the rest of the line is dropped and marked "(truncated)".
  std::size_t max_stderr_line_bytes = 64u * 1024u;
  // Child stderr lines logged per second and server (bursts up to twice that); the rest
  // are counted as not logged.
  std::size_t stderr_lines_per_second = 50;
  // Child stderr bytes logged per second and server (bursts up to twice that, and at least
  // one whole line); lines over it are counted as not logged, like those over the line rate.
  std::size_t stderr_bytes_per_second = 64u * 1024u;
  // Bytes queued for one outgoing stream before the peer is considered stuck.
  std::size_t max_write_queue_bytes = 64u * 1024u * 1024u;
  // Requests one session may have waiting for an answer.
  std::size_t max_pending_requests = 4096;
  // Pages fetched from one downstream's tools/list.
  std::size_t max_list_pages = 100;
  // Tools kept from one downstream.
  std::size_t max_tools_per_server = 10000;
  // Items in one page of a list sluice answers (tools/list, prompts/list, resources/list and
  // resources/templates/list in aggregate mode); nextCursor gives the next page.
  // Large by default: a fleet of 1,500 tools is listed in two round trips.
  std::size_t list_page_size = 1000;
  // Streamable HTTP: events each SSE stream keeps for resumption with Last-Event-ID (and at
  // most this many bytes of them; the newest event is always kept), and the finished
  // streams a session keeps. Events dropped before anyone read them are counted.
  std::size_t sse_replay_events = 256;
  std::size_t sse_replay_bytes = 1024u * 1024u;
  std::size_t sse_retained_streams = 16;
  // Events the audit ring keeps (gateway.health shows the newest); older ones are dropped
  // and counted.
  std::size_t audit_ring_events = 256;
  // Streamable HTTP: open connections; one past it is answered 503 and closed.
  std::size_t http_max_connections = 1024;
  // Streamable HTTP: connections from one client address that have not sent a complete
  // request (just opened, sending a head or body, or kept alive between requests). A new
  // one past it is answered 503; a kept-alive one past it is closed after its response.
  std::size_t http_max_incomplete_per_address = 64;
  // Streamable HTTP: open MCP sessions (initialize past it: 503), and how long a session
  // with no request and no open stream lives. Sessions are swept every
  // http_session_sweep_interval (and at the cap, before a new one is refused).
  std::size_t http_max_sessions = 256;
  std::chrono::milliseconds http_session_idle{30 * 60 * 1000};
  std::chrono::milliseconds http_session_sweep_interval{1000};
  // Streamable HTTP: requests per second per client address (bursts up to twice that);
  // 0 turns it off. Loopback peers (127.0.0.0/8, ::1) are not limited unless
  // http_rate_limit_loopback is set: every local client shares one address, so a per-address
  // bucket would let one busy agent throttle every other agent on the machine.
  double http_rate_limit = 1000;
  bool http_rate_limit_loopback = false;
  // Streamable HTTP: a request's head, from waiting for it until it is complete, and its
  // bytes; then the body's deadline; then each write to the client (a client that stops
  // reading is cut off after it).
  std::chrono::milliseconds http_header_timeout{10000};
  std::size_t http_max_header_bytes = 16u * 1024u;
  std::chrono::milliseconds http_body_timeout{30000};
  std::chrono::milliseconds http_write_timeout{30000};
  // Streamable HTTP: an SSE comment written on an idle stream, so a vanished client is
  // noticed; and how long a call's stream waits for its first event before its head and
  // priming event go out alone (a fast answer leaves in one write with its head).
  std::chrono::milliseconds http_sse_keepalive{15000};
  std::chrono::milliseconds http_sse_first_event_wait{10};
  // Streamable HTTP: before closing, a connection stops sending and reads what the client
  // still sends, for at most this long and this many bytes, so that the close does not
  // reset the connection before the client has read the answer.
  std::chrono::milliseconds http_linger{500};
  std::size_t http_linger_bytes = 4u * 1024u * 1024u;
  // Streamable HTTP: connections being answered 503 past a cap at once; past it, one is
  // closed without an answer rather than held.
  std::size_t http_max_refusing = 64;
  // Streamable HTTP: the pause after a failed accept (EMFILE and the like) before the next.
  std::chrono::milliseconds http_accept_backoff{50};

  std::chrono::milliseconds initialize_timeout{15000};
  std::chrono::milliseconds list_timeout{15000};

  // Child teardown (invariant P4): close stdin, wait, SIGTERM group, wait, SIGKILL group,
  // then wait up to sigkill_wait for the exit to be seen before the reap.
  std::chrono::milliseconds stdin_close_grace{500};
  std::chrono::milliseconds sigterm_grace{2000};
  std::chrono::milliseconds sigkill_wait{5000};

  // A downstream that exits by itself is restarted after restart_backoff_initial, doubling
  // up to restart_backoff_max, at most max_auto_restarts times in a row; a run that stays
  // online for restart_stable_after resets the count. A failed start retried by a call
  // waits out the same backoff.
  std::chrono::milliseconds restart_backoff_initial{250};
  std::chrono::milliseconds restart_backoff_max{8000};
  std::size_t max_auto_restarts = 5;
  std::chrono::milliseconds restart_stable_after{10000};
  // A child whose stdout closed is given this long to exit by itself before teardown
  // signals it, so that how it ended (a foreign kill or not) is read first.
  std::chrono::milliseconds exit_observe_grace{1000};
};

}  // namespace sluice::core
