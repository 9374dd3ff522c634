#include "schema/schema.hpp"
#include "../cpu_time.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <string>
#include <thread>
#include <vector>

namespace sluice::schema {
namespace {

namespace bj = boost::json;

bj::value parse(std::string_view text) {
  bj::parse_options options;
  options.max_depth = 1024;
  return bj::parse(text, {}, options);
}

Schema compile_ok(std::string_view text, const Options& options = {}) {
  auto compiled = Schema::compile(parse(text), options);
  EXPECT_TRUE(compiled.has_value()) << (compiled ? "" : compiled.error().message);
  return *compiled;
}

std::string compile_error(std::string_view text, const Options& options = {}) {
  auto compiled = Schema::compile(parse(text), options);
  EXPECT_FALSE(compiled.has_value()) << text;
  return compiled ? std::string() : compiled.error().message;
}

std::vector<std::string> formatted(const Schema& schema, std::string_view instance) {
  std::vector<std::string> out;
  for (const auto& problem : schema.validate(parse(instance))) out.push_back(format(problem));
  return out;
}

using Lines = std::vector<std::string>;

TEST(SchemaProblems, FormatIsPathThenReasonThenType) {
  Problem problem{"$.count", "must be at least 1", "a number"};
  EXPECT_EQ(format(problem), "$.count: must be at least 1 (a number)");
}

TEST(SchemaProblems, AViolatedBoundNamesTheSchemaLimitAndDescribesTheValue) {
  Schema schema = compile_ok(R"({"type": "object",
      "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 10}}})");
  EXPECT_EQ(formatted(schema, R"({"count": 0})"),
            Lines{"$.count: must be at least 1 (an integer)"});
  EXPECT_EQ(formatted(schema, R"({"count": 12345})"),
            Lines{"$.count: must be at most 10 (an integer)"});
  EXPECT_EQ(formatted(schema, R"({"count": "7"})"),
            Lines{"$.count: must be an integer (a string of 1 character)"});
  EXPECT_TRUE(schema.validate(bj::parse(R"({"count": 3})")).empty());
}

TEST(SchemaProblems, UndeclaredKeysRenderAsEntry) {
  Schema schema = compile_ok(R"({"properties": {"name": {"type": "string"}},
                                  "additionalProperties": false})");
  EXPECT_EQ(formatted(schema, R"({"name": "x", "api_token": "hunter2"})"),
            Lines{"$.entry: is not allowed (a string of 7 characters)"});
}

TEST(SchemaProblems, UnevaluatedAndPatternMatchedKeysRenderAsEntry) {
  Schema schema = compile_ok(R"({"patternProperties": {"^x-": {"type": "integer"}},
                                  "unevaluatedProperties": false})");
  EXPECT_EQ(formatted(schema, R"({"x-secret": "s", "other": 1})"),
            (Lines{"$.entry: must be an integer (a string of 1 character)",
                   "$.entry: is not allowed (an integer)"}));
}

TEST(SchemaProblems, ArrayIndicesAndNestedDeclaredNamesFormAPath) {
  Schema schema = compile_ok(R"({"properties": {"items": {"type": "array",
      "items": {"properties": {"id": {"type": "string", "maxLength": 3}}}}}})");
  EXPECT_EQ(formatted(schema, R"({"items": [{"id": "a"}, {"id": "b"}, {"id": "long"}]})"),
            Lines{"$.items[2].id: must have at most 3 characters (a string of 4 characters)"});
}

TEST(SchemaProblems, DeclaredNamesThatAreNotIdentifiersAreQuoted) {
  Schema schema = compile_ok(R"({"properties": {"first name": {"type": "string"}}})");
  EXPECT_EQ(formatted(schema, R"({"first name": 1})"),
            Lines{R"($["first name"]: must be a string (an integer))"});
}

TEST(SchemaProblems, MissingRequiredPropertyIsReportedAtItsPathAsAbsent) {
  Schema schema = compile_ok(R"({"required": ["path"],
                                  "dependentRequired": {"mode": ["owner"]}})");
  EXPECT_EQ(formatted(schema, R"({"mode": "x"})"),
            (Lines{"$.path: is required (absent)",
                   "$.owner: is required when a property it depends on is present (absent)"}));
}

