// The second half of the schema compiler: each subschema's keywords, checked once and
// turned into a Node. Errors name a JSON pointer into the schema and the kind of problem.
#include "schema/detail/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sluice::schema::detail {
namespace bj = boost::json;

namespace {

bool as_count(const bj::value& v, std::uint64_t& out) {
  if (!is_integral(v)) return false;
  if (v.is_int64()) {
    if (v.get_int64() < 0) return false;
    out = static_cast<std::uint64_t>(v.get_int64());
  } else if (v.is_uint64()) {
    out = v.get_uint64();
  } else {
    double d = v.get_double();
    if (d < 0) return false;
    out = d >= 18446744073709551615.0 ? kUnbounded : static_cast<std::uint64_t>(d);
  }
  return true;
}

}  // namespace

bool Compiler::compile(NodeId id, const bj::value& v, std::uint32_t resource, std::size_t depth) {
  if (depth > out_.options.max_depth) {
    return fail(fmt::format("is nested deeper than {} levels", out_.options.max_depth));
  }
  out_.nodes[id].compiled = true;
  Node n;
  n.compiled = true;
  n.resource = resource;
  if (v.is_bool()) {
    n.boolean = v.get_bool() ? 1 : 0;
    out_.nodes[id] = std::move(n);
    return true;
  }
  const bj::object* obj = v.if_object();
  if (obj == nullptr) return fail("must be a schema (an object or a boolean)");
  if (const bj::value* dialect = obj->if_contains("$schema")) {
    Step step(where_, "$schema");
    if (!dialect->is_string()) return fail("must be a string");
    auto named = dialect_of(dialect->get_string());
    if (!named) return fail("names a dialect that is not supported (2020-12 and draft-07 are)");
    if (*named != dialect_) return fail("names a different dialect than the document root");
  }
  if (!compile_ref(*obj, resource, n)) return false;
  // In draft-07 `$ref` replaces every sibling keyword.
  bool siblings = is_2020() || n.ref == kNoNode;
  if (siblings) {
    bool ok = compile_assertions(*obj, n) && compile_object_keywords(*obj, resource, depth, n) &&
              compile_array_keywords(*obj, resource, depth, n) &&
              child_list(*obj, "allOf", resource, depth, n.all_of) &&
              child_list(*obj, "anyOf", resource, depth, n.any_of) &&
              child_list(*obj, "oneOf", resource, depth, n.one_of) &&
              child_at(*obj, "not", resource, depth, n.not_) &&
              child_at(*obj, "if", resource, depth, n.if_) &&
              child_at(*obj, "then", resource, depth, n.then_) &&
              child_at(*obj, "else", resource, depth, n.else_) &&
              child_map(*obj, is_2020() ? "$defs" : "definitions", resource, depth, nullptr);
    if (!ok) return false;
  }
  out_.nodes[id] = std::move(n);
  return true;
}

bool Compiler::compile_assertions(const bj::object& obj, Node& n) {
  if (!types_at(obj, n.types)) return false;
  if (const bj::value* values = obj.if_contains("enum")) {
    Step step(where_, "enum");
    if (!values->is_array()) return fail("must be an array");
    n.enum_values = &values->get_array();
  }
  n.const_value = obj.if_contains("const");
  if (!number_at(obj, "minimum", n.minimum) || !number_at(obj, "maximum", n.maximum) ||
      !number_at(obj, "exclusiveMinimum", n.exclusive_minimum) ||
      !number_at(obj, "exclusiveMaximum", n.exclusive_maximum) ||
      !number_at(obj, "multipleOf", n.multiple_of)) {
    return false;
  }
  if (n.multiple_of != nullptr && compare_numbers(*n.multiple_of, bj::value(0)) <= 0) {
    Step step(where_, "multipleOf");
    return fail("must be greater than 0");
  }
  if (!count_at(obj, "minLength", n.min_length) || !count_at(obj, "maxLength", n.max_length)) {
    return false;
  }
  if (const bj::value* pattern = obj.if_contains("pattern")) {
    Step step(where_, "pattern");
    if (!pattern->is_string()) return fail("must be a string");
    n.pattern = regex(pattern->get_string());
    if (n.pattern == nullptr) return false;
  }
  return true;
}

