#pragma once
// sluice's own JSON Schema validator: JSON Schema 2020-12 (the MCP default dialect) and
// draft-07 over Boost.JSON, with RE2 for `pattern`, bounded depth, local references only and
// value-free problems. docs/json-schema.md lists what is supported and what is not.
#include "core/error.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sluice::schema {

enum class Dialect { draft7, draft2020_12 };

struct Options {
  // Deepest nesting of subschemas accepted at compile, and deepest chain of nested schema
  // applications (each subschema or `$ref` step counts one) followed while validating; an
  // instance that needs more is invalid. A `$ref` cycle on one location ends here.
  std::size_t max_depth = 64;
  // validate() stops collecting after this many problems.
  std::size_t max_problems = 20;
  // Subschema applications one validate()/is_valid() call may make before it gives up and
  // calls the instance invalid: a bound on schemas whose evaluation grows exponentially
  // (nested anyOf over shared references). A typical tool call takes tens of steps.
  std::uint64_t max_steps = 1'000'000;
  // The dialect of a schema without `$schema`.
  Dialect default_dialect = Dialect::draft2020_12;
};

// One reason an instance is invalid. Value-free by construction: `path` is `$` followed by
// `.name` for property names the schema itself declares (`properties`, `required`,
// `dependentRequired`, `dependentSchemas`, `dependencies`; any other key renders as
// `.entry`) and `[i]` for array indices; `reason` is one of a fixed set of phrases that may
// carry numbers taken from the schema (limits, counts), never from the instance; `type` is
// describe_value() of the instance at `path`, or "absent" for a missing required property.
struct Problem {
  std::string path;
  std::string reason;
  std::string type;
};

// "$.count: must be at least 1 (an integer)".
std::string format(const Problem& problem);

// A compiled schema.
//
// compile() copies the schema document, resolves every reference, compiles every `pattern`
// with RE2 and checks every keyword value, once: compile a schema once and validate with it
// many times. It refuses, with a value-free error ("schema at <JSON pointer>: <kind>"), a
// schema that is malformed, nested deeper than Options::max_depth, in a dialect other than
// 2020-12 or draft-07, or that refers to any other document (remote references).
//
// A Schema is immutable and thread-compatible: copies share the compiled form, and any
// number of threads may call validate()/is_valid() on one at once. Validation never throws
// on instance content and is bounded: at most Options::max_depth nested subschema
// applications and Options::max_steps applications in all; reaching either makes the
// instance invalid, with one problem saying so. Each keyword costs time linear in the
// instance at its location (RE2 matching is linear, `uniqueItems` hashes). Validating a valid
// instance allocates nothing unless the schema uses `unevaluatedProperties`,
// `unevaluatedItems` (annotation tracking) or `propertyNames`.
class Schema {
 public:
  static core::Result<Schema> compile(const boost::json::value& schema,
                                      const Options& options = {});

  // The problems of `instance`, at most Options::max_problems; empty when it is valid.
  std::vector<Problem> validate(const boost::json::value& instance) const;

  // validate().empty(), without building any problem text.
  bool is_valid(const boost::json::value& instance) const;

  struct Compiled;

 private:
  explicit Schema(std::shared_ptr<const Compiled> compiled);

  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace sluice::schema
