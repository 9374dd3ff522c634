// The incremental text/event-stream parser (see sse_parser.hpp).
#include "transport/sse_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

namespace sluice::transport {

namespace {
constexpr std::string_view kBom = "\xEF\xBB\xBF";
}  // namespace

std::size_t SseParser::event_bytes() const {
  return partial_.size() + pending_.event.size() + pending_.data.size() +
         (pending_.id ? pending_.id->size() : 0);
}

bool SseParser::feed(std::string_view bytes, const SseSink& sink) {
  if (spent_) return false;
  if (!started_) {
    // Hold back what may be the start of a BOM until it is whole or cannot be one.
    while (!bytes.empty() && bom_prefix_.size() < kBom.size() &&
           bytes.front() == kBom[bom_prefix_.size()]) {
      bom_prefix_ += bytes.front();
      bytes.remove_prefix(1);
    }
    if (bom_prefix_.size() < kBom.size() && bytes.empty()) return true;
    started_ = true;
    if (bom_prefix_.size() < kBom.size()) partial_ = bom_prefix_;  // not a BOM: it is text
  }
  if (after_cr_ && !bytes.empty()) {
    if (bytes.front() == '\n') bytes.remove_prefix(1);
    after_cr_ = false;
  }
  // Each line ends at its first CR or LF. Both are looked for with memchr, each search
  // starting where the last one found its byte, so that every byte is looked at once for each
  // (a byte by byte search, or one that starts over for every line, costs a megabyte event
  // milliseconds).
  const auto next = [bytes](char c, std::size_t from) {
    const void* found = std::memchr(bytes.data() + from, c, bytes.size() - from);
    return found ? static_cast<std::size_t>(static_cast<const char*>(found) - bytes.data())
                 : bytes.size();
  };
  std::size_t at = 0, lf = 0, cr = 0;  // searched first with `at` 0
  while (at < bytes.size()) {
    if (at == 0 || lf < at) lf = next('\n', at);
    if (at == 0 || cr < at) cr = next('\r', at);
    const std::size_t end = std::min(lf, cr);
    if (end == bytes.size()) {
      partial_.append(bytes.substr(at));
      break;
    }
    const std::string_view text = bytes.substr(at, end - at);
    if (partial_.empty()) {
      line(text, sink);
    } else {
      partial_.append(text);
      if (event_bytes() > max_event_bytes_) break;
      line(partial_, sink);
      partial_.clear();
    }
    at = end + 1;
    if (bytes[end] == '\r') {
      if (at == bytes.size()) {
        after_cr_ = true;
      } else if (bytes[at] == '\n') {
        ++at;
      }
    }
    if (event_bytes() > max_event_bytes_) break;
  }
  if (event_bytes() > max_event_bytes_) {
    spent_ = true;
    return false;
  }
  return true;
}

void SseParser::line(std::string_view text, const SseSink& sink) {
  if (text.empty()) {
    dispatch(sink);
    return;
  }
  if (text.front() == ':') return;  // a comment
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    field(text, {});
    return;
  }
  std::string_view value = text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  field(text.substr(0, colon), value);
}

void SseParser::field(std::string_view name, std::string_view value) {
  if (name == "data") {
    if (has_data_) pending_.data += '\n';
    pending_.data.append(value);
    has_data_ = true;
  } else if (name == "event") {
    pending_.event.assign(value);
  } else if (name == "id") {
    if (value.find('\0') != std::string_view::npos) return;
    pending_.id.emplace(value);
    has_control_ = true;
  } else if (name == "retry") {
    std::uint64_t ms = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return;
    constexpr std::uint64_t kMax = std::numeric_limits<std::chrono::milliseconds::rep>::max();
    pending_.retry = std::chrono::milliseconds(static_cast<std::int64_t>(std::min(ms, kMax)));
    has_control_ = true;
  }
}

void SseParser::dispatch(const SseSink& sink) {
  if (has_data_ || has_control_) {
    if (pending_.event.empty()) pending_.event = "message";
    SseEvent event = std::move(pending_);
    pending_ = SseEvent{};
    if (sink) sink(std::move(event));
  } else {
    pending_ = SseEvent{};
  }
  has_data_ = false;
  has_control_ = false;
}

}  // namespace sluice::transport
