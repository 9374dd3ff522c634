#include "config/detail/policy_block.hpp"

#include "config/detail/access_block.hpp"
#include "config/detail/audit_block.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::config::detail {
namespace {
namespace bj = boost::json;

// Reads the optional settings of one "sluice" object, in the order asked; after the first
// problem it reads nothing more and error() holds that problem.
class SettingsReader {
 public:
  SettingsReader(const bj::object& settings, Where at) : settings_(settings), at_(std::move(at)) {}

  void count(std::string_view key, Range range, std::optional<std::size_t>& out) {
    if (std::optional<std::uint64_t> n = integer(key, range)) out = static_cast<std::size_t>(*n);
  }

  void millis(std::string_view key, Range range, std::optional<std::chrono::milliseconds>& out) {
    if (std::optional<std::uint64_t> n = integer(key, range)) {
      out = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(*n));
    }
  }

  // 0 (off) or a duration within `range`.
  void millis_or_off(std::string_view key, Range range,
                     std::optional<std::chrono::milliseconds>& out) {
    const bj::value* v = find(key);
    if (v == nullptr) return;
    core::Result<std::uint64_t> n = read_integer_or_zero(*v, at_.key(key), range);
    if (!n) {
      error_ = n.error();
      return;
    }
    out = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(*n));
  }

  void flag(std::string_view key, std::optional<bool>& out) {
    const bj::value* v = find(key);
    if (v == nullptr) return;
    if (const bool* b = v->if_bool()) {
      out = *b;
    } else {
      error_ = wrong_type(at_.key(key), "a boolean", *v);
    }
  }

  const std::optional<core::Error>& error() const { return error_; }

 private:
  const bj::value* find(std::string_view key) const {
    if (error_) return nullptr;
    return settings_.if_contains(bj::string_view(key.data(), key.size()));
  }

  std::optional<std::uint64_t> integer(std::string_view key, Range range) {
    const bj::value* v = find(key);
    if (v == nullptr) return std::nullopt;
    core::Result<std::uint64_t> n = read_integer(*v, at_.key(key), range);
    if (!n) {
      error_ = n.error();
      return std::nullopt;
    }
    return *n;
  }

  const bj::object& settings_;
  Where at_;
  std::optional<core::Error> error_;
};

// One tool's settings in a server's "tools" object: its budget as an integer, or an object
// with an optional "budget" and "maxOutputBytes".
std::optional<core::Error> read_tool_settings(const bj::key_value_pair& kv, const Where& at,
                                              ServerPolicy& out) {
  std::string name(kv.key().data(), kv.key().size());
  const bj::object* settings = kv.value().if_object();
  if (settings == nullptr) {
    core::Result<std::uint64_t> n = read_integer(kv.value(), at, kBudgetRange);
    if (!n) return n.error();
    out.tool_budgets.emplace_back(std::move(name), static_cast<std::size_t>(*n));
    return std::nullopt;
  }
  if (const bj::value* budget = settings->if_contains("budget")) {
    core::Result<std::uint64_t> n = read_integer(*budget, at.key("budget"), kBudgetRange);
    if (!n) return n.error();
    out.tool_budgets.emplace_back(name, static_cast<std::size_t>(*n));
  }
  if (const bj::value* cap = settings->if_contains("maxOutputBytes")) {
    core::Result<std::uint64_t> n =
        read_integer(*cap, at.key("maxOutputBytes"), kMaxOutputBytesRange);
    if (!n) return n.error();
    out.tool_output_caps.emplace_back(std::move(name), static_cast<std::size_t>(*n));
  }
  return std::nullopt;
}

}  // namespace

