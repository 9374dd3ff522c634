#include "schema/schema.hpp"
#include "schema/detail/compiled.hpp"

#include <utility>

namespace sluice::schema {

std::string format(const Problem& problem) {
  return problem.path + ": " + problem.reason + " (" + problem.type + ")";
}

Schema::Schema(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}

}  // namespace sluice::schema
