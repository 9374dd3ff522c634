// What a reread of the configuration changed: per server (diff_configs, defines_same), and in
// the operator's settings (changed_operator_keys). Pure functions of the values they are
// given.
#include "gateway/reload.hpp"

#include <algorithm>
#include <unordered_set>

namespace sluice::gateway {

namespace {

bool same_policy(const config::ServerPolicy& a, const config::ServerPolicy& b) {
  return a.budget == b.budget && a.tool_budgets == b.tool_budgets && a.writes == b.writes &&
         a.max_output_bytes == b.max_output_bytes && a.tool_output_caps == b.tool_output_caps;
}

bool same_transport(const config::ServerConfig& a, const config::ServerConfig& b) {
  const auto* sa = std::get_if<config::StdioServer>(&a.transport);
  const auto* sb = std::get_if<config::StdioServer>(&b.transport);
  if (sa && sb) {
    return sa->command == sb->command && sa->args == sb->args && sa->env == sb->env &&
           sa->cwd == sb->cwd;
  }
  const auto* ra = std::get_if<config::RemoteServer>(&a.transport);
  const auto* rb = std::get_if<config::RemoteServer>(&b.transport);
  return ra && rb && ra->type == rb->type && ra->url == rb->url && ra->headers == rb->headers &&
         ra->oauth == rb->oauth && ra->ca_file == rb->ca_file && ra->allow_http == rb->allow_http;
}

// Files of `served` that were accepted (read and not rejected).
std::unordered_set<std::string> accepted_files(const config::GatewayConfig& served) {
  std::unordered_set<std::string> accepted(served.files_read.begin(), served.files_read.end());
  for (const auto& rejected : served.files_rejected) accepted.erase(rejected.path);
  return accepted;
}

}  // namespace

bool defines_same(const config::ServerConfig& a, const config::ServerConfig& b) {
  return a.name == b.name && same_transport(a, b) && same_policy(a.policy, b.policy) &&
         a.timeout == b.timeout && a.idle_timeout == b.idle_timeout && a.disabled == b.disabled &&
         a.untrusted == b.untrusted && a.missing_variables == b.missing_variables;
}

std::vector<std::string> changed_operator_keys(const config::GatewayPolicy& a,
                                               const config::GatewayPolicy& b) {
  std::vector<std::string> keys;
  auto check = [&keys](bool same, const char* key) {
    if (!same) keys.emplace_back(key);
  };
  // In the order of config::FilePolicy, as the file spells them.
  check(a.read_budget == b.read_budget, "readBudget");
  check(a.mutating_budget == b.mutating_budget, "mutatingBudget");
  check(a.client_cap == b.client_cap, "clientCap");
  check(a.queue_size == b.queue_size, "queueSize");
  check(a.queue_timeout == b.queue_timeout, "queueTimeoutMs");
  check(a.abandon_bound == b.abandon_bound, "abandonMs");
  check(a.drain_bound == b.drain_bound, "drainMs");
  check(a.forbid_force == b.forbid_force, "forbidForce");
  check(a.fail_closed_when_stale == b.fail_closed_when_stale, "failClosedWhenStale");
  check(a.writes_per_server == b.writes_per_server, "writesPerServer");
  check(a.start_concurrency == b.start_concurrency, "startConcurrency");
  check(a.call_timeout == b.call_timeout, "callTimeoutMs");
  check(a.max_call == b.max_call, "maxCallMs");
  check(a.allow_unvalidated_tools == b.allow_unvalidated_tools, "allowUnvalidatedTools");
  check(a.idle_timeout == b.idle_timeout, "idleTimeoutMs");
  check(a.index_concurrency == b.index_concurrency, "indexConcurrency");
  check(a.index_wait == b.index_wait, "indexWaitMs");
  check(a.index_idle == b.index_idle, "indexIdleMs");
  check(a.access == b.access, "policy");
  check(a.max_output_bytes == b.max_output_bytes, "maxOutputBytes");
  check(a.redact == b.redact, "redact");
  check(a.audit == b.audit, "audit");
  return keys;
}

ConfigDiff diff_configs(const std::map<std::string, const config::ServerConfig*>& served_servers,
                        const config::GatewayConfig& served_files,
                        const config::GatewayPolicy& served_policy,
                        const config::GatewayConfig& next) {
  ConfigDiff diff;
  const std::unordered_set<std::string> accepted = accepted_files(served_files);
  for (const auto& rejected : next.files_rejected) {
    if (accepted.contains(rejected.path)) diff.newly_rejected.push_back(rejected);
  }
  if (!diff.newly_rejected.empty()) return diff;
  std::unordered_set<std::string_view> in_next;
  for (const config::ServerConfig& server : next.servers) {
    in_next.insert(server.name);
    auto it = served_servers.find(server.name);
    if (it == served_servers.end()) {
      diff.added.push_back(&server);
    } else if (!defines_same(*it->second, server)) {
      diff.changed.push_back(&server);
    }
  }
  for (const auto& [name, server] : served_servers) {
    if (!in_next.contains(name)) diff.removed.push_back(name);
  }
  diff.operator_keys = changed_operator_keys(served_policy, next.policy);
  return diff;
}

}  // namespace sluice::gateway
