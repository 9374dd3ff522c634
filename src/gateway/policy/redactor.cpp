#include "gateway/policy/redactor.hpp"

#include "core/ascii.hpp"
#include "core/log.hpp"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>

namespace sluice::gateway {
namespace {

struct BuiltIn {
  std::string_view label;
  std::initializer_list<std::string_view> literals;  // every match holds one of them
  bool ignore_case;                                  // of the literals
  std::string_view pattern;
  // For literals that ordinary text holds too (English words, kebab-case names): what must
  // follow them in the raw JSON text for the screen to say yes. Default: the literal alone.
  Redactor::Confirm confirm = {};
};

// Applied in this order: a PEM block and a whole Authorization header before the tokens
// that may appear inside them.
const std::array<BuiltIn, 13> kBuiltIns{{
    {"private-key",
     {"-----BEGIN"},
     false,
     R"(-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----(?s:.)*?(?:-----END[A-Z0-9 ]{0,40})"
     R"(PRIVATE KEY( BLOCK)?-----|\z))"},
    {"authorization-header",
     {"authorization"},
     true,
     R"((?i)\bauthorization\s*["']?\s*[:=]\s*["']?\s*(?:(?:basic|bearer|token|bot)\s+)?)"
     R"([A-Za-z0-9\-._~+/]{8,}=*)",
     {true, true, 0}},
    {"bearer-token",
     {"bearer"},
     true,
     R"((?i)\bbearer\s+[A-Za-z0-9\-._~+/]{12,}=*)",
     {true, false, 12}},
    {"aws-access-key",
     {"AKIA", "ASIA", "ABIA", "ACCA"},
     false,
     R"(\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b)",
     {false, false, 16}},
    {"github-token",
     {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
     false,
     R"(\bgh[pousr]_[A-Za-z0-9]{36,251}\b)"},
    {"github-token", {"github_pat_"}, false, R"(\bgithub_pat_[A-Za-z0-9_]{22,251}\b)"},
    {"gitlab-token", {"glpat-"}, false, R"(\bglpat-[A-Za-z0-9_\-]{20,}\b)"},
    {"slack-token", {"xox"}, false, R"(\bxox[abposr]-[A-Za-z0-9\-]{10,})", {false, false, 12}},
    {"jwt",
     {"eyJ"},
     false,
     R"(\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)",
     {false, false, 8}},
    {"google-api-key", {"AIza"}, false, R"(\bAIza[0-9A-Za-z_\-]{35})"},
    {"stripe-key",
     {"sk_live_", "sk_test_", "rk_live_", "rk_test_"},
     false,
     R"(\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,})"},
    {"api-key", {"sk-"}, false, R"(\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{32,})", {false, false, 32}},
    {"npm-token", {"npm_"}, false, R"(\bnpm_[A-Za-z0-9]{36}\b)"},
}};

constexpr std::array<unsigned char, 256> kLower = [] {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = core::ascii::to_lower(static_cast<unsigned char>(c));
  return t;
}();

// A 16-bit hash of three bytes, case folded (a filter: equal triples hash equal).
std::size_t triple_of(const unsigned char* p) {
  return ((std::size_t{kLower[p[0]]} << 10) ^ (std::size_t{kLower[p[1]]} << 5) ^ kLower[p[2]]) &
         0xFFFF;
}

// Whether `at` starts with `literal` (in any case of its ASCII letters when `ignore_case`):
// inline, since a candidate usually differs within a byte or two.
bool spelled_at(const unsigned char* at, std::string_view literal, bool ignore_case) {
  for (std::size_t k = 0; k < literal.size(); ++k) {
    const auto want = static_cast<unsigned char>(literal[k]);
    if (at[k] != want && !(ignore_case && kLower[at[k]] == kLower[want])) return false;
  }
  return true;
}

RE2::Options quiet_options() {
  RE2::Options options;
  options.set_log_errors(false);
  return options;
}

// A character a token may hold in the raw JSON text (a backslash: an escape inside it).
bool token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/' || c == '=' || c == '\\';
}

// Spaces, quotes and escapes (`\n`, `\"`), as the raw text may hold them around a separator.
bool space_char(std::string_view rest, std::size_t i) {
  const char c = rest[i];
  if (c == ' ' || c == '\t' || c == '\\' || c == '"' || c == '\'') return true;
  return i > 0 && rest[i - 1] == '\\' && std::isalpha(static_cast<unsigned char>(c));
}

}  // namespace

