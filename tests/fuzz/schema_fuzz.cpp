// JSON Schema compile plus validate (src/schema/schema.hpp). The input is a schema and an
// instance, split at the first NUL byte (no NUL: the input is the schema and also the
// instance); the first byte of the input picks the default dialect. Both are parsed as
// sluice parses them (core::json::parse_strict) and the schema is compiled with the
// default Options.
//
// Properties: compile and validate never crash, leak or run past the bounds; is_valid()
// agrees with validate().empty(); problems are at most max_problems; no problem text
// carries the sentinel when the schema does not (an instance's values never appear).
#include "core/json.hpp"
#include "fuzz_check.hpp"
#include "schema/schema.hpp"

#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace {

using namespace sluice;

void run(std::string_view data) {
  if (data.empty()) return;
  schema::Options options;
  options.default_dialect =
      (data.front() & 1) ? schema::Dialect::draft7 : schema::Dialect::draft2020_12;
  data.remove_prefix(1);
  const std::size_t nul = data.find('\0');
  std::string_view schema_text = data.substr(0, nul);
  std::string_view instance_text = nul == std::string_view::npos ? data : data.substr(nul + 1);

  const core::json::ParseLimits limits{64};
  auto schema_value = core::json::parse_strict(schema_text, limits);
  if (!schema_value) return;
  auto compiled = schema::Schema::compile(*schema_value, options);
  if (!compiled) {
    FUZZ_CHECK(!compiled.error().message.empty());
    return;
  }
  auto instance = core::json::parse_strict(instance_text, limits);
  if (!instance) return;
  std::vector<schema::Problem> problems = compiled->validate(*instance);
  FUZZ_CHECK(problems.size() <= options.max_problems);
  FUZZ_CHECK(compiled->is_valid(*instance) == problems.empty());
  // The schema's own names may be quoted in paths: the sentinel counts only when the schema
  // (its strings decoded) does not hold it.
  const bool schema_has_sentinel =
      fuzz::contains(boost::json::serialize(*schema_value), fuzz::kSentinel);
  for (const schema::Problem& p : problems) {
    std::string line = schema::format(p);
    FUZZ_CHECK(!line.empty());
    if (!schema_has_sentinel) FUZZ_CHECK(!fuzz::contains(line, fuzz::kSentinel));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
