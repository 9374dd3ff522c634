#pragma once
// JSON-RPC 2.0 messages as sluice handles them: the frame text is kept whole and the parts
// (id, params, result, error) are spans into it, so ids go back byte-exact and payloads are
// spliced through without re-serialising (Boost.JSON would rewrite numbers).
//
// Parsing is strict: a frame that is not JSON gets -32700, a JSON value that is not a valid
// request/notification/response gets -32600. Peer frames (from downstreams) are validated
// without building a DOM; client frames are also checked for duplicate keys at every level,
// and the DOM of that one strict parse is kept in the Message, so that whoever reads a client
// request's params (a tool name, its arguments) reads them there instead of parsing again.
// A frame's parts are found in one pass over its top-level members.
//
// A Message is a value (movable, copyable); it owns its text and its DOM. Threading: none of
// its own (used on the thread that owns the session).
#include "core/json.hpp"

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace sluice::rpc {

namespace code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
// Implementation-defined server errors.
inline constexpr int kRequestTimeout = -32001;
inline constexpr int kRequestCancelled = -32800;
inline constexpr int kConnectionClosed = -32000;
}  // namespace code

enum class Kind { request, notification, result, error };

struct Span {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  bool present() const { return length > 0; }
};

class Message {
 public:
  Kind kind() const { return kind_; }
  bool is_request() const { return kind_ == Kind::request; }
  bool is_notification() const { return kind_ == Kind::notification; }
  bool is_response() const { return kind_ == Kind::result || kind_ == Kind::error; }

  const std::string& text() const { return text_; }
  const std::string& method() const { return method_; }
  // Raw JSON text of each part; empty when absent.
  std::string_view id() const { return view(id_); }
  std::string_view params() const { return view(params_); }
  std::string_view result() const { return view(result_); }
  std::string_view error() const { return view(error_); }

  // A DOM of params (strict parse); an empty object when params are absent.
  boost::json::value params_value(const core::json::ParseLimits& limits) const;
  // Client frames: the params object of the one strict parse; nullptr for peer frames, for
  // responses (a stray "params" member of one is not params) and when params are absent or an
  // array.
  const boost::json::object* params_object() const;
  // The raw text of member `key` of params (byte-exact, for splicing); nullopt when absent.
  std::optional<std::string_view> params_member(std::string_view key) const;

 private:
  friend struct MessageParser;
  std::string_view view(Span s) const { return std::string_view(text_).substr(s.offset, s.length); }

  Kind kind_ = Kind::notification;
  std::string text_;
  std::string method_;
  Span id_, params_, result_, error_;
  boost::json::value dom_;  // client frames: the whole frame; null for peer frames
};

struct ParseFailure {
  int code = code::kInvalidRequest;
  std::string message;  // value-free
  std::string id;       // raw id text when it could be recovered, else "null"
};

enum class Strictness {
  client,  // full DOM check: duplicate keys rejected at every level
  peer,    // well-formedness and depth only (payloads are spliced, never interpreted)
};

std::variant<Message, ParseFailure> parse(std::string text, const core::json::ParseLimits& limits,
                                          Strictness strictness);

// A key identifying a request id for lookups: strings by their decoded value, numbers by
// their text. Returns nullopt for anything that is not a valid id.
std::optional<std::string> id_key(std::string_view raw_id);

// Frame builders. Arguments named *_json must be valid JSON text; they are spliced verbatim.
std::string make_request(std::string_view id_json, std::string_view method,
                         std::string_view params_json);
// A request's frame up to its params, for a caller that writes the params into it and then
// closes the frame with '}' (no copy of the params): {"jsonrpc":"2.0","id":ID,"method":METHOD,
// "params": with room reserved for `params_bytes` more.
std::string request_head(std::string_view id_json, std::string_view method,
                         std::size_t params_bytes);
std::string make_notification(std::string_view method, std::string_view params_json);
std::string make_result(std::string_view id_json, std::string_view result_json);
std::string make_error(std::string_view id_json, int code, std::string_view message);

}  // namespace sluice::rpc
