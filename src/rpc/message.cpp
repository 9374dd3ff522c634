#include "rpc/message.hpp"

#include "core/json.hpp"

#include <boost/json/parse.hpp>

#include <array>
#include <charconv>
#include <memory>

namespace sluice::rpc {
namespace cj = core::json;

namespace {

// The top-level members a frame may carry, in the order of kPartKeys.
enum Part : std::size_t { kJsonrpc, kId, kMethod, kParams, kResult, kError, kPartCount };
constexpr std::array<std::string_view, kPartCount> kPartKeys = {"jsonrpc", "id",     "method",
                                                                "params",  "result", "error"};
using Parts = std::array<std::optional<std::string_view>, kPartCount>;

ParseFailure invalid(std::string message, std::string id = "null") {
  return ParseFailure{code::kInvalidRequest, "Invalid request: " + message, std::move(id)};
}

// For a syntactically valid frame refused for structure, answer with its id if it has one.
std::string recover_id(std::string_view text) {
  auto id = cj::member_span(text, "id");
  if (id && id_key(*id)) return std::string(*id);
  return "null";
}

// The one strict parse (client) or validation (peer) of a frame, and its shape: a single
// object. `dom` receives the client frame's DOM.
std::optional<ParseFailure> check_document(const std::string& text, const cj::ParseLimits& limits,
                                           Strictness strictness, boost::json::value& dom) {
  if (strictness == Strictness::client) {
    auto parsed = cj::parse_strict(text, limits, cj::Storage::arena);
    if (!parsed) {
      if (parsed.error().problem == cj::ParseProblem::syntax)
        return ParseFailure{code::kParseError, "Parse error: " + parsed.error().message, "null"};
      return ParseFailure{code::kInvalidRequest, "Invalid request: " + parsed.error().message,
                          recover_id(text)};
    }
    // Put in place, not assigned: an assignment would copy the DOM out of its own arena into
    // `dom`'s storage.
    std::destroy_at(&dom);
    std::construct_at(&dom, std::move(*parsed));
  } else if (auto err = cj::validate(text, limits)) {
    if (err->problem == cj::ParseProblem::syntax)
      return ParseFailure{code::kParseError, "Parse error: " + err->message, "null"};
    return invalid(err->message);
  }
  std::string_view body = cj::trim(text);
  if (body.empty() || body.front() != '{') {
    return invalid(!body.empty() && body.front() == '[' ? "batches are not supported"
                                                        : "a message must be a JSON object");
  }
  return std::nullopt;
}

}  // namespace

struct MessageParser {
  static Span span_of(const std::string& text, std::optional<std::string_view> part) {
    if (!part) return {};
    return Span{static_cast<std::uint32_t>(part->data() - text.data()),
                static_cast<std::uint32_t>(part->size())};
  }

  static std::variant<Message, ParseFailure> run(std::string text, const cj::ParseLimits& limits,
                                                 Strictness strictness) {
    Message m;
    if (auto failure = check_document(text, limits, strictness, m.dom_)) return *failure;
    m.text_ = std::move(text);
    Parts parts;
    core::json::scan_members(m.text_, kPartKeys, parts);
    std::string id_text = "null";
    if (parts[kId]) {
      if (!id_key(*parts[kId])) return invalid("id must be a string or an integer");
      id_text = std::string(*parts[kId]);
    }
    if (!parts[kJsonrpc] || *parts[kJsonrpc] != "\"2.0\"") {
      return invalid("jsonrpc must be \"2.0\"", id_text);
    }
    m.id_ = span_of(m.text_, parts[kId]);
    auto failure =
        parts[kMethod] ? method_frame(m, parts, id_text) : response_frame(m, parts, id_text);
    if (failure) return *std::move(failure);
    return m;
  }

  // A request or a notification: its method and params.
  static std::optional<ParseFailure> method_frame(Message& m, const Parts& parts,
                                                  const std::string& id_text) {
    std::string scratch;
    auto method = core::json::string_value(*parts[kMethod], scratch);
    if (!method || method->empty()) return invalid("method must be a string", id_text);
    if (parts[kResult] || parts[kError]) {
      return invalid("a request cannot carry result or error", id_text);
    }
    if (parts[kParams] && parts[kParams]->front() != '{' && parts[kParams]->front() != '[') {
      return invalid("params must be an object or an array", id_text);
    }
    m.method_ = std::string(*method);
    m.params_ = span_of(m.text_, parts[kParams]);
    m.kind_ = parts[kId] ? Kind::request : Kind::notification;
    return std::nullopt;
  }

