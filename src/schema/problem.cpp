// Problem text: the reasons a validation can give and the value-free rendering of the path
// where it failed. Only reached at the point of a failure.
#include "schema/detail/problem.hpp"
#include "core/json.hpp"
#include "schema/detail/compiled.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace sluice::schema::detail {

namespace {

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string type_list(std::uint8_t types) {
  static constexpr std::pair<std::uint8_t, std::string_view> kNames[] = {
      {kTypeObject, "an object"},   {kTypeArray, "an array"},  {kTypeString, "a string"},
      {kTypeInteger, "an integer"}, {kTypeNumber, "a number"}, {kTypeBoolean, "a boolean"},
      {kTypeNull, "null"}};
  std::vector<std::string_view> names;
  for (const auto& [bit, name] : kNames) {
    if ((types & bit) != 0) names.push_back(name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace

std::string reason_text(Reason reason, const ReasonDetail& d) {
  switch (reason) {
    case Reason::type:
      return "must be " + type_list(d.types);
    case Reason::enum_value:
      return d.count == 1 ? "must equal the one allowed value"
                          : fmt::format("must be one of the {} allowed values", d.count);
    case Reason::const_value:
      return "must equal the constant value";
    case Reason::minimum:
      return "must be at least " + format_number(*d.limit);
    case Reason::maximum:
      return "must be at most " + format_number(*d.limit);
    case Reason::exclusive_minimum:
      return "must be greater than " + format_number(*d.limit);
    case Reason::exclusive_maximum:
      return "must be less than " + format_number(*d.limit);
    case Reason::multiple_of:
      return "must be a multiple of " + format_number(*d.limit);
    case Reason::min_length:
      return "must have at least " + plural(d.count, "character", "characters");
    case Reason::max_length:
      return "must have at most " + plural(d.count, "character", "characters");
    case Reason::pattern:
      return "must match the pattern the schema declares";
    case Reason::min_items:
      return "must have at least " + plural(d.count, "item", "items");
    case Reason::max_items:
      return "must have at most " + plural(d.count, "item", "items");
    case Reason::unique_items:
      return "must not repeat an earlier item";
    case Reason::min_contains:
      return "must contain at least " + plural(d.count, "matching item", "matching items");
    case Reason::max_contains:
      return "must contain at most " + plural(d.count, "matching item", "matching items");
    case Reason::min_properties:
      return "must have at least " + plural(d.count, "property", "properties");
    case Reason::max_properties:
      return "must have at most " + plural(d.count, "property", "properties");
    case Reason::required:
      return "is required";
    case Reason::dependent_required:
      return "is required when a property it depends on is present";
    case Reason::property_name:
      return "has a name the schema does not allow";
    case Reason::not_allowed:
      return "is not allowed";
    case Reason::any_of:
      return fmt::format("must match at least one of the {} alternatives", d.count);
    case Reason::one_of_none:
      return fmt::format("must match exactly one of the {} alternatives but matches none", d.count);
    case Reason::one_of_many:
      return fmt::format("must match exactly one of the {} alternatives but matches several",
                         d.count);
    case Reason::not_schema:
      return "must not match the schema under `not`";
    case Reason::too_deep:
      return fmt::format("is nested deeper than the validation depth limit of {}", d.count);
    case Reason::too_much_work:
      return fmt::format("needs more than the validation limit of {} steps", d.count);
  }
  return "is not valid";
}

std::string render_path(const PathLink* path, const std::vector<std::string>& declared_names) {
  auto declared = [&](std::string_view name) {
    return std::binary_search(declared_names.begin(), declared_names.end(), name,
                              [](std::string_view a, std::string_view b) { return a < b; });
  };
  std::vector<const PathLink*> links;
  for (const PathLink* p = path; p != nullptr; p = p->parent) links.push_back(p);
  std::string out = "$";
  for (auto it = links.rbegin(); it != links.rend(); ++it) {
    const PathLink& link = **it;
    if (!link.is_key) {
      out += fmt::format("[{}]", link.index);
    } else if (!declared(link.key)) {
      out += ".entry";
    } else if (is_identifier(link.key)) {
      out += '.';
      out += link.key;
    } else {
      out += '[' + core::json::quote(link.key) + ']';
    }
  }
  return out;
}

}  // namespace sluice::schema::detail
