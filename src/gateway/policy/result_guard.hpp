#pragma once
// What sluice does to a tool result before a client sees it: secrets redacted (Redactor) in
// the text of its content items (text items, and the text of embedded resources) and in every
// string of its structuredContent, then its text cut to the tool's output cap
// (maxOutputBytes: the tool's, else its server's, else the gateway's; none by default).
//
// Results are spliced byte-exact in the common case: a result is parsed and rewritten only
// when its raw size is over the cap or the redactor's screen finds a possible secret in its
// bytes (one pass, no allocation). A rewritten result is serialised again (numbers may then
// be spelled differently, as Boost.JSON writes them).
//
// Text is cut at a UTF-8 boundary: the text items in order keep at most the cap's bytes in
// all, later text items are dropped, and a final text item says how much was cut
// ("[sluice: output cut: 12345 of 45678 bytes omitted (maxOutputBytes 32768)]"). Items that
// are not text (images, audio, resource links) and structuredContent are kept whole.
//
// Ownership: a part of the Gateway; owns the redactor and the counts per server.
// Threading: the gateway's loop thread. Guarantees: never fails (a result it cannot parse is
// passed on as it came); what it redacted is never kept or logged, only counted.
#include "config/gateway_config.hpp"
#include "gateway/policy/redactor.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::gateway {

// A result rewritten by filter_result: its new text and what was done.
struct FilteredResult {
  std::string json;
  std::size_t redactions = 0;
  std::size_t text_bytes = 0;     // of its text items, after redaction, before the cut
  std::size_t omitted_bytes = 0;  // cut from them
};

// `result_json` (a CallToolResult) redacted and cut to `cap`; nullopt when nothing changed.
std::optional<FilteredResult> filter_result(std::string_view result_json,
                                            std::optional<std::size_t> cap,
                                            const Redactor& redactor, std::size_t max_json_depth);

class ResultGuard {
 public:
  ResultGuard(const config::GatewayPolicy& policy, std::size_t max_json_depth)
      : policy_(policy), redactor_(policy.redact), max_json_depth_(max_json_depth) {}
  ResultGuard(const ResultGuard&) = delete;
  ResultGuard& operator=(const ResultGuard&) = delete;

  // The output cap of `tool` of `server`: the tool's, else the server's, else the gateway's.
  std::optional<std::size_t> cap_of(const config::ServerConfig& server,
                                    std::string_view tool) const;
  // `result_json`, a result of `tool` of `server`, redacted and cut; nullopt when neither
  // applies (the result goes as it came).
  std::optional<std::string> apply(const config::ServerConfig& server, std::string_view tool,
                                   std::string_view result_json);

  // What was done to a server's results: into its gateway.health row.
  struct Counts {
    std::uint64_t output_cuts = 0;    // results cut to their cap
    std::uint64_t bytes_omitted = 0;  // by those cuts
    std::uint64_t redactions = 0;     // secrets replaced
  };
  void add_to_row(std::string_view server, boost::json::object& row) const;

 private:
  const config::GatewayPolicy& policy_;
  Redactor redactor_;
  std::size_t max_json_depth_;
  std::map<std::string, Counts, std::less<>> counts_;
};

}  // namespace sluice::gateway
