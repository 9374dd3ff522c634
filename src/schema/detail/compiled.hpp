#pragma once
// The compiled form of a JSON Schema, shared by compile.cpp (which builds it) and
// validate.cpp (which walks it). Not part of the public interface.
#include "schema/schema.hpp"

#include <re2/re2.h>
#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::schema {

namespace detail {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
inline constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();
inline constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

// Bits of the `type` keyword.
enum TypeBit : std::uint8_t {
  kTypeNull = 1,
  kTypeBoolean = 2,
  kTypeObject = 4,
  kTypeArray = 8,
  kTypeNumber = 16,
  kTypeString = 32,
  kTypeInteger = 64,
};

struct NamedNode {
  std::string name;
  NodeId node = kNoNode;
};

struct PatternNode {
  const RE2* regex = nullptr;
  NodeId node = kNoNode;
};

struct DependentNames {
  std::string name;
  std::vector<std::string> required;
};

// `$dynamicRef`: `initial` is the statically resolved target; `anchor` is non-empty when that
// target carries a `$dynamicAnchor` of the same name, which makes the reference dynamic.
struct DynamicRef {
  NodeId initial = kNoNode;
  std::string anchor;
};

// One compiled subschema. Keyword values that are JSON (enum, const, numeric limits) point
// into the document the Compiled owns. Absent keywords hold their neutral value.
struct Node {
  bool compiled = false;
  std::int8_t boolean = -1;  // -1: an object schema; 0/1: the schema `false`/`true`
  std::uint32_t resource = 0;

  std::uint8_t types = 0;  // 0: no `type` keyword
  const boost::json::array* enum_values = nullptr;
  const boost::json::value* const_value = nullptr;

  const boost::json::value* minimum = nullptr;
  const boost::json::value* maximum = nullptr;
  const boost::json::value* exclusive_minimum = nullptr;
  const boost::json::value* exclusive_maximum = nullptr;
  const boost::json::value* multiple_of = nullptr;

  std::uint64_t min_length = 0;
  std::uint64_t max_length = kUnbounded;
  const RE2* pattern = nullptr;

  std::uint64_t min_items = 0;
  std::uint64_t max_items = kUnbounded;
  bool unique_items = false;
  std::vector<NodeId> prefix_items;
  NodeId items = kNoNode;  // beyond prefix_items (draft-07: additionalItems after a tuple)
  NodeId contains = kNoNode;
  std::uint64_t min_contains = 1;
  std::uint64_t max_contains = kUnbounded;
  NodeId unevaluated_items = kNoNode;

  std::uint64_t min_properties = 0;
  std::uint64_t max_properties = kUnbounded;
  std::vector<NamedNode> properties;  // sorted by name
  std::vector<PatternNode> pattern_properties;
  NodeId additional_properties = kNoNode;
  NodeId property_names = kNoNode;
  std::vector<std::string> required;
  std::vector<DependentNames> dependent_required;
  std::vector<NamedNode> dependent_schemas;
  NodeId unevaluated_properties = kNoNode;

  NodeId ref = kNoNode;
  DynamicRef dynamic_ref;
  std::vector<NodeId> all_of;
  std::vector<NodeId> any_of;
  std::vector<NodeId> one_of;
  NodeId not_ = kNoNode;
  NodeId if_ = kNoNode;
  NodeId then_ = kNoNode;
  NodeId else_ = kNoNode;
};

// A schema resource (the document root or a subschema with `$id`) and the `$dynamicAnchor`s
// that belong to it.
struct Resource {
  std::string uri;
  std::vector<NamedNode> dynamic_anchors;
};

// Value helpers (value.cpp).
bool json_equal(const boost::json::value& a, const boost::json::value& b);
std::size_t json_hash(const boost::json::value& v);
bool is_number(const boost::json::value& v);
bool is_integral(const boost::json::value& v);
// -1, 0 or 1; both arguments must be numbers.
int compare_numbers(const boost::json::value& a, const boost::json::value& b);
// Exact for integers, tolerant of binary rounding for other numbers; `divisor` > 0.
bool is_multiple_of(const boost::json::value& value, const boost::json::value& divisor);
std::size_t code_points(std::string_view s);
// A schema number as the schema wrote it, for problem text ("1", "0.5").
std::string format_number(const boost::json::value& number);
// The smallest index j with an equal item before it, or kNoIndex when all are distinct.
std::size_t first_duplicate(const boost::json::array& items);

// ECMA-262 pattern syntax rewritten for RE2 where the two differ only in spelling:
// `\uXXXX` (surrogate pairs joined), `\u{X}`, `\cX`, `\s`/`\S` (Unicode white space),
// `\p{Long_Name}`, `[]`, `[^]` and `(?<name>`. Features RE2 lacks (lookaround,
// backreferences) are left alone and make RE2's compile fail.
std::string ecma_to_re2(std::string_view pattern);

// RFC 3986 reference resolution (uri.cpp).
std::string resolve_uri(std::string_view base, std::string_view reference);
// Splits "uri#fragment" into ("uri", "fragment"); the fragment is empty when there is none.
std::pair<std::string_view, std::string_view> split_fragment(std::string_view uri);
// Percent-decoding of a URI fragment; `ok` is false on a malformed escape.
std::string percent_decode(std::string_view text, bool& ok);

}  // namespace detail

struct Schema::Compiled {
  Options options;
  boost::json::value document;
  std::vector<detail::Node> nodes;
  std::vector<detail::Resource> resources;
  std::vector<std::unique_ptr<RE2>> regexes;
  std::vector<std::string> declared_names;  // sorted, unique
  detail::NodeId root = detail::kNoNode;
  bool tracks_dynamic_scope = false;
};

}  // namespace sluice::schema
