#include "rpc/message.hpp"

#include <boost/json/parse.hpp>

#include <charconv>

namespace sluice::rpc {
namespace cj = core::json;

struct MessageParser {
  static Span span_of(const std::string& text, std::optional<std::string_view> part) {
    if (!part) return {};
    std::string_view p = cj::trim(*part);
    return Span{static_cast<std::uint32_t>(p.data() - text.data()),
                static_cast<std::uint32_t>(p.size())};
  }

  static std::variant<Message, ParseFailure> run(std::string text,
                                                 const cj::ParseLimits& limits,
                                                 Strictness strictness) {
    std::string_view body = cj::trim(text);
    if (strictness == Strictness::client) {
      auto dom = cj::parse_strict(text, limits);
      if (!dom) {
        if (dom.error().problem == cj::ParseProblem::syntax)
          return ParseFailure{code::kParseError, "Parse error: " + dom.error().message, "null"};
        return ParseFailure{code::kInvalidRequest, "Invalid request: " + dom.error().message,
                            recover_id(text)};
      }
    } else if (auto err = cj::validate(text, limits)) {
      if (err->problem == cj::ParseProblem::syntax)
        return ParseFailure{code::kParseError, "Parse error: " + err->message, "null"};
      return ParseFailure{code::kInvalidRequest, "Invalid request: " + err->message, "null"};
    }
    if (body.empty() || body.front() != '{') {
      return ParseFailure{code::kInvalidRequest,
                          !body.empty() && body.front() == '['
                              ? "Invalid request: batches are not supported"
                              : "Invalid request: a message must be a JSON object",
                          "null"};
    }
    Message m;
    m.text_ = std::move(text);
    const std::string& t = m.text_;
    auto version = cj::member_span(t, "jsonrpc");
    auto id = cj::member_span(t, "id");
    auto method = cj::member_span(t, "method");
    auto params = cj::member_span(t, "params");
    auto result = cj::member_span(t, "result");
    auto error = cj::member_span(t, "error");

    std::string id_text = "null";
    if (id) {
      if (!id_key(*id)) {
        return ParseFailure{code::kInvalidRequest,
                            "Invalid request: id must be a string or an integer", "null"};
      }
      id_text = std::string(*id);
    }
    if (!version || *version != "\"2.0\"") {
      return ParseFailure{code::kInvalidRequest, "Invalid request: jsonrpc must be \"2.0\"",
                          id_text};
    }
    m.id_ = span_of(t, id);
    if (method) {
      boost::json::error_code ec;
      auto v = boost::json::parse(*method, ec);
      if (ec || !v.is_string() || v.get_string().empty()) {
        return ParseFailure{code::kInvalidRequest, "Invalid request: method must be a string",
                            id_text};
      }
      if (result || error) {
        return ParseFailure{code::kInvalidRequest,
                            "Invalid request: a request cannot carry result or error", id_text};
      }
      if (params) {
        char c = cj::trim(*params).front();
        if (c != '{' && c != '[') {
          return ParseFailure{code::kInvalidRequest,
                              "Invalid request: params must be an object or an array", id_text};
        }
      }
      m.method_ = std::string(v.get_string());
      m.params_ = span_of(t, params);
      m.kind_ = id ? Kind::request : Kind::notification;
      return m;
    }
    if (!id) {
      return ParseFailure{code::kInvalidRequest, "Invalid request: missing method", "null"};
    }
    if (static_cast<bool>(result) == static_cast<bool>(error)) {
      return ParseFailure{code::kInvalidRequest,
                          "Invalid request: a response needs exactly one of result and error",
                          id_text};
    }
    if (error && cj::trim(*error).front() != '{') {
      return ParseFailure{code::kInvalidRequest, "Invalid request: error must be an object",
                          id_text};
    }
    m.result_ = span_of(t, result);
    m.error_ = span_of(t, error);
    m.kind_ = result ? Kind::result : Kind::error;
    return m;
  }

  // For a syntactically valid frame refused for structure, answer with its id if it has one.
  static std::string recover_id(std::string_view text) {
    auto id = cj::member_span(text, "id");
    if (id && id_key(*id)) return std::string(*id);
    return "null";
  }
};

boost::json::value Message::params_value(const cj::ParseLimits& limits) const {
  if (!params_.present()) return boost::json::object();
  auto v = cj::parse_strict(params(), limits);
  if (!v) return boost::json::object();
  return std::move(*v);
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

// {"jsonrpc":"2.0"[,"id":ID],"method":METHOD[,"params":PARAMS]}; an empty id means none.
std::string method_frame(std::string_view id_json, std::string_view method,
                         std::string_view params_json) {
  std::string out;
  out.reserve(48 + id_json.size() + method.size() + params_json.size());
  out += R"({"jsonrpc":"2.0")";
  if (!id_json.empty()) {
    out += R"(,"id":)";
    out += id_json;
  }
  out += R"(,"method":)";
  out += cj::quote(method);
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
