#include "cli/stdio_server.hpp"

#include <boost/json/serialize.hpp>

#include "core/json.hpp"
#include "core/limits.hpp"
#include "core/line_splitter.hpp"
#include "mcp/protocol.hpp"
#include "mcp/tool_result.hpp"
#include "rpc/message.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <stdexcept>
#include <utility>
#include <variant>

namespace sluice::cli {
namespace {
namespace bj = boost::json;
namespace cj = core::json;

constexpr std::string_view kCursorPrefix = "offset-";
constexpr std::size_t kReadChunkBytes = 64 * 1024;

cj::ParseLimits parse_limits() { return cj::ParseLimits{core::Limits{}.max_json_depth}; }

bool is_object_text(std::string_view text) {
  auto parsed = cj::parse_strict(text, parse_limits());
  return parsed && parsed->is_object();
}

// A valid JSON text can hold a raw line break only as whitespace between tokens, so turning
// it into a space keeps the value and keeps the message on one line.
void flatten_line_breaks(std::string& json) {
  std::replace(json.begin(), json.end(), '\n', ' ');
  std::replace(json.begin(), json.end(), '\r', ' ');
}

std::string error_line(std::string_view raw_id, int code, std::string_view message) {
  return rpc::make_error(raw_id, code, message) + '\n';
}

}  // namespace

StdioServer::StdioServer(std::string name, std::string version)
    : name_(std::move(name)),
      version_(std::move(version)),
      max_message_bytes_(core::Limits{}.max_message_bytes),
      versions_(mcp::kSupportedVersions.begin(), mcp::kSupportedVersions.end()),
      offered_(versions_.begin(), versions_.end()) {}

void StdioServer::add_tool(ToolSpec tool) {
  if (tool.name.empty() || !tool.handler) {
    throw std::invalid_argument("a tool needs a name and a handler");
  }
  if (!is_object_text(tool.input_schema_json) ||
      (!tool.output_schema_json.empty() && !is_object_text(tool.output_schema_json)) ||
      (!tool.annotations_json.empty() && !is_object_text(tool.annotations_json))) {
    throw std::invalid_argument("tool schemas and annotations must be JSON objects");
  }
  std::string d = R"({"name":)" + cj::quote(tool.name);
  if (!tool.title.empty()) d += R"(,"title":)" + cj::quote(tool.title);
  if (!tool.description.empty()) d += R"(,"description":)" + cj::quote(tool.description);
  d += R"(,"inputSchema":)" + tool.input_schema_json;
  if (!tool.output_schema_json.empty()) d += R"(,"outputSchema":)" + tool.output_schema_json;
  if (!tool.annotations_json.empty()) d += R"(,"annotations":)" + tool.annotations_json;
  d += '}';
  flatten_line_breaks(d);

  auto [slot, added] = tool_index_.try_emplace(tool.name, tools_.size());
  Tool entry{std::move(d), std::move(tool.handler)};
  if (added) {
    tools_.push_back(std::move(entry));
  } else {
    tools_[slot->second] = std::move(entry);
  }
}

void StdioServer::set_page_size(std::size_t page_size) { page_size_ = page_size; }

void StdioServer::set_max_message_bytes(std::size_t max_bytes) { max_message_bytes_ = max_bytes; }

void StdioServer::set_protocol_versions(std::vector<std::string> versions) {
  if (versions.empty()) throw std::invalid_argument("at least one protocol version is needed");
  versions_ = std::move(versions);
  offered_.assign(versions_.begin(), versions_.end());
}

void StdioServer::on_notification(std::function<void(std::string_view, std::string_view)> hook) {
  notification_hook_ = std::move(hook);
}

void StdioServer::on_initialize_answered(std::function<void()> hook) {
  initialize_hook_ = std::move(hook);
}

int StdioServer::run(int in_fd, int out_fd) {
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    out_fd_ = out_fd;
  }
  write_failed_ = false;
  core::LineSplitter splitter(max_message_bytes_, 0);
  auto on_line = [this](const core::Line& line) {
    if (write_failed_) return;
    if (line.truncated) {
      write_line(error_line(
          "null", rpc::code::kInvalidRequest,
          fmt::format("Invalid request: message larger than {} bytes", max_message_bytes_)));
      return;
    }
    handle_line(line.text);
  };

  std::vector<char> buffer(kReadChunkBytes);
  bool read_failed = false;
  while (!write_failed_) {
    ssize_t n = ::read(in_fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      read_failed = n < 0;
      break;
    }
    splitter.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), on_line);
  }
  if (!read_failed) splitter.finish(on_line);

  std::lock_guard<std::mutex> lock(write_mutex_);
  out_fd_ = -1;
  return read_failed || write_failed_ ? 1 : 0;
}

void StdioServer::handle_line(std::string_view line) {
  line = cj::trim(line);
  if (line.empty()) return;
  const cj::ParseLimits limits = parse_limits();
  auto parsed = rpc::parse(std::string(line), limits, rpc::Strictness::client);
  if (const auto* failure = std::get_if<rpc::ParseFailure>(&parsed)) {
    write_line(error_line(failure->id, failure->code, failure->message));
    return;
  }
  const rpc::Message& message = std::get<rpc::Message>(parsed);
  // Notifications (initialized, cancelled, ...) need nothing from a blocking server, and it
  // sends no requests, so responses have nothing to match.
  if (!message.is_request()) {
    if (message.is_notification() && notification_hook_) {
      notification_hook_(message.method(), message.params());
    }
    return;
  }

  const bool was_initialized = initialized_;
  std::string reply =
      answer(message.method(), message.params_value(limits), message.params(), message.id());
  reply += '\n';
  if (write_line(reply) && !was_initialized && initialized_ && initialize_hook_) {
    initialize_hook_();
  }
}