bool Compiler::compile_object_keywords(const bj::object& obj, std::uint32_t resource,
                                       std::size_t depth, Node& n) {
  if (!child_map(obj, "properties", resource, depth, &n.properties)) return false;
  for (const auto& property : n.properties) out_.declared_names.push_back(property.name);
  if (const bj::value* patterns = obj.if_contains("patternProperties")) {
    Step step(where_, "patternProperties");
    if (!patterns->is_object()) return fail("must be an object of schemas");
    for (const auto& member : patterns->get_object()) {
      Step item(where_, member.key());
      PatternNode entry;
      entry.regex = regex(member.key());
      if (entry.regex == nullptr || !child(member.value(), resource, depth, entry.node)) {
        return false;
      }
      n.pattern_properties.push_back(entry);
    }
  }
  if (!child_at(obj, "additionalProperties", resource, depth, n.additional_properties) ||
      !child_at(obj, "propertyNames", resource, depth, n.property_names) ||
      !count_at(obj, "minProperties", n.min_properties) ||
      !count_at(obj, "maxProperties", n.max_properties)) {
    return false;
  }
  if (const bj::value* required = obj.if_contains("required")) {
    Step step(where_, "required");
    if (!names_at(*required, n.required)) return false;
  }
  std::string_view dependencies = is_2020() ? "dependentRequired" : "dependencies";
  if (const bj::value* map = obj.if_contains(dependencies)) {
    Step step(where_, dependencies);
    if (!map->is_object()) return fail("must be an object");
    for (const auto& member : map->get_object()) {
      Step item(where_, member.key());
      out_.declared_names.emplace_back(member.key());
      if (!member.value().is_array()) {
        if (is_2020()) return fail("must be an array of unique strings");
        NodeId id = kNoNode;
        if (!child(member.value(), resource, depth, id)) return false;
        n.dependent_schemas.push_back({std::string(member.key()), id});
        continue;
      }
      DependentNames entry{std::string(member.key()), {}};
      if (!names_at(member.value(), entry.required)) return false;
      n.dependent_required.push_back(std::move(entry));
    }
  }
  if (is_2020()) {
    if (!child_map(obj, "dependentSchemas", resource, depth, &n.dependent_schemas) ||
        !child_at(obj, "unevaluatedProperties", resource, depth, n.unevaluated_properties)) {
      return false;
    }
    for (const auto& dependent : n.dependent_schemas) {
      out_.declared_names.push_back(dependent.name);
    }
  }
  return true;
}

bool Compiler::compile_array_keywords(const bj::object& obj, std::uint32_t resource,
                                      std::size_t depth, Node& n) {
  if (!count_at(obj, "minItems", n.min_items) || !count_at(obj, "maxItems", n.max_items) ||
      !child_at(obj, "contains", resource, depth, n.contains)) {
    return false;
  }
  if (const bj::value* unique = obj.if_contains("uniqueItems")) {
    Step step(where_, "uniqueItems");
    if (!unique->is_bool()) return fail("must be a boolean");
    n.unique_items = unique->get_bool();
  }
  const bj::value* items = obj.if_contains("items");
  if (is_2020()) {
    if (items != nullptr && items->is_array()) {
      Step step(where_, "items");
      return fail("must be a schema (the array form is draft-07's; 2020-12 uses prefixItems)");
    }
    return child_list(obj, "prefixItems", resource, depth, n.prefix_items) &&
           child_at(obj, "items", resource, depth, n.items) &&
           count_at(obj, "minContains", n.min_contains) &&
           count_at(obj, "maxContains", n.max_contains) &&
           child_at(obj, "unevaluatedItems", resource, depth, n.unevaluated_items);
  }
  if (items == nullptr || !items->is_array()) {
    return child_at(obj, "items", resource, depth, n.items);
  }
  {
    Step step(where_, "items");
    const auto& tuple = items->get_array();
    n.prefix_items.resize(tuple.size());
    for (std::size_t i = 0; i < tuple.size(); ++i) {
      Step item(where_, i);
      if (!child(tuple[i], resource, depth, n.prefix_items[i])) return false;
    }
  }
  return child_at(obj, "additionalItems", resource, depth, n.items);
}

