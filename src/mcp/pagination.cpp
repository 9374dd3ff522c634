#include "mcp/pagination.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>

namespace sluice::mcp {
namespace bj = boost::json;

std::string encode_cursor(std::size_t position) { return std::to_string(position); }

std::optional<std::size_t> decode_cursor(std::string_view cursor) {
  std::size_t position = 0;
  auto [ptr, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), position);
  if (ec != std::errc() || ptr != cursor.data() + cursor.size()) return std::nullopt;
  return position;
}

Page select_page(std::size_t total, std::string_view cursor, std::size_t page_size) {
  std::size_t begin = 0;
  if (!cursor.empty()) begin = decode_cursor(cursor).value_or(total);
  Page page;
  page.begin = std::min(begin, total);
  page.end = begin < total ? begin + std::min(page_size, total - begin) : page.begin;
  if (begin < total && total - begin > page_size)
    page.next_cursor = encode_cursor(begin + page_size);
  return page;
}

std::string page_result_text(std::size_t total, std::string_view cursor, std::size_t page_size,
                             std::string_view key,
                             const std::function<void(std::size_t, std::string&)>& append_item) {
  Page page = select_page(total, cursor, page_size);
  std::string out = "{" + bj::serialize(bj::string(key)) + ":[";
  for (std::size_t i = page.begin; i < page.end; ++i) {
    if (i != page.begin) out += ',';
    append_item(i, out);
  }
  out += ']';
  if (page.next_cursor) out += R"(,"nextCursor":)" + bj::serialize(bj::string(*page.next_cursor));
  out += '}';
  return out;
}

std::string page_result(std::size_t total, std::string_view cursor, std::size_t page_size,
                        std::string_view key, const std::function<bj::value(std::size_t)>& item) {
  return page_result_text(total, cursor, page_size, key, [&item](std::size_t i, std::string& out) {
    out += bj::serialize(item(i));
  });
}

std::string page_result(std::vector<bj::value> items, std::string_view cursor,
                        std::size_t page_size, std::string_view key) {
  return page_result(items.size(), cursor, page_size, key,
                     [&items](std::size_t i) { return std::move(items[i]); });
}

}  // namespace sluice::mcp
