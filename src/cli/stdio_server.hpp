#pragma once
// A minimal, blocking MCP server over a pair of file descriptors (newline-delimited
// JSON-RPC 2.0, one message per line), for `sluice demo-server` and the test fixtures.
// The gateway itself does not use it (its server role is mcp::Session on the event loop),
// so it lives here beside the demo server rather than in the protocol library.
//
// Threads: run() reads, dispatches and answers on the calling thread, one message at a time;
// tool handlers run there too, so a slow handler delays every later message (a
// notifications/cancelled can only arrive after the call it names has been answered, and
// is ignored). Configure (add_tool, set_*) before run() or from a handler. write_message()
// and notify_tools_changed() may be called from any thread while run() is running: writes
// are serialised by a mutex and each message goes out whole as one line.
//
// Ownership: the server borrows the fds given to run() and never closes them.
//
// Errors: input never throws out of run(). A line that is not JSON is answered with -32700;
// an invalid message, a line over the size cap, and tools/* before initialize with -32600;
// an unknown method with -32601; bad params (unknown tool, bad cursor, no protocolVersion)
// with -32602. Ids are echoed byte-exact, or null when none can be recovered. Notifications
// and responses are never answered. A handler that throws yields a tool result with
// isError: true and the exception's text. add_tool() throws std::invalid_argument for a
// spec without a name or handler or whose JSON texts are not objects (a programming error,
// caught at startup). A write to a closed peer raises SIGPIPE unless the process ignores
// it; when ignored, run() returns 1.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::cli {

struct ToolCallResult {
  std::string result_json;  // the full `result` object text; valid JSON, spliced verbatim
};

struct ToolSpec {
  std::string name;
  std::string title;        // may be empty
  std::string description;  // may be empty
  std::string input_schema_json;
  std::string output_schema_json;  // may be empty
  std::string annotations_json;    // may be empty
  std::function<ToolCallResult(const boost::json::object& arguments)> handler;
};

class StdioServer {
 public:
  StdioServer(std::string name, std::string version);

  // Adds a tool, or replaces the one with the same name in place.
  void add_tool(ToolSpec tool);
  // Tools per tools/list page; 0 (the default) lists every tool in one page.
  void set_page_size(std::size_t page_size);
  // Longest accepted line, without its newline (default: core::Limits max_message_bytes).
  void set_max_message_bytes(std::size_t max_bytes);
  // Protocol revisions offered in negotiation (default: mcp::kSupportedVersions). The
  // client's revision is answered when listed, else the latest listed one. Not empty.
  void set_protocol_versions(std::vector<std::string> versions);
  // Called on the run() thread right after the first initialize answer has been written.
  void on_initialize_answered(std::function<void()> hook);
  // Called on the run() thread for every notification received (method, raw params text).
  void on_notification(std::function<void(std::string_view, std::string_view)> hook);

  // Serves until end of input. Returns 0 at EOF, 1 when reading or writing failed.
  int run(int in_fd = 0, int out_fd = 1);

  // Writes one message (a JSON text without newlines) as one line. Returns false when
  // run() is not running or the output has failed.
  bool write_message(std::string_view json);
  // Sends notifications/tools/list_changed.
  void notify_tools_changed();
  // While a tool handler runs: the JSON text of the call's `_meta.progressToken`, or empty
  // when the caller asked for no progress.
  const std::string& current_progress_token() const { return current_progress_token_; }

 private:
  std::string current_progress_token_;
  std::function<void(std::string_view, std::string_view)> notification_hook_;
  struct Tool {
    std::string descriptor_json;  // the entry of tools/list
    std::function<ToolCallResult(const boost::json::object&)> handler;
  };

  void handle_line(std::string_view line);
  std::string answer(std::string_view method, const boost::json::value& params,
                     std::string_view raw_params, std::string_view raw_id);
  std::string answer_initialize(std::string_view raw_params, std::string_view raw_id);
  std::string answer_list(const boost::json::value& params, std::string_view raw_id) const;
  std::string answer_call(const boost::json::value& params, std::string_view raw_id);
  bool write_line(std::string_view line);

  std::string name_;
  std::string version_;
  std::vector<Tool> tools_;                                  // in tools/list order
  std::unordered_map<std::string, std::size_t> tool_index_;  // name -> position in tools_
  std::size_t page_size_ = 0;
  std::size_t max_message_bytes_;
  std::vector<std::string> versions_;
  std::vector<std::string_view> offered_;  // views of versions_, for mcp::negotiate
  std::function<void()> initialize_hook_;
  bool initialized_ = false;

  std::mutex write_mutex_;
  int out_fd_ = -1;  // guarded by write_mutex_; -1 outside run()
  std::atomic<bool> write_failed_{false};
};

}  // namespace sluice::cli
