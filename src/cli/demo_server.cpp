#include "cli/demo_server.hpp"

#include "core/version.hpp"

#include "cli/stdio_server.hpp"
#include "core/json.hpp"
#include "mcp/tool_result.hpp"

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::cli {
namespace {
namespace bj = boost::json;

// The input schema of a tool that takes one text: kTextInputHead, its description, kTextInputTail.
constexpr std::string_view kTextInputHead =
    R"({"type":"object","properties":{"text":{"type":"string","description":")";
constexpr std::string_view kTextInputTail =
    R"("}},"required":["text"],"additionalProperties":false})";
constexpr std::string_view kNoInput =
    R"({"type":"object","properties":{},"additionalProperties":false})";
constexpr std::string_view kPure =
    R"({"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false})";
constexpr std::string_view kReadOnly = R"({"readOnlyHint":true,"openWorldHint":false})";

std::string text_input(std::string_view description) {
  std::string schema;
  schema.reserve(kTextInputHead.size() + description.size() + kTextInputTail.size());
  schema.append(kTextInputHead).append(description).append(kTextInputTail);
  return schema;
}

std::string text_argument(const bj::object& args) {
  const bj::value* v = args.if_contains("text");
  if (v == nullptr || !v->is_string()) throw std::invalid_argument("text must be a string");
  return std::string(v->get_string());
}

ToolCallResult echo(const bj::object& args) {
  return {mcp::text_result(text_argument(args))};
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

ToolCallResult word_count(const bj::object& args) {
  const std::string text = text_argument(args);
  std::size_t words = 0;
  std::size_t characters = 0;
  std::size_t lines = 0;
  bool in_word = false;
  for (char c : text) {
    if (!is_continuation_byte(c)) ++characters;
    if (c == '\n') ++lines;
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  if (!text.empty() && text.back() != '\n') ++lines;
  return {mcp::structured_result(
      fmt::format("{} words, {} lines, {} characters", words, lines, characters),
      fmt::format(R"({{"words":{},"lines":{},"characters":{}}})", words, lines, characters))};
}

ToolCallResult add(const bj::object& args) {
  const bj::value* a = args.if_contains("a");
  const bj::value* b = args.if_contains("b");
  if (a == nullptr || b == nullptr || !a->is_number() || !b->is_number()) {
    throw std::invalid_argument("a and b must be numbers");
  }
  std::string sum;
  std::int64_t exact = 0;
  if (a->is_int64() && b->is_int64() &&
      !__builtin_add_overflow(a->get_int64(), b->get_int64(), &exact)) {
    sum = std::to_string(exact);
  } else {
    double d = a->to_number<double>() + b->to_number<double>();
    if (!std::isfinite(d)) throw std::invalid_argument("the sum is too large to represent");
    sum = fmt::format("{}", d);
  }
  return {mcp::structured_result(sum, R"({"sum":)" + sum + "}")};
}

ToolCallResult reverse(const bj::object& args) {
  const std::string text = text_argument(args);
  std::string out;
  out.reserve(text.size());
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && is_continuation_byte(text[start])) --start;
    out.append(text, start, end - start);
    end = start;
  }
  return {mcp::text_result(out)};
}

ToolCallResult now(const bj::object&) {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 32> iso{};
  std::strftime(iso.data(), iso.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {mcp::structured_result(
      iso.data(), fmt::format(R"({{"iso8601":{},"unix_seconds":{}}})",
                              core::json::quote(iso.data()), static_cast<std::int64_t>(seconds)))};
}

ToolCallResult uuid(const bj::object&) {
  std::random_device random;
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    std::uint32_t word = random();
    for (std::size_t j = 0; j < 4; ++j) bytes[i + j] = static_cast<unsigned char>(word >> (8 * j));
  }
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", bytes[i]);
  }
  return {mcp::text_result(out)};
}

void add_tool(StdioServer& server, std::string_view name, std::string_view title,
              std::string_view description, std::string input_schema, std::string_view annotations,
              ToolCallResult (*handler)(const bj::object&), std::string_view output_schema = "") {
  server.add_tool(ToolSpec{std::string(name), std::string(title), std::string(description),
                           std::move(input_schema), std::string(output_schema),
                           std::string(annotations), handler});
}

}  // namespace

int run_demo_server() {
  StdioServer server("sluice-demo", core::kVersion);
  add_tool(server, "echo", "Echo",
           "Returns the given text unchanged. Handy for checking that a call reaches the "
           "server and comes back intact.",
           text_input("The text to send back"), kPure, echo);
  add_tool(server, "word_count", "Word count",
           "Counts the words, lines and characters (Unicode code points) of a text. Words are "
           "runs of non-whitespace; a last line without a newline still counts.",
           text_input("The text to count"), kPure, word_count,
           R"({"type":"object","properties":{"words":{"type":"integer","minimum":0},)"
           R"("lines":{"type":"integer","minimum":0},"characters":{"type":"integer",)"
           R"("minimum":0}},"required":["words","lines","characters"]})");
  add_tool(server, "add", "Add numbers",
           "Adds two numbers and returns the sum. Integers are added exactly; other numbers as "
           "64-bit floating point.",
           R"({"type":"object","properties":{"a":{"type":"number","description":"First addend"},)"
           R"("b":{"type":"number","description":"Second addend"}},"required":["a","b"],)"
           R"("additionalProperties":false})",
           kPure, add,
           R"({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})");
  add_tool(server, "reverse", "Reverse text",
           "Returns the text with its characters (Unicode code points) in reverse order.",
           text_input("The text to reverse"), kPure, reverse);
  add_tool(server, "now", "Current time",
           "Returns the current time in UTC as an ISO 8601 timestamp and as Unix seconds.",
           std::string(kNoInput), kReadOnly, now,
           R"({"type":"object","properties":{"iso8601":{"type":"string","format":"date-time"},)"
           R"("unix_seconds":{"type":"integer"}},"required":["iso8601","unix_seconds"]})");
  add_tool(server, "uuid", "Random UUID",
           "Returns a new random UUID (version 4), for example to tag a record.",
           std::string(kNoInput), kReadOnly, uuid);
  return server.run();
}

}  // namespace sluice::cli
