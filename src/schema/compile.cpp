// Schema::compile() and the first half of the compiler: schema resources (`$id`), anchors,
// the location of every subschema, and resolution of references within the document.
// Errors name a JSON pointer into the schema and the kind of problem, never a value.
#include "schema/detail/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

namespace sluice::schema {
namespace bj = boost::json;

namespace detail {

std::optional<Dialect> dialect_of(std::string_view uri) {
  if (!uri.empty() && uri.back() == '#') uri.remove_suffix(1);
  if (uri == "https://json-schema.org/draft/2020-12/schema") return Dialect::draft2020_12;
  if (uri == "http://json-schema.org/draft-07/schema" ||
      uri == "https://json-schema.org/draft-07/schema") {
    return Dialect::draft7;
  }
  return std::nullopt;
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// Keywords whose values hold subschemas, by the shape of the value.
enum class Shape { single, map, list, single_or_list, map_of_schema_or_names };

struct Applicator {
  std::string_view keyword;
  Shape shape;
};

constexpr Applicator k2020Applicators[] = {
    {"additionalProperties", Shape::single},
    {"propertyNames", Shape::single},
    {"contains", Shape::single},
    {"not", Shape::single},
    {"if", Shape::single},
    {"then", Shape::single},
    {"else", Shape::single},
    {"items", Shape::single},
    {"unevaluatedItems", Shape::single},
    {"unevaluatedProperties", Shape::single},
    {"contentSchema", Shape::single},
    {"properties", Shape::map},
    {"patternProperties", Shape::map},
    {"$defs", Shape::map},
    {"dependentSchemas", Shape::map},
    {"allOf", Shape::list},
    {"anyOf", Shape::list},
    {"oneOf", Shape::list},
    {"prefixItems", Shape::list},
};

constexpr Applicator kDraft7Applicators[] = {
    {"additionalProperties", Shape::single},
    {"propertyNames", Shape::single},
    {"contains", Shape::single},
    {"not", Shape::single},
    {"if", Shape::single},
    {"then", Shape::single},
    {"else", Shape::single},
    {"additionalItems", Shape::single},
    {"items", Shape::single_or_list},
    {"properties", Shape::map},
    {"patternProperties", Shape::map},
    {"definitions", Shape::map},
    {"dependencies", Shape::map_of_schema_or_names},
    {"allOf", Shape::list},
    {"anyOf", Shape::list},
    {"oneOf", Shape::list},
};

}  // namespace

std::optional<core::Error> Compiler::run() {
  out_.resources.push_back({std::string(kDefaultBase), {}});
  resource_by_uri_.emplace(kDefaultBase, 0);
  resource_roots_.push_back(&out_.document);
  dynamic_anchor_values_.emplace_back();
  if (!index(out_.document, 0, 0)) return error_;
  out_.root = node_for(out_.document);
  if (!drain()) return error_;
  for (std::size_t r = 0; r < out_.resources.size(); ++r) {
    for (const auto& [name, value] : dynamic_anchor_values_[r]) {
      out_.resources[r].dynamic_anchors.push_back({name, node_for(*value)});
    }
  }
  if (!drain()) return error_;
  std::sort(out_.declared_names.begin(), out_.declared_names.end());
  out_.declared_names.erase(std::unique(out_.declared_names.begin(), out_.declared_names.end()),
                            out_.declared_names.end());
  return std::nullopt;
}

bool Compiler::fail(std::string_view kind) {
  if (!error_) error_ = core::make_error(fmt::format("schema at #{}: {}", where_, kind));
  return false;
}

// Pass 1: resources ($id), anchors and the location of every subschema.
bool Compiler::index(const bj::value& v, std::uint32_t resource, std::size_t depth) {
  if (depth > out_.options.max_depth) {
    return fail(fmt::format("is nested deeper than {} levels", out_.options.max_depth));
  }
  const bj::object* obj = v.if_object();
  if (obj == nullptr) {
    located_[&v] = Location{resource, where_};
    return true;
  }
  // In draft-07 `$ref` hides every sibling keyword, `$id` included.
  bool ref_hides_siblings = !is_2020() && obj->contains("$ref");
  if (!ref_hides_siblings) {
    if (const bj::value* id = obj->if_contains("$id")) {
      Step step(where_, "$id");
      if (!id->is_string()) return fail("must be a string");
      if (!add_id(v, id->get_string(), resource)) return false;
    }
    if (is_2020()) {
      for (std::string_view keyword : {"$anchor", "$dynamicAnchor"}) {
        const bj::value* anchor = obj->if_contains(keyword);
        if (anchor == nullptr) continue;
        Step step(where_, keyword);
        if (!anchor->is_string() || anchor->get_string().empty()) {
          return fail("must be a non-empty string");
        }
        if (!add_anchor(v, resource, anchor->get_string())) return false;
        if (keyword == "$dynamicAnchor") {
          dynamic_anchor_values_[resource].emplace_back(anchor->get_string(), &v);
        }
      }
    }
  }
  located_[&v] = Location{resource, where_};
  return index_children(*obj, resource, depth);
}

bool Compiler::index_children(const bj::object& obj, std::uint32_t resource, std::size_t depth) {
  auto table = is_2020() ? std::span<const Applicator>(k2020Applicators)
                         : std::span<const Applicator>(kDraft7Applicators);
  for (const auto& applicator : table) {
    auto it = obj.find(applicator.keyword);
    if (it == obj.end()) continue;
    Step step(where_, applicator.keyword);
    const bj::value& v = it->value();
    bool list = applicator.shape == Shape::list ||
                (applicator.shape == Shape::single_or_list && v.is_array());
    bool map = applicator.shape == Shape::map || applicator.shape == Shape::map_of_schema_or_names;
    if (list && v.is_array()) {
      const auto& arr = v.get_array();
      for (std::size_t i = 0; i < arr.size(); ++i) {
        Step item(where_, i);
        if (!index(arr[i], resource, depth + 1)) return false;
      }
    } else if (map && v.is_object()) {
      for (const auto& member : v.get_object()) {
        if (applicator.shape == Shape::map_of_schema_or_names && member.value().is_array()) {
          continue;
        }
        Step item(where_, member.key());
        if (!index(member.value(), resource, depth + 1)) return false;
      }
    } else if (!list && !map && !index(v, resource, depth + 1)) {
      return false;
    }
  }
  return true;
}

bool Compiler::add_id(const bj::value& v, std::string_view id, std::uint32_t& resource) {
  std::string resolved = resolve_uri(out_.resources[resource].uri, id);
  auto [base, fragment] = split_fragment(resolved);
  if (!fragment.empty() && is_2020()) return fail("must not contain a fragment");
  if (base != out_.resources[resource].uri) {
    std::string key(base);
    if (resource_by_uri_.contains(key)) return fail("repeats an identifier already in use");
    resource = static_cast<std::uint32_t>(out_.resources.size());
    out_.resources.push_back({key, {}});
    resource_by_uri_.emplace(std::move(key), resource);
    resource_roots_.push_back(&v);
    dynamic_anchor_values_.emplace_back();
  }
  // draft-07: `"$id": "#name"` (or "uri#name") is a location-independent anchor.
  if (!fragment.empty()) return add_anchor(v, resource, fragment);
  return true;
}

bool Compiler::add_anchor(const bj::value& v, std::uint32_t resource, std::string_view name) {
  std::string key = fmt::format("{}#{}", out_.resources[resource].uri, name);
  auto [it, inserted] = anchors_.emplace(std::move(key), &v);
  if (!inserted && it->second != &v) return fail("repeats an anchor already in use");
  return true;
}

// The node for a schema value: allocated on first sight, compiled by drain().
NodeId Compiler::node_for(const bj::value& v) {
  auto [it, inserted] = ids_.emplace(&v, static_cast<NodeId>(out_.nodes.size()));
  if (inserted) {
    out_.nodes.emplace_back();
    pending_.push_back(&v);
  }
  return it->second;
}

bool Compiler::drain() {
  while (!pending_.empty()) {
    const bj::value* v = pending_.back();
    pending_.pop_back();
    NodeId id = ids_.at(v);
    if (out_.nodes[id].compiled) continue;
    auto located = located_.find(v);
    std::uint32_t resource = 0;
    if (located != located_.end()) {
      resource = located->second.resource;
      where_ = located->second.pointer;
    } else {
      resource = unlocated_.at(v).resource;
      where_ = unlocated_.at(v).pointer;
    }
    if (!compile(id, *v, resource, 0)) return false;
  }
  return true;
}

// Resolves a reference to the value it names within this document.
bool Compiler::resolve(std::string_view reference, std::uint32_t resource, const bj::value*& target,
                       std::string* anchor) {
  std::string absolute = resolve_uri(out_.resources[resource].uri, reference);
  auto [base, fragment] = split_fragment(absolute);
  auto found = resource_by_uri_.find(std::string(base));
  if (found == resource_by_uri_.end()) {
    return fail(
        "is a remote reference (only references within the same document are "
        "supported)");
  }
  const bj::value* root = resource_roots_[found->second];
  if (fragment.empty()) {
    target = root;
    return true;
  }
  if (fragment[0] != '/') {
    auto it = anchors_.find(absolute);
    if (it == anchors_.end()) return fail("names an anchor the document does not define");
    target = it->second;
    if (anchor != nullptr) *anchor = std::string(fragment);
    return true;
  }
  bool ok = false;
  std::string pointer = percent_decode(fragment, ok);
  if (!ok) return fail("is not a valid URI fragment");
  return walk_pointer(*root, found->second, pointer, target);
}

bool Compiler::walk_pointer(const bj::value& root, std::uint32_t resource, std::string_view pointer,
                            const bj::value*& target) {
  const bj::value* at = &root;
  Location where = located_.count(at) ? located_.at(at) : Location{resource, {}};
  while (!pointer.empty()) {
    pointer.remove_prefix(1);
    std::size_t slash = pointer.find('/');
    std::string_view raw = pointer.substr(0, slash);
    pointer = slash == std::string_view::npos ? std::string_view() : pointer.substr(slash);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    const bj::value* next = nullptr;
    if (const bj::object* obj = at->if_object()) {
      next = obj->if_contains(token);
    } else if (const bj::array* arr = at->if_array()) {
      std::size_t index = 0;
      bool digits = !token.empty() && (token == "0" || token[0] != '0');
      for (char c : token) {
        digits = digits && c >= '0' && c <= '9' && index < arr->size();
        index = index * 10 + static_cast<std::size_t>(c - '0');
      }
      if (digits && index < arr->size()) next = &(*arr)[index];
    }
    if (next == nullptr) return fail("points to nothing in the document");
    at = next;
    auto located = located_.find(at);
    if (located != located_.end()) {
      where = located->second;
    } else {
      where.pointer += "/" + escape_pointer_token(token);
    }
  }
  if (!located_.contains(at)) unlocated_.emplace(at, where);
  target = at;
  return true;
}

bool Compiler::compile_ref(const bj::object& obj, std::uint32_t resource, Node& n) {
  if (const bj::value* ref = obj.if_contains("$ref")) {
    Step step(where_, "$ref");
    const bj::value* target = nullptr;
    if (!ref->is_string()) return fail("must be a string");
    if (!resolve(ref->get_string(), resource, target, nullptr)) return false;
    n.ref = node_for(*target);
  }
  if (const bj::value* ref = is_2020() ? obj.if_contains("$dynamicRef") : nullptr) {
    Step step(where_, "$dynamicRef");
    const bj::value* target = nullptr;
    std::string anchor;
    if (!ref->is_string()) return fail("must be a string");
    if (!resolve(ref->get_string(), resource, target, &anchor)) return false;
    n.dynamic_ref.initial = node_for(*target);
    const auto& dynamic =
        dynamic_anchor_values_[located_.count(target) ? located_.at(target).resource : resource];
    bool is_dynamic = std::any_of(dynamic.begin(), dynamic.end(), [&](const auto& entry) {
      return entry.first == anchor && entry.second == target;
    });
    if (is_dynamic) {
      n.dynamic_ref.anchor = std::move(anchor);
      out_.tracks_dynamic_scope = true;
    }
  }
  return true;
}

}  // namespace detail

core::Result<Schema> Schema::compile(const bj::value& schema, const Options& options) {
  auto compiled = std::make_shared<Compiled>();
  compiled->options = options;
  compiled->options.max_problems = std::max<std::size_t>(1, options.max_problems);
  compiled->document = schema;
  Dialect dialect = options.default_dialect;
  if (const bj::object* root = compiled->document.if_object()) {
    const bj::value* named = root->if_contains("$schema");
    if (named != nullptr && named->is_string()) {
      dialect = detail::dialect_of(named->get_string()).value_or(dialect);
    }
  }
  detail::Compiler compiler(*compiled, dialect);
  if (auto error = compiler.run()) return *error;
  return Schema(std::move(compiled));
}

}  // namespace sluice::schema
