#include "core/schema.hpp"
#include "core/schema_internal.hpp"

#include <utility>

namespace sluice::core::schema {

std::string format(const Problem& problem) {
  return problem.path + ": " + problem.reason + " (" + problem.type + ")";
}

Schema::Schema(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}

}  // namespace sluice::core::schema
