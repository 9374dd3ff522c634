// Schema::validate(): walks the compiled nodes over an instance. Problems are built only at
// the point of failure, from a fixed set of reasons whose only variable parts come from the
// schema, so instance content cannot reach them.
#include "core/describe.hpp"
#include "schema/detail/compiled.hpp"
#include "schema/detail/problem.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace sluice::schema {
namespace bj = boost::json;
using detail::kNoNode;
using detail::kUnbounded;
using detail::Node;
using detail::NodeId;
using detail::PathLink;
using detail::Reason;
using detail::ReasonDetail;

namespace {

// The dynamic scope: schema resources entered on the way to the current node.
struct ScopeLink {
  const ScopeLink* parent = nullptr;
  std::uint32_t resource = 0;
};

// Annotation results at one instance location: which members or items some keyword has
// evaluated, by position. Only kept when an `unevaluated*` keyword needs them.
class Marks {
 public:
  explicit Marks(std::size_t size) : bits_(size, false) {}
  void set(std::size_t i) { bits_[i] = true; }
  void set_all() { std::fill(bits_.begin(), bits_.end(), true); }
  bool test(std::size_t i) const { return bits_[i]; }
  void merge(const Marks& other) {
    for (std::size_t i = 0; i < bits_.size(); ++i) {
      if (other.bits_[i]) bits_[i] = true;
    }
  }

 private:
  std::vector<bool> bits_;
};

std::size_t container_size(const bj::value& v) {
  if (const bj::object* obj = v.if_object()) return obj->size();
  if (const bj::array* arr = v.if_array()) return arr->size();
  return 0;
}

bool type_matches(std::uint8_t types, const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null:
      return (types & detail::kTypeNull) != 0;
    case bj::kind::bool_:
      return (types & detail::kTypeBoolean) != 0;
    case bj::kind::object:
      return (types & detail::kTypeObject) != 0;
    case bj::kind::array:
      return (types & detail::kTypeArray) != 0;
    case bj::kind::string:
      return (types & detail::kTypeString) != 0;
    case bj::kind::int64:
    case bj::kind::uint64:
    case bj::kind::double_:
      return (types & detail::kTypeNumber) != 0 ||
             ((types & detail::kTypeInteger) != 0 && detail::is_integral(v));
  }
  return false;
}

// The `properties` entry of `n` for `name`, or null.
const detail::NamedNode* find_property(const Node& n, std::string_view name) {
  auto it = std::lower_bound(
      n.properties.begin(), n.properties.end(), name,
      [](const detail::NamedNode& entry, std::string_view key) { return entry.name < key; });
  return it != n.properties.end() && it->name == name ? &*it : nullptr;
}

// One walk of an instance. `problems_` is null for is_valid(); a frame evaluated quietly
// (inside anyOf, oneOf, not, if, contains, propertyNames) reports nothing and stops at its
// first failure. Running into Options::max_depth or Options::max_steps aborts the whole walk
// and makes the instance invalid, whatever branch it happened in (a `not` must not turn
// "could not finish" into "valid").
class Evaluator {
 public:
  Evaluator(const Schema::Compiled& compiled, std::vector<Problem>* problems)
      : c_(compiled), problems_(problems) {}

  bool run(const bj::value& instance) {
    bool valid = eval(c_.root, instance, nullptr, nullptr, 0, nullptr, problems_ != nullptr);
    if (!aborted_) return valid;
    if (problems_ != nullptr) {
      if (full()) problems_->pop_back();
      problems_->push_back(std::move(abort_problem_));
    }
    return false;
  }

 private:
  struct Frame {
    const Node& node;
    const bj::value& inst;
    const PathLink* path;
    const ScopeLink* scope;
    std::size_t depth;
    Marks* marks;  // annotations at this location, or null when nobody needs them
    bool loud;
    bool ok = true;
  };

  bool full() const { return problems_->size() >= c_.options.max_problems; }