// Whether `rest` (what follows a literal in the raw text) starts as `c` asks. A relaxation of
// the patterns: whatever they match in the decoded text passes it.
bool Redactor::confirmed(const Confirm& c, std::string_view rest) {
  std::size_t i = 0;
  if (c.skip_space) {
    while (i < rest.size() && space_char(rest, i)) ++i;
  }
  if (c.separator) return i < rest.size() && (rest[i] == ':' || rest[i] == '=');
  std::size_t run = 0;
  while (run < c.min_run && i + run < rest.size() && token_char(rest[i + run])) ++run;
  return run >= c.min_run;
}

class Redactor::OperatorSet {
 public:
  OperatorSet() : set_(quiet_options(), RE2::UNANCHORED) {}
  bool add(const std::string& pattern) { return set_.Add(pattern, nullptr) >= 0; }
  bool compile() { return set_.Compile(); }
  bool match(std::string_view text) const {
    return set_.Match(re2::StringPiece(text.data(), text.size()), nullptr);
  }

 private:
  RE2::Set set_;
};

Redactor::Redactor(const config::RedactSettings& settings) {
  if (settings.built_in) {
    for (const BuiltIn& b : kBuiltIns) {
      auto re = std::make_unique<RE2>(re2::StringPiece(b.pattern.data(), b.pattern.size()),
                                      quiet_options());
      rules_.push_back({fmt::format("[REDACTED:{}]", b.label), std::move(re)});
      for (std::string_view literal : b.literals) {
        by_first_[core::ascii::to_lower(static_cast<unsigned char>(literal[0]))].push_back(
            static_cast<std::uint8_t>(literals_.size()));
        literals_.push_back({literal, b.ignore_case, b.confirm});
        if (literal.size() < 3) throw std::logic_error("a screen literal is 3 bytes or more");
        triples_.set(triple_of(reinterpret_cast<const unsigned char*>(literal.data())));
      }
    }
    triples_.set(triple_of(reinterpret_cast<const unsigned char*>("\\u0")));
    // An escaped character could hide a literal: `\u0` is screened for too.
    std::vector<core::LiteralScreen::Literal> screened{{"\\u0", false}};
    for (const Literal& l : literals_) screened.push_back({l.text, l.ignore_case});
    screen_ = std::make_unique<core::LiteralScreen>(screened);
  }
  if (settings.patterns.empty()) return;
  auto set = std::make_unique<OperatorSet>();
  for (std::size_t i = 0; i < settings.patterns.size(); ++i) {
    auto re = std::make_unique<RE2>(settings.patterns[i], quiet_options());
    if (!re->ok() || !set->add(settings.patterns[i])) {
      core::log::error("redact.patterns[{}]: RE2 refused it; left out", i);
      continue;
    }
    rules_.push_back({fmt::format("[REDACTED:pattern-{}]", i + 1), std::move(re)});
  }
  if (set->compile()) operator_set_ = std::move(set);
}

Redactor::~Redactor() = default;

bool Redactor::literal_at(std::string_view json, std::size_t i) const {
  if (i + 2 >= json.size() ||
      !triples_[triple_of(reinterpret_cast<const unsigned char*>(json.data()) + i)]) {
    return false;  // no literal starts with these three bytes
  }
  if (json[i] == '\\') {
    // `\u00XX` with XX a printable ASCII character: a literal could be spelled that way.
    return i + 5 < json.size() && json[i + 2] == '0' && json[i + 3] == '0' && json[i + 4] >= '2' &&
           json[i + 4] <= '7';
  }
  const auto* at = reinterpret_cast<const unsigned char*>(json.data()) + i;
  for (std::uint8_t index : by_first_[kLower[at[0]]]) {
    const Literal& l = literals_[index];
    if (json.size() - i < l.text.size() || !spelled_at(at, l.text, l.ignore_case)) continue;
    if (confirmed(l.confirm, json.substr(i + l.text.size()))) return true;
  }
  return false;
}

bool Redactor::may_hold_secret(std::string_view json) const {
  if (screen_ && screen_->any(json, [&](std::size_t i) { return literal_at(json, i); })) {
    return true;
  }
  return operator_set_ && operator_set_->match(json);
}

std::size_t Redactor::redact(std::string& text) const {
  std::size_t n = 0;
  for (const Rule& rule : rules_) {
    n += static_cast<std::size_t>(RE2::GlobalReplace(&text, *rule.re, rule.replacement));
  }
  return n;
}

std::vector<std::string_view> Redactor::built_in_labels() {
  std::vector<std::string_view> labels;
  for (const BuiltIn& b : kBuiltIns) {
    if (labels.empty() || labels.back() != b.label) labels.push_back(b.label);
  }
  return labels;
}

}  // namespace sluice::gateway
