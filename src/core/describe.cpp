#include "core/describe.hpp"

#include <fmt/format.h>

namespace sluice::core {
namespace {

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string describe_kind(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64: return "an integer";
    case boost::json::kind::double_: return "a number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "a value";
}

std::string describe_value(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::string:
      return fmt::format("a string of {}", plural(code_points(v.get_string()), "character",
                                                  "characters"));
    case boost::json::kind::array:
      return fmt::format("an array of {}", plural(v.get_array().size(), "item", "items"));
    case boost::json::kind::object:
      return fmt::format("an object with {}", plural(v.get_object().size(), "key", "keys"));
    default:
      return describe_kind(v);
  }
}

}  // namespace sluice::core