core::Result<FilePolicy> parse_gateway_policy(const bj::value& v) {
  Where at{"$.sluice"};
  const bj::object* settings = v.if_object();
  if (settings == nullptr) return wrong_type(at, "an object", v);
  FilePolicy out;
  SettingsReader reader(*settings, at);
  reader.count("readBudget", kBudgetRange, out.read_budget);
  reader.count("mutatingBudget", kBudgetRange, out.mutating_budget);
  reader.count("clientCap", kClientCapRange, out.client_cap);
  reader.count("queueSize", kQueueSizeRange, out.queue_size);
  reader.millis("queueTimeoutMs", kQueueTimeoutMsRange, out.queue_timeout);
  reader.millis("abandonMs", kAbandonMsRange, out.abandon_bound);
  reader.millis("drainMs", kDrainMsRange, out.drain_bound);
  reader.flag("forbidForce", out.forbid_force);
  reader.flag("failClosedWhenStale", out.fail_closed_when_stale);
  reader.count("writesPerServer", kBudgetRange, out.writes_per_server);
  reader.count("startConcurrency", kStartConcurrencyRange, out.start_concurrency);
  reader.millis("callTimeoutMs", kCallTimeoutMsRange, out.call_timeout);
  reader.millis("maxCallMs", kCallTimeoutMsRange, out.max_call);
  reader.flag("allowUnvalidatedTools", out.allow_unvalidated_tools);
  reader.millis_or_off("idleTimeoutMs", kIdleTimeoutMsRange, out.idle_timeout);
  reader.count("indexConcurrency", kIndexConcurrencyRange, out.index_concurrency);
  reader.millis("indexWaitMs", kIndexWaitMsRange, out.index_wait);
  reader.millis("indexIdleMs", kIndexIdleMsRange, out.index_idle);
  reader.count("maxOutputBytes", kMaxOutputBytesRange, out.max_output_bytes);
  if (reader.error()) return *reader.error();
  if (const bj::value* policy = settings->if_contains("policy")) {
    core::Result<AccessPolicy> access = parse_access_policy(*policy, at.key("policy"));
    if (!access) return access.error();
    out.access = std::move(*access);
  }
  if (const bj::value* redact = settings->if_contains("redact")) {
    core::Result<RedactSettings> settings_of = parse_redact(*redact, at.key("redact"));
    if (!settings_of) return settings_of.error();
    out.redact = std::move(*settings_of);
  }
  if (const bj::value* audit = settings->if_contains("audit")) {
    core::Result<AuditSettings> audit_of = parse_audit(*audit, at.key("audit"));
    if (!audit_of) return audit_of.error();
    out.audit = std::move(*audit_of);
  }
  return out;
}

core::Result<ServerPolicy> parse_server_policy(const bj::value& v, const Where& at) {
  const bj::object* settings = v.if_object();
  if (settings == nullptr) return wrong_type(at, "an object", v);
  ServerPolicy out;
  if (const bj::value* budget = settings->if_contains("budget")) {
    core::Result<std::uint64_t> n = read_integer(*budget, at.key("budget"), kBudgetRange);
    if (!n) return n.error();
    out.budget = static_cast<std::size_t>(*n);
  }
  if (const bj::value* writes = settings->if_contains("writes")) {
    core::Result<std::uint64_t> n = read_integer(*writes, at.key("writes"), kBudgetRange);
    if (!n) return n.error();
    out.writes = static_cast<std::size_t>(*n);
  }
  if (const bj::value* cap = settings->if_contains("maxOutputBytes")) {
    core::Result<std::uint64_t> n =
        read_integer(*cap, at.key("maxOutputBytes"), kMaxOutputBytesRange);
    if (!n) return n.error();
    out.max_output_bytes = static_cast<std::size_t>(*n);
  }
  if (const bj::value* tools = settings->if_contains("tools")) {
    Where where = at.key("tools");
    const bj::object* budgets = tools->if_object();
    if (budgets == nullptr) return wrong_type(where, "an object of integers", *tools);
    for (const auto& kv : *budgets) {
      if (std::optional<core::Error> e = read_tool_settings(kv, where.key("entry"), out)) {
        return *e;
      }
    }
  }
  return out;
}

}  // namespace sluice::config::detail