  // Records a failure of `f`; true when the frame should stop evaluating.
  bool fail(Frame& f, const PathLink* path, const bj::value* at, Reason reason,
            const ReasonDetail& d = {}) {
    f.ok = false;
    if (!f.loud || aborted_) return true;
    if (!full()) {
      problems_->push_back(Problem{render(path), detail::reason_text(reason, d),
                                   at ? core::describe_value(*at) : "absent"});
    }
    return full();
  }

  // A subschema failed (and reported its own problems); true when `f` should stop.
  bool failed(Frame& f) {
    f.ok = false;
    return !f.loud || full() || aborted_;
  }

  // Stops the whole walk; the first reason is the one reported.
  bool abort(const PathLink* path, const bj::value& at, Reason reason, std::uint64_t limit) {
    if (!aborted_ && problems_ != nullptr) {
      abort_problem_ = Problem{render(path), detail::reason_text(reason, {.count = limit}),
                               core::describe_value(at)};
    }
    aborted_ = true;
    return false;
  }

  std::string render(const PathLink* path) const {
    return detail::render_path(path, c_.declared_names);
  }

  bool eval(NodeId id, const bj::value& inst, const PathLink* path, const ScopeLink* scope,
            std::size_t depth, Marks* marks, bool loud);
  bool eval_assertions(Frame& f);
  bool eval_object(Frame& f);
  bool eval_array(Frame& f);
  bool eval_in_place(Frame& f);
  bool eval_unevaluated(Frame& f);
  NodeId dynamic_target(const Node& n, const ScopeLink* scope) const;

  // Evaluates `id` at the same location as `f`, sharing its annotations.
  bool same_location(Frame& f, NodeId id, Marks* marks, bool loud) {
    return eval(id, f.inst, f.path, f.scope, f.depth + 1, marks, loud);
  }

  const Schema::Compiled& c_;
  std::vector<Problem>* problems_;
  std::uint64_t steps_ = 0;
  bool aborted_ = false;
  Problem abort_problem_;
};

bool Evaluator::eval(NodeId id, const bj::value& inst, const PathLink* path, const ScopeLink* scope,
                     std::size_t depth, Marks* marks, bool loud) {
  if (aborted_) return false;
  if (depth > c_.options.max_depth) {
    return abort(path, inst, Reason::too_deep, c_.options.max_depth);
  }
  if (++steps_ > c_.options.max_steps) {
    return abort(path, inst, Reason::too_much_work, c_.options.max_steps);
  }
  const Node& n = c_.nodes[id];
  if (n.boolean >= 0) {
    if (n.boolean == 1) return true;
    Frame f{n, inst, path, scope, depth, nullptr, loud};
    fail(f, path, &inst, Reason::not_allowed);
    return false;
  }
  ScopeLink link{scope, n.resource};
  if (c_.tracks_dynamic_scope && (scope == nullptr || scope->resource != n.resource)) {
    scope = &link;
  }
  bool container = inst.is_object() || inst.is_array();
  bool tracks_here = (inst.is_object() && n.unevaluated_properties != kNoNode) ||
                     (inst.is_array() && n.unevaluated_items != kNoNode);
  std::optional<Marks> local;
  if (tracks_here) local.emplace(container_size(inst));
  Frame f{n, inst, path, scope, depth, tracks_here ? &*local : (container ? marks : nullptr), loud};
  bool completed = eval_assertions(f) && eval_in_place(f) &&
                   (!inst.is_object() || eval_object(f)) && (!inst.is_array() || eval_array(f)) &&
                   eval_unevaluated(f);
  if (completed && tracks_here && marks != nullptr) marks->merge(*local);
  return f.ok;
}