  // A response: exactly one of result and error.
  static std::optional<ParseFailure> response_frame(Message& m, const Parts& parts,
                                                    const std::string& id_text) {
    if (!parts[kId]) return invalid("missing method");
    if (static_cast<bool>(parts[kResult]) == static_cast<bool>(parts[kError])) {
      return invalid("a response needs exactly one of result and error", id_text);
    }
    if (parts[kError] && parts[kError]->front() != '{') {
      return invalid("error must be an object", id_text);
    }
    m.result_ = span_of(m.text_, parts[kResult]);
    m.error_ = span_of(m.text_, parts[kError]);
    m.kind_ = parts[kResult] ? Kind::result : Kind::error;
    return std::nullopt;
  }
};

boost::json::value Message::params_value(const cj::ParseLimits& limits) const {
  if (const auto* object = params_object()) return *object;
  if (!params_.present()) return boost::json::object();
  auto v = cj::parse_strict(params(), limits);
  if (!v) return boost::json::object();
  return std::move(*v);
}

const boost::json::object* Message::params_object() const {
  // Only a request's or a notification's params are params: a response's frame may carry a
  // stray "params" member, which params() and params_member() do not see either.
  if (!params_.present()) return nullptr;
  const auto* frame = dom_.if_object();
  const auto* params = frame ? frame->if_contains("params") : nullptr;
  return params ? params->if_object() : nullptr;
}

std::optional<std::string_view> Message::params_member(std::string_view key) const {
  if (!params_.present()) return std::nullopt;
  return cj::member_span(params(), key);
}

std::variant<Message, ParseFailure> parse(std::string text, const cj::ParseLimits& limits,
                                          Strictness strictness) {
  return MessageParser::run(std::move(text), limits, strictness);
}
std::optional<std::string> id_key(std::string_view raw_id) {
  std::string_view id = cj::trim(raw_id);
  if (id.empty()) return std::nullopt;
  if (id.front() == '"') {
    boost::json::error_code ec;
    auto v = boost::json::parse(id, ec);
    if (ec || !v.is_string()) return std::nullopt;
    return "s:" + std::string(v.get_string());
  }
  // Integers only (MCP ids are strings or integers); any length is kept as text.
  std::size_t i = id.front() == '-' ? 1 : 0;
  if (i >= id.size()) return std::nullopt;
  for (; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9') return std::nullopt;
  }
  return "n:" + std::string(id);
}

namespace {

// {"jsonrpc":"2.0"[,"id":ID],"method":METHOD with room for `more` bytes; an empty id means
// none.
std::string frame_head(std::string_view id_json, std::string_view method, std::size_t more) {
  std::string out;
  out.reserve(48 + id_json.size() + method.size() + more);
  out += R"({"jsonrpc":"2.0")";
  if (!id_json.empty()) {
    out += R"(,"id":)";
    out += id_json;
  }
  out += R"(,"method":)";
  out += cj::quote(method);
  return out;
}

// {"jsonrpc":"2.0"[,"id":ID],"method":METHOD[,"params":PARAMS]}.
std::string method_frame(std::string_view id_json, std::string_view method,
                         std::string_view params_json) {
  std::string out = frame_head(id_json, method, params_json.size());
  if (!params_json.empty()) {
    out += R"(,"params":)";
    out += params_json;
  }
  out += '}';
  return out;
}

}  // namespace

std::string make_request(std::string_view id_json, std::string_view method,
                         std::string_view params_json) {
  return method_frame(id_json, method, params_json);
}

std::string request_head(std::string_view id_json, std::string_view method,
                         std::size_t params_bytes) {
  std::string out = frame_head(id_json, method, params_bytes);
  out += R"(,"params":)";
  return out;
}

std::string make_notification(std::string_view method, std::string_view params_json) {
  return method_frame({}, method, params_json);
}

std::string make_result(std::string_view id_json, std::string_view result_json) {
  std::string out;
  out.reserve(36 + id_json.size() + result_json.size());
  out += R"({"jsonrpc":"2.0","id":)";
  out += id_json;
  out += R"(,"result":)";
  out += result_json;
  out += '}';
  return out;
}

std::string make_error(std::string_view id_json, int code, std::string_view message) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id_json;
  out += R"(,"error":{"code":)";
  out += std::to_string(code);
  out += R"(,"message":)";
  out += cj::quote(message);
  out += "}}";
  return out;
}

}  // namespace sluice::rpc
