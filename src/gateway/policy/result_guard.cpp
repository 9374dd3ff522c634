#include "gateway/policy/result_guard.hpp"

#include "core/json.hpp"

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

namespace sluice::gateway {
namespace bj = boost::json;

namespace {

std::size_t redact_string(bj::string& s, const Redactor& redactor) {
  std::string text(s.data(), s.size());
  const std::size_t n = redactor.redact(text);
  if (n > 0) s = text;
  return n;
}

// Every string value of `v` (object keys are names the server's schema gives, not values).
std::size_t redact_strings(bj::value& v, const Redactor& redactor) {
  if (bj::string* s = v.if_string()) return redact_string(*s, redactor);
  std::size_t n = 0;
  if (bj::array* a = v.if_array()) {
    for (bj::value& item : *a) n += redact_strings(item, redactor);
  } else if (bj::object* o = v.if_object()) {
    for (auto& kv : *o) n += redact_strings(kv.value(), redactor);
  }
  return n;
}

// The text of a content item: a text item's "text", an embedded resource's "resource.text".
bj::string* guard_text_of(bj::value& item) {
  bj::object* o = item.if_object();
  if (o == nullptr) return nullptr;
  if (bj::value* r = o->if_contains("resource"); r && r->is_object()) {
    bj::value* t = r->get_object().if_contains("text");
    return t ? t->if_string() : nullptr;
  }
  const bj::value* type = o->if_contains("type");
  if (!type || !type->is_string() || type->get_string() != "text") return nullptr;
  bj::value* t = o->if_contains("text");
  return t ? t->if_string() : nullptr;
}

bool is_text_item(const bj::value& item) {
  const bj::object* o = item.if_object();
  const bj::value* type = o ? o->if_contains("type") : nullptr;
  return type && type->is_string() && type->get_string() == "text";
}

// Cuts the text items of `content` to `cap` bytes in all; fills the counts of `out`.
void cut_guarded_text(bj::array& content, std::size_t cap, FilteredResult& out) {
  std::size_t kept = 0;
  for (auto it = content.begin(); it != content.end();) {
    bj::string* text = is_text_item(*it) ? guard_text_of(*it) : nullptr;
    if (text == nullptr) {
      ++it;
      continue;
    }
    out.text_bytes += text->size();
    if (out.omitted_bytes == 0 && kept + text->size() <= cap) {
      kept += text->size();
      ++it;
      continue;
    }
    // After the first cut, later text items are dropped whole.
    std::size_t end = out.omitted_bytes == 0 ? cap - kept : 0;
    while (end > 0 && (static_cast<unsigned char>((*text)[end]) & 0xC0) == 0x80) --end;
    out.omitted_bytes += text->size() - end;
    kept += end;
    if (end == 0) {
      it = content.erase(it);
    } else {
      text->resize(end);
      ++it;
    }
  }
  if (out.omitted_bytes == 0) return;
  content.push_back(bj::object{
      {"type", "text"},
      {"text", fmt::format("[sluice: output cut: {} of {} bytes omitted (maxOutputBytes {})]",
                           out.omitted_bytes, out.text_bytes, cap)}});
}

}  // namespace

std::optional<FilteredResult> filter_result(std::string_view result_json,
                                            std::optional<std::size_t> cap,
                                            const Redactor& redactor, std::size_t max_json_depth) {
  const bool over = cap && result_json.size() > *cap;
  const bool suspect = !redactor.empty() && redactor.may_hold_secret(result_json);
  if (!over && !suspect) return std::nullopt;
  auto parsed = core::json::parse_strict(result_json, core::json::ParseLimits{max_json_depth});
  if (!parsed || !parsed->is_object()) return std::nullopt;
  bj::object& result = parsed->get_object();
  bj::value* content_value = result.if_contains("content");
  bj::array* content = content_value ? content_value->if_array() : nullptr;
  FilteredResult out;
  if (suspect) {
    if (content) {
      for (bj::value& item : *content) {
        if (bj::string* text = guard_text_of(item))
          out.redactions += redact_string(*text, redactor);
      }
    }
    if (bj::value* structured = result.if_contains("structuredContent")) {
      out.redactions += redact_strings(*structured, redactor);
    }
  }
  if (cap && content) cut_guarded_text(*content, *cap, out);
  if (out.redactions == 0 && out.omitted_bytes == 0) return std::nullopt;
  out.json = bj::serialize(result);
  return out;
}

std::optional<std::size_t> ResultGuard::cap_of(const config::ServerConfig& server,
                                               std::string_view tool) const {
  for (const auto& [name, cap] : server.policy.tool_output_caps) {
    if (name == tool) return cap;
  }
  if (server.policy.max_output_bytes) return server.policy.max_output_bytes;
  return policy_.max_output_bytes;
}

std::optional<std::string> ResultGuard::apply(const config::ServerConfig& server,
                                              std::string_view tool, std::string_view result_json) {
  std::optional<FilteredResult> filtered =
      filter_result(result_json, cap_of(server, tool), redactor_, max_json_depth_);
  if (!filtered) return std::nullopt;
  auto it = counts_.find(server.name);
  if (it == counts_.end()) it = counts_.emplace(server.name, Counts{}).first;
  it->second.redactions += filtered->redactions;
  if (filtered->omitted_bytes > 0) {
    ++it->second.output_cuts;
    it->second.bytes_omitted += filtered->omitted_bytes;
  }
  return std::move(filtered->json);
}

void ResultGuard::add_to_row(std::string_view server, bj::object& row) const {
  auto it = counts_.find(server);
  const Counts counts = it == counts_.end() ? Counts{} : it->second;
  row["output_cuts"] = counts.output_cuts;
  row["output_bytes_omitted"] = counts.bytes_omitted;
  row["redactions"] = counts.redactions;
}

}  // namespace sluice::gateway