bool Evaluator::eval_assertions(Frame& f) {
  const Node& n = f.node;
  const bj::value& v = f.inst;
  if (n.types != 0 && !type_matches(n.types, v) &&
      fail(f, f.path, &v, Reason::type, {.types = n.types})) {
    return false;
  }
  if (n.enum_values != nullptr &&
      std::none_of(n.enum_values->begin(), n.enum_values->end(),
                   [&](const bj::value& allowed) { return detail::json_equal(allowed, v); }) &&
      fail(f, f.path, &v, Reason::enum_value, {.count = n.enum_values->size()})) {
    return false;
  }
  if (n.const_value != nullptr && !detail::json_equal(*n.const_value, v) &&
      fail(f, f.path, &v, Reason::const_value)) {
    return false;
  }
  if (detail::is_number(v)) {
    struct Bound {
      const bj::value* limit;
      bool (*violated)(int);
      Reason reason;
    };
    const Bound bounds[] = {
        {n.minimum, [](int c) { return c < 0; }, Reason::minimum},
        {n.maximum, [](int c) { return c > 0; }, Reason::maximum},
        {n.exclusive_minimum, [](int c) { return c <= 0; }, Reason::exclusive_minimum},
        {n.exclusive_maximum, [](int c) { return c >= 0; }, Reason::exclusive_maximum},
    };
    for (const Bound& bound : bounds) {
      if (bound.limit != nullptr && bound.violated(detail::compare_numbers(v, *bound.limit)) &&
          fail(f, f.path, &v, bound.reason, {.limit = bound.limit})) {
        return false;
      }
    }
    if (n.multiple_of != nullptr && !detail::is_multiple_of(v, *n.multiple_of) &&
        fail(f, f.path, &v, Reason::multiple_of, {.limit = n.multiple_of})) {
      return false;
    }
  }
  if (const bj::string* s = v.if_string()) {
    // Code points never outnumber bytes: a short enough string needs no counting.
    if (n.min_length > 0 || n.max_length < s->size()) {
      std::size_t length = detail::code_points(*s);
      if (length < n.min_length &&
          fail(f, f.path, &v, Reason::min_length, {.count = n.min_length})) {
        return false;
      }
      if (length > n.max_length &&
          fail(f, f.path, &v, Reason::max_length, {.count = n.max_length})) {
        return false;
      }
    }
    if (n.pattern != nullptr &&
        !RE2::PartialMatch(re2::StringPiece(s->data(), s->size()), *n.pattern) &&
        fail(f, f.path, &v, Reason::pattern)) {
      return false;
    }
  }
  return true;
}

bool Evaluator::eval_object(Frame& f) {
  const Node& n = f.node;
  const bj::object& obj = f.inst.get_object();
  if (obj.size() < n.min_properties &&
      fail(f, f.path, &f.inst, Reason::min_properties, {.count = n.min_properties})) {
    return false;
  }
  if (obj.size() > n.max_properties &&
      fail(f, f.path, &f.inst, Reason::max_properties, {.count = n.max_properties})) {
    return false;
  }
  for (const std::string& name : n.required) {
    PathLink missing{f.path, name, 0, true};
    if (!obj.contains(name) && fail(f, &missing, nullptr, Reason::required)) return false;
  }
  for (const auto& dependency : n.dependent_required) {
    if (!obj.contains(dependency.name)) continue;
    for (const std::string& name : dependency.required) {
      PathLink missing{f.path, name, 0, true};
      if (!obj.contains(name) && fail(f, &missing, nullptr, Reason::dependent_required)) {
        return false;
      }
    }
  }
  for (const auto& dependent : n.dependent_schemas) {
    if (obj.contains(dependent.name) && !same_location(f, dependent.node, f.marks, f.loud) &&
        failed(f)) {
      return false;
    }
  }
  if (n.properties.empty() && n.pattern_properties.empty() && n.additional_properties == kNoNode &&
      n.property_names == kNoNode) {
    return true;
  }
  // One pass over the members: each finds its `properties` entry by binary search.
  std::size_t index = 0;
  for (const auto& entry : obj) {
    std::string_view key = entry.key();
    PathLink member{f.path, key, 0, true};
    const detail::NamedNode* property = find_property(n, key);
    bool evaluated = property != nullptr;
    if (property != nullptr &&
        !eval(property->node, entry.value(), &member, f.scope, f.depth + 1, nullptr, f.loud) &&
        failed(f)) {
      return false;
    }
    for (const auto& pattern : n.pattern_properties) {
      if (!RE2::PartialMatch(re2::StringPiece(key.data(), key.size()), *pattern.regex)) continue;
      evaluated = true;
      if (!eval(pattern.node, entry.value(), &member, f.scope, f.depth + 1, nullptr, f.loud) &&
          failed(f)) {
        return false;
      }
    }
    if (n.additional_properties != kNoNode && !evaluated) {
      evaluated = true;
      if (!eval(n.additional_properties, entry.value(), &member, f.scope, f.depth + 1, nullptr,
                f.loud) &&
          failed(f)) {
        return false;
      }
    }
    if (evaluated && f.marks != nullptr) f.marks->set(index);
    if (n.property_names != kNoNode) {
      bj::value name(key);
      if (!eval(n.property_names, name, &member, f.scope, f.depth + 1, nullptr, false) &&
          fail(f, &member, &entry.value(), Reason::property_name)) {
        return false;
      }
    }
    ++index;
  }
  return true;
}