TEST(SchemaProblems, CombinatorsReportCountsFromTheSchema) {
  Schema schema = compile_ok(R"({"properties": {
      "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
      "b": {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
      "c": {"not": {"type": "integer"}},
      "d": {"enum": ["x", "y", 3]},
      "e": {"const": "fixed"}}})");
  EXPECT_EQ(formatted(schema, R"({"a": 1, "b": 5, "c": 2, "d": "z", "e": "other"})"),
            (Lines{"$.a: must match at least one of the 2 alternatives (an integer)",
                   "$.b: must match exactly one of the 2 alternatives but matches several "
                   "(an integer)",
                   "$.c: must not match the schema under `not` (an integer)",
                   "$.d: must be one of the 3 allowed values (a string of 1 character)",
                   "$.e: must equal the constant value (a string of 5 characters)"}));
}

TEST(SchemaProblems, ASentinelInTheInstanceNeverAppearsInAnyProblem) {
  const std::string sentinel = "SENTINEL7f3a";
  Options options;
  options.max_problems = 100;
  Schema schema = compile_ok(R"({
      "type": "object",
      "properties": {
        "name": {"type": "string", "maxLength": 4, "pattern": "^[a-z]+$"},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true},
        "size": {"type": "integer", "multipleOf": 5, "exclusiveMaximum": 100},
        "kind": {"const": "file"},
        "nested": {"type": "object", "propertyNames": {"maxLength": 3},
                   "additionalProperties": {"type": "number"}}
      },
      "required": ["name", "mode"],
      "additionalProperties": false})",
                             options);
  std::string instance = R"({
      "name": "SENTINEL7f3a",
      "tags": ["SENTINEL7f3a", "SENTINEL7f3a"],
      "size": 987654321,
      "kind": "SENTINEL7f3a",
      "nested": {"SENTINEL7f3a": "SENTINEL7f3a"},
      "SENTINEL7f3a": 987654321})";
  std::vector<Problem> problems = schema.validate(bj::parse(instance));
  ASSERT_GE(problems.size(), 8u);
  for (const auto& problem : problems) {
    for (const std::string& field : {problem.path, problem.reason, problem.type}) {
      EXPECT_EQ(field.find(sentinel), std::string::npos) << format(problem);
      EXPECT_EQ(field.find("987654321"), std::string::npos) << format(problem);
    }
  }
}

TEST(SchemaProblems, MaxProblemsCapsTheList) {
  Options options;
  options.max_problems = 3;
  Schema schema = compile_ok(R"({"items": {"type": "string"}})", options);
  EXPECT_EQ(schema.validate(bj::parse("[1, 2, 3, 4, 5, 6]")).size(), 3u);
  EXPECT_FALSE(schema.is_valid(bj::parse("[1, 2, 3, 4, 5, 6]")));
}

TEST(SchemaProblems, DuplicateItemIsReportedAtItsIndex) {
  Schema schema = compile_ok(R"({"uniqueItems": true})");
  EXPECT_EQ(formatted(schema, R"([1, {"a": [2]}, 3, {"a": [2.0]}])"),
            Lines{"$[3]: must not repeat an earlier item (an object with 1 key)"});
}

TEST(SchemaValidate, NumbersCompareByValueWhateverTheirRepresentation) {
  Schema unique = compile_ok(R"({"uniqueItems": true})");
  EXPECT_FALSE(unique.is_valid(bj::parse("[1, 1.0]")));
  EXPECT_FALSE(unique.is_valid(bj::parse("[-0.0, 0]")));
  std::string many = "[";
  for (int i = 0; i < 1000; ++i) many += std::to_string(i) + ",";
  EXPECT_TRUE(unique.is_valid(bj::parse(many + "1000.5]")));
  EXPECT_FALSE(unique.is_valid(bj::parse(many + "999.0]")));
  Schema one = compile_ok(R"({"enum": [1, 18446744073709551615]})");
  EXPECT_TRUE(one.is_valid(bj::parse("1.0")));
  EXPECT_TRUE(one.is_valid(bj::parse("18446744073709551615")));
  EXPECT_FALSE(one.is_valid(bj::parse("18446744073709551614")));
}

TEST(SchemaValidate, MultipleOfIsExactForIntegersAndTolerantForFractions) {
  Schema three = compile_ok(R"({"multipleOf": 3})");
  // 2^53 + 1 and 2^53 + 2 are the same double; only one is a multiple of 3.
  EXPECT_TRUE(three.is_valid(bj::parse("9007199254740993")));
  EXPECT_FALSE(three.is_valid(bj::parse("9007199254740994")));
  Schema tenth = compile_ok(R"({"multipleOf": 0.1})");
  EXPECT_TRUE(tenth.is_valid(bj::parse("0.3")));
  EXPECT_TRUE(tenth.is_valid(bj::parse("4.7")));
  EXPECT_FALSE(tenth.is_valid(bj::parse("0.35")));
}

