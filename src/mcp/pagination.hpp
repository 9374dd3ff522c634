#pragma once
// The one pagination codec for the lists sluice answers: the cursor text (the decimal
// position of the next item, as clients of tools/list, prompts/list, resources/list and
// gateway.health have always seen it) and the page a cursor selects.
//
// Pure functions: no state, any thread. A cursor is untrusted client text: decoding it only
// reads digits and never throws.
#include <boost/json/value.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::mcp {

// The cursor of the page that starts at item `position`.
std::string encode_cursor(std::size_t position);
// The position a cursor sluice gave names; nullopt for any other text.
std::optional<std::size_t> decode_cursor(std::string_view cursor);

// Items [begin, end) of a list, and the cursor of the page after it when more remain.
struct Page {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::optional<std::string> next_cursor;
};
// The page of a list of `total` items that `cursor` selects (empty: the first page). A cursor
// sluice did not give selects an empty page with no next cursor.
Page select_page(std::size_t total, std::string_view cursor, std::size_t page_size);

// A list result, {"<key>":[the page's items],"nextCursor":...}: item(i) builds item i, and
// is called only for the items of the page.
std::string page_result(std::size_t total, std::string_view cursor, std::size_t page_size,
                        std::string_view key,
                        const std::function<boost::json::value(std::size_t)>& item);
// The same, each item given as its JSON text: append_item(i, out) appends item i's text to
// `out` (for lists whose items are kept as text: no parse, no serialisation).
std::string page_result_text(std::size_t total, std::string_view cursor, std::size_t page_size,
                             std::string_view key,
                             const std::function<void(std::size_t, std::string&)>& append_item);
// The same over items already built.
std::string page_result(std::vector<boost::json::value> items, std::string_view cursor,
                        std::size_t page_size, std::string_view key);

}  // namespace sluice::mcp