bool Evaluator::eval_array(Frame& f) {
  const Node& n = f.node;
  const bj::array& arr = f.inst.get_array();
  if (arr.size() < n.min_items &&
      fail(f, f.path, &f.inst, Reason::min_items, {.count = n.min_items})) {
    return false;
  }
  if (arr.size() > n.max_items &&
      fail(f, f.path, &f.inst, Reason::max_items, {.count = n.max_items})) {
    return false;
  }
  if (n.unique_items) {
    std::size_t duplicate = detail::first_duplicate(arr);
    PathLink item{f.path, {}, duplicate, false};
    if (duplicate != detail::kNoIndex && fail(f, &item, &arr[duplicate], Reason::unique_items)) {
      return false;
    }
  }
  for (std::size_t i = 0; i < arr.size(); ++i) {
    NodeId schema = i < n.prefix_items.size() ? n.prefix_items[i] : n.items;
    if (schema == kNoNode) continue;
    PathLink item{f.path, {}, i, false};
    if (!eval(schema, arr[i], &item, f.scope, f.depth + 1, nullptr, f.loud) && failed(f)) {
      return false;
    }
    if (f.marks != nullptr) f.marks->set(i);
  }
  if (n.contains == kNoNode) return true;
  std::uint64_t matches = 0;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    PathLink item{f.path, {}, i, false};
    if (!eval(n.contains, arr[i], &item, f.scope, f.depth + 1, nullptr, false)) continue;
    ++matches;
    if (f.marks != nullptr) {
      f.marks->set(i);
    } else if (matches >= n.min_contains && n.max_contains == kUnbounded) {
      break;
    }
  }
  if (matches < n.min_contains &&
      fail(f, f.path, &f.inst, Reason::min_contains, {.count = n.min_contains})) {
    return false;
  }
  if (matches > n.max_contains &&
      fail(f, f.path, &f.inst, Reason::max_contains, {.count = n.max_contains})) {
    return false;
  }
  return true;
}