TEST(SchemaValidate, StringLengthsCountCodePoints) {
  Schema schema = compile_ok(R"({"minLength": 2, "maxLength": 2})");
  EXPECT_TRUE(schema.is_valid(bj::value("\xC3\xA9\xF0\x9F\x98\x80")));  // e-acute, emoji
  EXPECT_FALSE(schema.is_valid(bj::value("\xF0\x9F\x98\x80")));
}

TEST(SchemaValidate, FormatIsAnAnnotationOnly) {
  Schema schema = compile_ok(R"({"format": "email"})");
  EXPECT_TRUE(schema.is_valid(bj::value("not an email")));
}

TEST(SchemaValidate, SchemaKeywordSelectsDraft7) {
  Schema schema = compile_ok(R"({"$schema": "http://json-schema.org/draft-07/schema#",
      "items": [{"type": "string"}], "additionalItems": false,
      "dependencies": {"a": ["b"]}})");
  EXPECT_TRUE(schema.is_valid(bj::parse(R"(["x"])")));
  EXPECT_FALSE(schema.is_valid(bj::parse(R"(["x", 1])")));
  EXPECT_FALSE(schema.is_valid(bj::parse(R"({"a": 1})")));
}

TEST(SchemaValidate, DefaultDialectIsAnOption) {
  Options options;
  options.default_dialect = Dialect::draft7;
  Schema schema = compile_ok(R"({"$ref": "#/definitions/s", "type": "integer",
                                  "definitions": {"s": {"type": "string"}}})",
                             options);
  // draft-07: `$ref` replaces its siblings, so `type: integer` is ignored.
  EXPECT_TRUE(schema.is_valid(bj::value("text")));
  Schema modern = compile_ok(R"({"$ref": "#/$defs/s", "type": "integer",
                                  "$defs": {"s": {"type": "string"}}})");
  EXPECT_FALSE(modern.is_valid(bj::value("text")));
}

TEST(SchemaValidate, HostilePatternAnswersInLinearTime) {
  Schema schema = compile_ok(R"({"pattern": "^(a+)+$"})");
  std::string text(100000, 'a');
  text += 'b';
  bj::value instance(text);
  const double start = test::thread_cpu_seconds();
  EXPECT_FALSE(schema.is_valid(instance));
  EXPECT_EQ(schema.validate(instance).size(), 1u);
  const double elapsed = test::thread_cpu_seconds() - start;
  // A backtracking engine takes longer than the age of the universe here; RE2 takes
  // milliseconds. The bound only guards against a regression to backtracking.
  EXPECT_LT(elapsed, 5.0) << "validation took " << elapsed << " s of CPU";
  Schema keys = compile_ok(R"({"patternProperties": {"^(a+)+$": false}})");
  bj::object object;
  object[text] = 1;
  EXPECT_TRUE(keys.is_valid(object));
}

