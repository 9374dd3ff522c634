#include "config/detail/access_block.hpp"

#include "core/describe.hpp"

#include <re2/re2.h>
#include <boost/json/object.hpp>

#include <array>
#include <string>
#include <string_view>

namespace sluice::config::detail {
namespace {
namespace bj = boost::json;

// The most patterns one list may hold, and the most operator redaction patterns.
constexpr std::size_t kMaxPatterns = 1024;
constexpr std::size_t kMaxRedactPatterns = 64;
constexpr std::size_t kMaxRedactPatternBytes = 1024;

constexpr std::array<Subject, 5> kSubjects{Subject::servers, Subject::tools, Subject::prompts,
                                           Subject::resources, Subject::meta_tools};

std::string_view what_pattern(Subject subject) {
  return subject == Subject::servers      ? "a server name pattern"
         : subject == Subject::meta_tools ? "a meta-tool name pattern"
         : subject == Subject::resources  ? "a pattern server::uri"
                                          : "a pattern server::name";
}

core::Result<PatternLists> parse_lists(const bj::value& v, const Where& at) {
  const bj::object* lists = v.if_object();
  if (lists == nullptr) return wrong_type(at, "an object", v);
  PatternLists out;
  for (Subject subject : kSubjects) {
    const std::string_view key = key_of(subject);
    const bj::value* list = lists->if_contains(bj::string_view(key.data(), key.size()));
    if (list == nullptr) continue;
    const Where where = at.key(key);
    const bj::array* items = list->if_array();
    if (items == nullptr) return wrong_type(where, "an array of strings", *list);
    if (items->size() > kMaxPatterns) {
      return problem(where, fmt::format("more than {} patterns", kMaxPatterns));
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      const bj::value& item = (*items)[i];
      const bj::string* pattern = item.if_string();
      if (pattern == nullptr || !is_valid_pattern(subject, *pattern)) {
        return problem(
            where.index(i),
            fmt::format("expected {} (at most {} printable characters, no quote or "
                        "backslash), found {}",
                        what_pattern(subject), kMaxPatternBytes, core::describe_value(item)));
      }
      out.of(subject).emplace_back(*pattern);
    }
  }
  return out;
}

}  // namespace

core::Result<AccessPolicy> parse_access_policy(const bj::value& v, const Where& at) {
  const bj::object* policy = v.if_object();
  if (policy == nullptr) return wrong_type(at, "an object", v);
  AccessPolicy out;
  if (const bj::value* allow = policy->if_contains("allow")) {
    core::Result<PatternLists> lists = parse_lists(*allow, at.key("allow"));
    if (!lists) return lists.error();
    out.allow = std::move(*lists);
  }
  if (const bj::value* deny = policy->if_contains("deny")) {
    core::Result<PatternLists> lists = parse_lists(*deny, at.key("deny"));
    if (!lists) return lists.error();
    out.deny = std::move(*lists);
  }
  return out;
}

core::Result<RedactSettings> parse_redact(const bj::value& v, const Where& at) {
  const bj::object* redact = v.if_object();
  if (redact == nullptr) return wrong_type(at, "an object", v);
  RedactSettings out;
  if (const bj::value* built_in = redact->if_contains("builtIn")) {
    if (!built_in->is_bool()) return wrong_type(at.key("builtIn"), "a boolean", *built_in);
    out.built_in = built_in->get_bool();
  }
  const bj::value* patterns = redact->if_contains("patterns");
  if (patterns == nullptr) return out;
  const Where where = at.key("patterns");
  const bj::array* items = patterns->if_array();
  if (items == nullptr) return wrong_type(where, "an array of strings", *patterns);
  if (items->size() > kMaxRedactPatterns) {
    return problem(where, fmt::format("more than {} patterns", kMaxRedactPatterns));
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    const bj::string* pattern = (*items)[i].if_string();
    if (pattern == nullptr || pattern->empty() || pattern->size() > kMaxRedactPatternBytes) {
      return wrong_type(
          where.index(i),
          fmt::format("a non-empty string of at most {} bytes", kMaxRedactPatternBytes),
          (*items)[i]);
    }
    RE2::Options options;
    options.set_log_errors(false);
    RE2 re(re2::StringPiece(pattern->data(), pattern->size()), options);
    if (!re.ok()) {
      return problem(where.index(i), fmt::format("RE2 cannot compile this pattern ({})",
                                                 core::describe_value((*items)[i])));
    }
    if (RE2::FullMatch("", re)) {
      return problem(where.index(i), "this pattern matches the empty string");
    }
    out.patterns.emplace_back(*pattern);
  }
  return out;
}

}  // namespace sluice::config::detail