// A structural child: compiled now, within the depth bound.
bool Compiler::child(const bj::value& v, std::uint32_t resource, std::size_t depth, NodeId& out) {
  out = node_for(v);
  if (out_.nodes[out].compiled) return true;
  auto located = located_.find(&v);
  if (located != located_.end()) resource = located->second.resource;
  return compile(out, v, resource, depth + 1);
}

bool Compiler::child_at(const bj::object& obj, std::string_view keyword, std::uint32_t resource,
                        std::size_t depth, NodeId& out) {
  const bj::value* v = obj.if_contains(keyword);
  if (v == nullptr) return true;
  Step step(where_, keyword);
  return child(*v, resource, depth, out);
}

bool Compiler::child_list(const bj::object& obj, std::string_view keyword, std::uint32_t resource,
                          std::size_t depth, std::vector<NodeId>& out) {
  const bj::value* v = obj.if_contains(keyword);
  if (v == nullptr) return true;
  Step step(where_, keyword);
  if (!v->is_array() || v->get_array().empty()) return fail("must be a non-empty array of schemas");
  const auto& arr = v->get_array();
  out.resize(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    Step item(where_, i);
    if (!child(arr[i], resource, depth, out[i])) return false;
  }
  return true;
}

bool Compiler::child_map(const bj::object& obj, std::string_view keyword, std::uint32_t resource,
                         std::size_t depth, std::vector<NamedNode>* out) {
  const bj::value* v = obj.if_contains(keyword);
  if (v == nullptr) return true;
  Step step(where_, keyword);
  if (!v->is_object()) return fail("must be an object of schemas");
  for (const auto& member : v->get_object()) {
    Step item(where_, member.key());
    NodeId id = kNoNode;
    if (!child(member.value(), resource, depth, id)) return false;
    if (out != nullptr) out->push_back({std::string(member.key()), id});
  }
  if (out != nullptr) {
    std::sort(out->begin(), out->end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
  }
  return true;
}

bool Compiler::count_at(const bj::object& obj, std::string_view keyword, std::uint64_t& out) {
  const bj::value* v = obj.if_contains(keyword);
  if (v == nullptr) return true;
  Step step(where_, keyword);
  if (!as_count(*v, out)) return fail("must be a non-negative integer");
  return true;
}

bool Compiler::number_at(const bj::object& obj, std::string_view keyword, const bj::value*& out) {
  const bj::value* v = obj.if_contains(keyword);
  if (v == nullptr) return true;
  Step step(where_, keyword);
  if (!is_number(*v)) return fail("must be a number");
  out = v;
  return true;
}

bool Compiler::names_at(const bj::value& v, std::vector<std::string>& out) {
  if (!v.is_array()) return fail("must be an array of unique strings");
  for (const auto& item : v.get_array()) {
    if (!item.is_string()) return fail("must be an array of unique strings");
    std::string name(item.get_string());
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return fail("must be an array of unique strings");
    }
    out_.declared_names.push_back(name);
    out.push_back(std::move(name));
  }
  return true;
}

const RE2* Compiler::regex(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_never_capture(true);
  auto compiled = std::make_unique<RE2>(ecma_to_re2(pattern), options);
  if (!compiled->ok()) {
    fail(
        "is not a regular expression RE2 accepts (lookaround and backreferences are not "
        "supported)");
    return nullptr;
  }
  out_.regexes.push_back(std::move(compiled));
  return out_.regexes.back().get();
}

bool Compiler::types_at(const bj::object& obj, std::uint8_t& out) {
  const bj::value* v = obj.if_contains("type");
  if (v == nullptr) return true;
  Step step(where_, "type");
  static constexpr std::pair<std::string_view, std::uint8_t> kNames[] = {
      {"null", kTypeNull},      {"boolean", kTypeBoolean}, {"object", kTypeObject},
      {"array", kTypeArray},    {"number", kTypeNumber},   {"string", kTypeString},
      {"integer", kTypeInteger}};
  auto add = [&](const bj::value& name) {
    for (const auto& [text, bit] : kNames) {
      if (name.is_string() && name.get_string() == text && (out & bit) == 0) {
        out |= bit;
        return true;
      }
    }
    return fail("must be a type name or an array of unique type names");
  };
  if (!v->is_array()) return add(*v);
  for (const auto& name : v->get_array()) {
    if (!add(name)) return false;
  }
  return true;
}

}  // namespace sluice::schema::detail
