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
  // Streamable HTTP: events each SSE stream keeps for resumption with Last-Event-ID (and at
  // most this many bytes of them; the newest event is always kept), and the finished
  // streams a session keeps. Events dropped before anyone read them are counted.
  std::size_t sse_replay_events = 256;
  std::size_t sse_replay_bytes = 1024u * 1024u;
  std::size_t sse_retained_streams = 16;
  // Streamable HTTP: open connections; one past it is answered 503 and closed.
  std::size_t http_max_connections = 1024;
  // Streamable HTTP: connections from one client address that have not sent a complete
  // request (just opened, sending a head or body, or kept alive between requests). A new
  // one past it is answered 503; a kept-alive one past it is closed after its response.
  std::size_t http_max_incomplete_per_address = 64;

  std::chrono::milliseconds initialize_timeout{15000};
  std::chrono::milliseconds list_timeout{15000};

  // Child teardown (GATEWAY-INVARIANTS P4): close stdin, wait, SIGTERM group, wait, SIGKILL.
  std::chrono::milliseconds stdin_close_grace{500};
  std::chrono::milliseconds sigterm_grace{2000};

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
