#include "config/detail/audit_block.hpp"

#include <boost/json/object.hpp>

#include <filesystem>

namespace sluice::config::detail {
namespace bj = boost::json;

core::Result<AuditSettings> parse_audit(const bj::value& v, const Where& at) {
  const bj::object* settings = v.if_object();
  if (settings == nullptr) return wrong_type(at, "an object", v);
  AuditSettings out;
  if (const bj::value* file = settings->if_contains("file")) {
    const Where where = at.key("file");
    if (const bool* b = file->if_bool()) {
      if (*b) return problem(where, "true is not a file", "give an absolute path, or false");
      out.enabled = false;
    } else {
      core::Result<std::string_view> path = read_text(*file, where, kProcessText, true);
      if (!path) return path.error();
      if (!std::filesystem::path(*path).is_absolute()) {
        return problem(where, "the path is not absolute", "give an absolute path, or false");
      }
      out.file = std::string(*path);
    }
  }
  if (const bj::value* max = settings->if_contains("maxBytes")) {
    core::Result<std::uint64_t> n = read_integer(*max, at.key("maxBytes"), kAuditMaxBytesRange);
    if (!n) return n.error();
    out.max_bytes = *n;
  }
  if (const bj::value* keep = settings->if_contains("keep")) {
    core::Result<std::uint64_t> n = read_integer(*keep, at.key("keep"), kAuditKeepRange);
    if (!n) return n.error();
    out.keep = static_cast<std::size_t>(*n);
  }
  return out;
}

}  // namespace sluice::config::detail
