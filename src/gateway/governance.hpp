#pragma once
// Governance: the governed stops and restarts of downstreams and the checks every mutation
// passes (restart paths ds_restart_explicit, ds_refresh, gw_binary_stale):
// - restart_server / disconnect_server: single flight per server; refused while the server
//   has calls pending (abandoned ones included) unless `force`, which cancels them;
// - refresh: rereads the configuration and applies it (ConfigReload, ds_config_reload), then
//   every online server lists its tools again; the relisting is refused while any call is
//   pending unless `force` (the reread is not: a reload never forces anything);
// - every `force: true` passes force_refusal (sluice.forbidForce), and is audited when refused;
// - sluice's own executable replaced on disk since start (binary_stale); with
//   sluice.failClosedWhenStale, stale_refusal() says why mutating requests refuse.
// Governance never restarts, re-executes or signals sluice itself: it only reports.
//
// Ownership: borrows the fleet, the call ledger, the catalog, the audit ring, the policy and
// the reload (all parts of the same Gateway, which outlive it). Threading: the gateway's loop
// thread. Results are CallToolResult texts (isError for refusals); nothing throws on bad input.
#include "config/gateway_config.hpp"
#include "core/file_identity.hpp"
#include "gateway/audit.hpp"
#include "gateway/calls/ledger.hpp"
#include "gateway/catalog/catalog.hpp"
#include "gateway/fleet.hpp"
#include "gateway/reload.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace sluice::gateway {

class Governance {
 public:
  Governance(Fleet& fleet, CallLedger& calls, const Catalog& catalog, AuditRing& audit,
             const config::GatewayPolicy& policy, ConfigReload* reload = nullptr);
  Governance(const Governance&) = delete;
  Governance& operator=(const Governance&) = delete;

  // gateway.restart_server (`restart`) or gateway.disconnect_server.
  asio::awaitable<std::string> restart_server(std::string_view server, bool force, bool restart);
  // gateway.refresh.
  asio::awaitable<std::string> refresh(bool force);
  // Empty when `force` is allowed for `action`, else why it is refused (sluice.forbidForce)
  // followed by `instead`, what to do without force.
  std::string force_refusal(std::string_view action, std::string_view instead);
  // gw_binary_stale: sluice's own executable was replaced on disk since it started.
  bool binary_stale() const;
  // With failClosedWhenStale and a stale binary: why mutating requests refuse, else empty.
  std::string stale_refusal() const;

 private:
  // The refusal of a restart or disconnect of `name` (pending calls, force forbidden), else
  // empty.
  std::string restart_refusal(const Downstream& d, bool force, std::string_view action);

  Fleet& fleet_;
  CallLedger& calls_;
  const Catalog& catalog_;
  AuditRing& audit_;
  const config::GatewayPolicy& policy_;
  ConfigReload* reload_;  // nullptr: refresh does not reread the configuration
  std::set<std::string> operations_;            // servers with a restart/disconnect under way
  std::optional<core::FileIdentity> self_exe_;  // sluice's own executable at start
};

}  // namespace sluice::gateway