bool Evaluator::eval_in_place(Frame& f) {
  const Node& n = f.node;
  std::size_t size = container_size(f.inst);
  if (n.ref != kNoNode && !same_location(f, n.ref, f.marks, f.loud) && failed(f)) return false;
  if (n.dynamic_ref.initial != kNoNode &&
      !same_location(f, dynamic_target(n, f.scope), f.marks, f.loud) && failed(f)) {
    return false;
  }
  for (NodeId branch : n.all_of) {
    if (!same_location(f, branch, f.marks, f.loud) && failed(f)) return false;
  }
  if (!n.any_of.empty()) {
    bool any = false;
    for (NodeId branch : n.any_of) {
      if (f.marks == nullptr) {
        if (same_location(f, branch, nullptr, false)) {
          any = true;
          break;
        }
        continue;
      }
      // Annotations come from every matching branch, so all are evaluated.
      Marks branch_marks(size);
      if (same_location(f, branch, &branch_marks, false)) {
        any = true;
        f.marks->merge(branch_marks);
      }
    }
    if (!any && fail(f, f.path, &f.inst, Reason::any_of, {.count = n.any_of.size()})) {
      return false;
    }
  }
  if (!n.one_of.empty()) {
    std::size_t matches = 0;
    std::optional<Marks> winner;
    for (NodeId branch : n.one_of) {
      std::optional<Marks> branch_marks;
      if (f.marks != nullptr) branch_marks.emplace(size);
      if (!same_location(f, branch, branch_marks ? &*branch_marks : nullptr, false)) continue;
      if (++matches > 1) break;
      winner = std::move(branch_marks);
    }
    Reason reason = matches == 0 ? Reason::one_of_none : Reason::one_of_many;
    if (matches != 1 && fail(f, f.path, &f.inst, reason, {.count = n.one_of.size()})) {
      return false;
    }
    if (matches == 1 && winner) f.marks->merge(*winner);
  }
  if (n.not_ != kNoNode && same_location(f, n.not_, nullptr, false) &&
      fail(f, f.path, &f.inst, Reason::not_schema)) {
    return false;
  }
  if (n.if_ != kNoNode) {
    std::optional<Marks> condition_marks;
    if (f.marks != nullptr) condition_marks.emplace(size);
    bool condition = same_location(f, n.if_, condition_marks ? &*condition_marks : nullptr, false);
    if (condition && condition_marks) f.marks->merge(*condition_marks);
    NodeId branch = condition ? n.then_ : n.else_;
    if (branch != kNoNode && !same_location(f, branch, f.marks, f.loud) && failed(f)) {
      return false;
    }
  }
  return true;
}

bool Evaluator::eval_unevaluated(Frame& f) {
  const Node& n = f.node;
  NodeId schema = f.inst.is_object()  ? n.unevaluated_properties
                  : f.inst.is_array() ? n.unevaluated_items
                                      : kNoNode;
  if (schema == kNoNode) return true;
  std::size_t index = 0;
  auto visit = [&](const bj::value& value, const PathLink& at) {
    bool stop = !f.marks->test(index) &&
                !eval(schema, value, &at, f.scope, f.depth + 1, nullptr, f.loud) && failed(f);
    ++index;
    return !stop;
  };
  if (const bj::object* obj = f.inst.if_object()) {
    for (const auto& entry : *obj) {
      if (!visit(entry.value(), PathLink{f.path, entry.key(), 0, true})) return false;
    }
  } else {
    for (const auto& item : f.inst.get_array()) {
      if (!visit(item, PathLink{f.path, {}, index, false})) return false;
    }
  }
  f.marks->set_all();
  return true;
}

// `$dynamicRef`: the outermost resource in the dynamic scope that defines the anchor wins.
NodeId Evaluator::dynamic_target(const Node& n, const ScopeLink* scope) const {
  const detail::DynamicRef& ref = n.dynamic_ref;
  if (ref.anchor.empty()) return ref.initial;
  NodeId target = ref.initial;
  for (const ScopeLink* s = scope; s != nullptr; s = s->parent) {
    for (const auto& anchor : c_.resources[s->resource].dynamic_anchors) {
      if (anchor.name == ref.anchor) {
        target = anchor.node;
        break;
      }
    }
  }
  return target;
}

}  // namespace

std::vector<Problem> Schema::validate(const bj::value& instance) const {
  std::vector<Problem> problems;
  Evaluator(*compiled_, &problems).run(instance);
  return problems;
}

bool Schema::is_valid(const bj::value& instance) const {
  return Evaluator(*compiled_, nullptr).run(instance);
}

}  // namespace sluice::schema