TEST(SchemaValidate, ACyclicReferenceOnOneLocationStopsAtTheDepthLimit) {
  Schema self = compile_ok(R"({"$ref": "#"})");
  EXPECT_EQ(formatted(self, "1"),
            Lines{"$: is nested deeper than the validation depth limit of 64 (an integer)"});
  Schema pair = compile_ok(R"({"$ref": "#/$defs/a", "$defs": {
      "a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}})");
  EXPECT_FALSE(pair.is_valid(bj::parse("{}")));
}

TEST(SchemaValidate, RunningIntoALimitUnderNotStillMeansInvalid) {
  Schema paradox = compile_ok(R"({"not": {"$ref": "#"}})");
  EXPECT_FALSE(paradox.is_valid(bj::parse("1")));
  Options shallow;
  shallow.max_depth = 65;
  EXPECT_FALSE(compile_ok(R"({"not": {"$ref": "#"}})", shallow).is_valid(bj::parse("1")));
}

TEST(SchemaValidate, ExponentialSchemasStopAtTheStepLimit) {
  // Each level tries both branches of an anyOf over the next level: 2^40 paths.
  std::string defs;
  for (int i = 0; i < 40; ++i) {
    defs += fmt::format(
        R"("d{}": {{"anyOf": [{{"$ref": "#/$defs/d{}"}}, {{"$ref": "#/$defs/d{}"}}]}},)", i, i + 1,
        i + 1);
  }
  Options options;
  options.max_depth = 128;
  Schema schema =
      compile_ok(R"({"$ref": "#/$defs/d0", "$defs": {)" + defs + R"("d40": false}})", options);
  EXPECT_FALSE(schema.is_valid(bj::parse("1")));
  EXPECT_EQ(formatted(schema, "1"),
            Lines{"$: needs more than the validation limit of 1000000 steps (an integer)"});
}

TEST(SchemaValidate, DeepInstancesStopAtTheDepthLimit) {
  Options options;
  options.max_depth = 10;
  Schema tree = compile_ok(R"({"type": "array", "items": {"$ref": "#"}})", options);
  EXPECT_TRUE(tree.is_valid(bj::parse("[[[[]]]]")));
  std::string deep(20, '[');
  deep += std::string(20, ']');
  EXPECT_FALSE(tree.is_valid(parse(deep)));
}

TEST(SchemaValidate, ManyThreadsMayValidateWithOneSchema) {
  Schema schema = compile_ok(R"({"properties": {"n": {"type": "integer", "minimum": 0}},
      "unevaluatedProperties": false})");
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Schema copy = schema;
      for (int i = 0; i < 500; ++i) {
        if (!copy.is_valid(bj::parse(R"({"n": 1})"))) ++failures[t];
        if (copy.validate(bj::parse(R"({"n": -1, "x": 0})")).size() != 2) ++failures[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST(SchemaCompile, RefusesRemoteReferences) {
  EXPECT_NE(compile_error(R"({"$ref": "https://example.com/other.json"})").find("remote reference"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"properties": {"a": {"$ref": "other.json#/x"}}})")
                .find("schema at #/properties/a/$ref: is a remote reference"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"$ref": "https://json-schema.org/draft/2020-12/schema"})")
                .find("remote reference"),
            std::string::npos);
}

TEST(SchemaCompile, ResolvesIdsAndAnchorsWithinTheDocument) {
  Schema schema = compile_ok(R"({"$id": "https://example.com/root.json",
      "properties": {"a": {"$ref": "item.json"}, "b": {"$ref": "#name"}},
      "$defs": {"item": {"$id": "item.json", "type": "integer"},
                "named": {"$anchor": "name", "type": "string"}}})");
  EXPECT_TRUE(schema.is_valid(bj::parse(R"({"a": 1, "b": "x"})")));
  EXPECT_FALSE(schema.is_valid(bj::parse(R"({"a": "1"})")));
  EXPECT_FALSE(schema.is_valid(bj::parse(R"({"b": 1})")));
}

TEST(SchemaCompile, RefusesReferencesToNothing) {
  EXPECT_NE(compile_error(R"({"$ref": "#/$defs/missing"})").find("points to nothing"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"$ref": "#missing"})").find("anchor"), std::string::npos);
}

TEST(SchemaCompile, RefusesUnknownDialects) {
  EXPECT_NE(
      compile_error(R"({"$schema": "http://json-schema.org/draft-04/schema#"})").find("dialect"),
      std::string::npos);
}

TEST(SchemaCompile, RefusesSchemasNestedDeeperThanTheLimit) {
  std::string deep = "true";
  for (int i = 0; i < 70; ++i) deep = R"({"items": )" + deep + "}";
  std::string error = compile_error(deep);
  EXPECT_NE(error.find("nested deeper than 64 levels"), std::string::npos) << error;
  Options options;
  options.max_depth = 100;
  compile_ok(deep, options);
}

TEST(SchemaCompile, RefusesPatternsRe2CannotRunWithoutCrashing) {
  for (std::string_view schema :
       {R"({"pattern": "(?=a)b"})", R"({"pattern": "(a)\\1"})", R"({"pattern": "(unclosed"})",
        R"({"patternProperties": {"(?<!x)y": true}})"}) {
    EXPECT_NE(compile_error(schema).find("RE2"), std::string::npos) << schema;
  }
}

TEST(SchemaCompile, ErrorsNameTheSchemaLocationAndKindButNotTheValue) {
  std::string error = compile_error(R"({"properties": {"n": {"minimum": "SENTINEL7f3a"}}})");
  EXPECT_EQ(error, "schema at #/properties/n/minimum: must be a number");
  EXPECT_EQ(compile_error(R"({"items": [true]})"),
            "schema at #/items: must be a schema (the array form is draft-07's; 2020-12 uses "
            "prefixItems)");
  EXPECT_EQ(compile_error(R"({"type": "text"})"),
            "schema at #/type: must be a type name or an array of unique type names");
  EXPECT_EQ(compile_error("[1]"), "schema at #: must be a schema (an object or a boolean)");
}

}  // namespace
}  // namespace sluice::schema
