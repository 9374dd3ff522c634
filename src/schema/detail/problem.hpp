#pragma once
// The parts of a validation problem: the instance path as the walk records it, and the fixed
// set of reasons. Only a failure reaches problem.cpp, which turns them into text; a valid
// instance never does. Not part of the public interface.
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::schema::detail {

// The instance location: a chain of stack-allocated links, rendered only for a problem.
struct PathLink {
  const PathLink* parent = nullptr;
  std::string_view key;  // a member name, when is_key
  std::size_t index = 0;
  bool is_key = false;
};

// Every reason a problem can give. The only variable parts are a number or count from the
// schema (`limit`, `count`) or the schema's `type` bits.
enum class Reason {
  type,
  enum_value,
  const_value,
  minimum,
  maximum,
  exclusive_minimum,
  exclusive_maximum,
  multiple_of,
  min_length,
  max_length,
  pattern,
  min_items,
  max_items,
  unique_items,
  min_contains,
  max_contains,
  min_properties,
  max_properties,
  required,
  dependent_required,
  property_name,
  not_allowed,
  any_of,
  one_of_none,
  one_of_many,
  not_schema,
  too_deep,
  too_much_work,
};

struct ReasonDetail {
  const boost::json::value* limit = nullptr;  // a number in the schema
  std::uint64_t count = 0;                    // a count in the schema
  std::uint8_t types = 0;                     // the schema's `type` bits
};

// The text of `reason`: a fixed phrase whose only variable parts come from `d`.
std::string reason_text(Reason reason, const ReasonDetail& d);

// `$` followed by `.name` for a member name in `declared_names` (sorted), `.entry` for any
// other member and `[i]` for an array index: the value-free path of Problem::path.
std::string render_path(const PathLink* path, const std::vector<std::string>& declared_names);

}  // namespace sluice::schema::detail
