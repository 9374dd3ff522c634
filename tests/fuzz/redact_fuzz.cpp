// The redaction screen (src/gateway/policy/redactor.hpp, src/core/literal_screen.hpp). The
// first byte of the input picks what the rest is: an even one, the text of one string value
// (screened as the JSON string a server would send); an odd one, a JSON document as a server
// sent it.
//
// Properties: no crash, leak or UB; the screen's 16-byte path reports the positions its byte
// by byte path does; and the screen lets no secret through: when it passes a JSON text, no
// built-in pattern matches any string decoded from that text (keys included).
#include "core/literal_screen.hpp"
#include "fuzz_check.hpp"
#include "gateway/policy/redactor.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace sluice;
namespace bj = boost::json;

const gateway::Redactor& redactor() {
  static const gateway::Redactor r{config::RedactSettings{}};
  return r;
}

// More first bytes than the screen's 8 buckets, so that some share one.
const core::LiteralScreen& screen() {
  static const std::vector<core::LiteralScreen::Literal> literals{
      {"-----BEGIN", false}, {"authorization", true}, {"bearer", true}, {"AKIA", false},
      {"ghp_", false},       {"xox", false},          {"eyJ", false},   {"sk-", false},
      {"npm_", false},       {"\\u0", false},
  };
  static const core::LiteralScreen s{literals};
  return s;
}

std::vector<std::size_t> candidates(std::string_view text, bool bytewise) {
  std::vector<std::size_t> found;
  core::LiteralScreen::Batch batch;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t n = bytewise ? screen().candidates_bytewise(text, from, batch)
                                   : screen().candidates(text, from, batch);
    found.insert(found.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return found;
}

void collect_strings(const bj::value& v, std::vector<std::string>& out) {
  if (const auto* s = v.if_string()) {
    out.emplace_back(s->data(), s->size());
  } else if (const auto* a = v.if_array()) {
    for (const bj::value& e : *a) collect_strings(e, out);
  } else if (const auto* o = v.if_object()) {
    for (const auto& member : *o) {
      out.emplace_back(member.key().data(), member.key().size());
      collect_strings(member.value(), out);
    }
  }
}

void check_nothing_passes(std::string_view json, const std::vector<std::string>& strings) {
  if (redactor().may_hold_secret(json)) return;
  for (std::string s : strings) FUZZ_CHECK(redactor().redact(s) == 0);
}

void run(std::string_view data) {
  if (data.empty()) return;
  const bool document = (static_cast<std::uint8_t>(data.front()) & 1) != 0;
  data.remove_prefix(1);
  FUZZ_CHECK(candidates(data, false) == candidates(data, true));
  if (!document) {
    const std::string json = bj::serialize(bj::value(bj::string_view(data.data(), data.size())));
    check_nothing_passes(json, {std::string(data)});
    return;
  }
  bj::error_code ec;
  const bj::value v = bj::parse(bj::string_view(data.data(), data.size()), ec);
  if (ec) return;
  std::vector<std::string> strings;
  collect_strings(v, strings);
  check_nothing_passes(data, strings);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
