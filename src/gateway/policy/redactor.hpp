#pragma once
// Redaction of secrets in what downstreams answer: the built-in credential patterns (cloud
// access keys, GitHub, GitLab, Slack, Stripe, Google, npm and API keys, private-key PEM blocks,
// JWTs, bearer tokens and Authorization headers) and the operator's own
// ("sluice": {"redact": {"patterns": [...]}}), all RE2, so linear in the text.
//
// Two steps, so that the common answer costs one pass over its bytes and no allocation:
// may_hold_secret() screens the raw JSON text of a result (the literal that every built-in
// match starts with, found 16 bytes at a time by core::LiteralScreen; an escaped ASCII character
// `\u00XX`, which could hide one; and the operator's patterns as one RE2::Set), and only when it
// says yes are the decoded strings parsed out and redact() run on each.
//
// Ownership: owns its compiled patterns; immutable after construction. Threading: const
// member functions may be called from any thread. Guarantees: redact() replaces each match by
// `[REDACTED:<label>]` (the label names the pattern, never what it matched) and never fails;
// nothing of what it replaced is kept or logged. Operator patterns were checked by the config
// parser; one RE2 still refuses (it should not) is left out.
#include "config/gateway_config.hpp"
#include "core/literal_screen.hpp"

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}  // namespace re2

namespace sluice::gateway {

class Redactor {
 public:
  explicit Redactor(const config::RedactSettings& settings);
  ~Redactor();
  Redactor(const Redactor&) = delete;
  Redactor& operator=(const Redactor&) = delete;

  // No pattern at all (built-ins off and none of the operator's).
  bool empty() const { return rules_.empty(); }
  // False only when no pattern can match any string decoded from `json` (the raw text of a
  // JSON value). An operator pattern is screened against the raw text as it is, so one that
  // can match only across a character JSON escapes (a quote, a backslash, a newline or another
  // control character) may be missed: such patterns should not need those characters.
  bool may_hold_secret(std::string_view json) const;
  // Replaces every match in `text`; the number of replacements.
  std::size_t redact(std::string& text) const;

  // The labels of the built-in patterns, in the order they are applied.
  static std::vector<std::string_view> built_in_labels();

  // What must follow a screen's literal in the raw text: a cheap relaxation of its pattern,
  // for literals that ordinary text holds ("bearer", "sk-"). All zero: nothing.
  struct Confirm {
    bool skip_space = false;  // first skip spaces, quotes and escapes
    bool separator = false;   // then a ':' or '='
    std::size_t min_run = 0;  // or else at least this many token characters
  };

 private:
  struct Rule {
    std::string replacement;  // [REDACTED:<label>]
    std::unique_ptr<re2::RE2> re;
  };
  struct Literal {
    std::string_view text;
    bool ignore_case;
    Confirm confirm;
  };
  static bool confirmed(const Confirm& c, std::string_view rest);
  bool literal_at(std::string_view json, std::size_t i) const;

  std::vector<Rule> rules_;
  std::vector<Literal> literals_;  // the built-ins' screens
  // literals_ by the lower case of their first byte.
  std::array<std::vector<std::uint8_t>, 256> by_first_;
  // Where a literal (any case, for those that ignore it) or `\u0` may start: 16 bytes at a
  // time; null without the built-ins.
  std::unique_ptr<core::LiteralScreen> screen_;
  std::bitset<65536> triples_;  // a hash of the first three bytes of each, case folded
  class OperatorSet;
  std::unique_ptr<OperatorSet> operator_set_;  // null without operator patterns
};

}  // namespace sluice::gateway