std::string StdioServer::answer(std::string_view method, const bj::value& params,
                                std::string_view raw_params, std::string_view raw_id) {
  if (method == "initialize") return answer_initialize(raw_params, raw_id);
  if (method == "ping") return rpc::make_result(raw_id, "{}");
  const bool tools_method = method == "tools/list" || method == "tools/call";
  if (tools_method && !initialized_) {
    return rpc::make_error(raw_id, rpc::code::kInvalidRequest,
                           "Invalid request: initialize must come first");
  }
  if (method == "tools/list") return answer_list(params, raw_id);
  if (method == "tools/call") return answer_call(params, raw_id);
  return rpc::make_error(raw_id, rpc::code::kMethodNotFound, "Method not found");
}

std::string StdioServer::answer_initialize(std::string_view raw_params, std::string_view raw_id) {
  std::optional<std::string> requested = mcp::requested_version(raw_params);
  if (!requested) {
    return rpc::make_error(raw_id, rpc::code::kInvalidParams,
                           "Invalid params: protocolVersion must be a string");
  }
  std::string_view chosen = mcp::negotiate(*requested, offered_);
  initialized_ = true;
  return rpc::make_result(
      raw_id, fmt::format(R"({{"protocolVersion":{},"capabilities":{{"tools":{{"listChanged":)"
                          R"(true}}}},"serverInfo":{{"name":{},"version":{}}}}})",
                          cj::quote(chosen), cj::quote(name_), cj::quote(version_)));
}

std::string StdioServer::answer_list(const bj::value& params, std::string_view raw_id) const {
  if (!params.is_object()) {
    return rpc::make_error(raw_id, rpc::code::kInvalidParams,
                           "Invalid params: params must be an object");
  }
  std::size_t offset = 0;
  if (const bj::value* cursor = params.get_object().if_contains("cursor")) {
    std::string_view text = cursor->is_string() ? std::string_view(cursor->get_string()) : "";
    bool valid = text.starts_with(kCursorPrefix);
    if (valid) {
      text.remove_prefix(kCursorPrefix.size());
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), offset);
      valid = ec == std::errc() && end == text.data() + text.size() && offset <= tools_.size();
    }
    if (!valid) {
      return rpc::make_error(raw_id, rpc::code::kInvalidParams, "Invalid params: unknown cursor");
    }
  }
  const std::size_t end =
      page_size_ == 0 ? tools_.size() : std::min(tools_.size(), offset + page_size_);
  std::string result = R"({"tools":[)";
  for (std::size_t i = offset; i < end; ++i) {
    if (i > offset) result += ',';
    result += tools_[i].descriptor_json;
  }
  result += ']';
  if (end < tools_.size()) {
    result += R"(,"nextCursor":)";
    result += cj::quote(std::string(kCursorPrefix) + std::to_string(end));
  }
  result += '}';
  return rpc::make_result(raw_id, result);
}

std::string StdioServer::answer_call(const bj::value& params, std::string_view raw_id) {
  const bj::object* p = params.if_object();
  const bj::value* name = p != nullptr ? p->if_contains("name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    return rpc::make_error(raw_id, rpc::code::kInvalidParams,
                           "Invalid params: name must be a string");
  }
  auto slot = tool_index_.find(std::string(name->get_string()));
  if (slot == tool_index_.end()) {
    return rpc::make_error(raw_id, rpc::code::kInvalidParams, "Invalid params: unknown tool");
  }
  static const bj::object kNoArguments;
  const bj::value* arguments = p->if_contains("arguments");
  if (arguments != nullptr && !arguments->is_object()) {
    return rpc::make_error(raw_id, rpc::code::kInvalidParams,
                           "Invalid params: arguments must be an object");
  }
  // A copy: the handler may add tools, which can move the vector's elements.
  auto handler = tools_[slot->second].handler;
  current_progress_token_.clear();
  if (const auto* meta = p->if_contains("_meta"); meta != nullptr && meta->is_object()) {
    if (const auto* token = meta->get_object().if_contains("progressToken")) {
      current_progress_token_ = bj::serialize(*token);
    }
  }
  std::string result;
  try {
    result = handler(arguments != nullptr ? arguments->get_object() : kNoArguments).result_json;
  } catch (const std::exception& e) {
    result = mcp::text_result(e.what(), true);
  } catch (...) {
    result = mcp::text_result("the tool failed", true);
  }
  flatten_line_breaks(result);
  return rpc::make_result(raw_id, result);
}

bool StdioServer::write_message(std::string_view json) {
  std::string line(json);
  flatten_line_breaks(line);
  line += '\n';
  return write_line(line);
}

void StdioServer::notify_tools_changed() {
  write_line(rpc::make_notification("notifications/tools/list_changed", "") + '\n');
}

bool StdioServer::write_line(std::string_view line) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (out_fd_ < 0 || write_failed_) return false;
  while (!line.empty()) {
    ssize_t n = ::write(out_fd_, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      write_failed_ = true;
      return false;
    }
    line.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace sluice::cli
