#pragma once
// Live configuration (restart path ds_config_reload): sluice rereads its configuration when a
// file it loaded, or one discovery would read, changes (config::FileWatch), and when
// gateway.refresh asks, and applies the difference in process, never by restarting itself:
// - a file that was accepted before and is rejected now (no longer parses or validates):
//   the last good configuration is kept entirely, and health says which file and why
//   (value-free), with one warning in the log;
// - otherwise, by server name: an added server joins the fleet (lazy, in search); a removed
//   one leaves it at once (found no more, new calls refused) and stops (invariant P4) once
//   its pending calls end; a changed one (what defines it: diff_server) restarts with its new
//   configuration once it has no call pending, never forced: until then health shows the
//   change and the next step;
// - changed operator settings (the "sluice" object) are not applied live: health lists the
//   keys and says that restarting sluice applies them.
// Each application that changes the fleet is one configuration generation (1 at start), one
// audit record (kind config_reload) and one log line naming the restart path.
//
// Ownership: owns the watch and the waiting changes; borrows the fleet, the call ledger and
// the audit ring (parts of the same Gateway, which outlive it). Downstreams that leave the
// fleet are kept by the fleet until shutdown (coroutines may still point at them).
// Threading: the gateway's loop thread. Guarantees: never throws for anything found on disk;
// nothing happens after stop().
#include "config/file_watch.hpp"
#include "config/gateway_config.hpp"
#include "core/clock.hpp"
#include "gateway/audit.hpp"
#include "gateway/calls/ledger.hpp"
#include "gateway/fleet.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::gateway {

// Whether two entries of one server name differ in what defines the server: its transport
// (command, args, env, cwd; or type, url, headers), its admission policy, its timeouts and
// whether it is disabled or untrusted. Where it was read from does not count.
bool defines_same(const config::ServerConfig& a, const config::ServerConfig& b);

// The keys of the "sluice" object (as the file spells them) whose values differ.
std::vector<std::string> changed_operator_keys(const config::GatewayPolicy& served,
                                               const config::GatewayPolicy& next);

// What a reread found, compared with what is served.
struct ConfigDiff {
  // Files accepted before and rejected now: when not empty, nothing else applies.
  std::vector<config::GatewayConfig::RejectedFile> newly_rejected;
  std::vector<const config::ServerConfig*> added;    // entries of `next`
  std::vector<std::string> removed;                  // names served and not in `next`
  std::vector<const config::ServerConfig*> changed;  // entries of `next`
  std::vector<std::string> operator_keys;            // changed_operator_keys
};

// `served_servers`: what each server name is served with now (the entry a waiting change
// will install, when there is one). `served_files`: the configuration the last good files
// came from.
ConfigDiff diff_configs(const std::map<std::string, const config::ServerConfig*>& served_servers,
                        const config::GatewayConfig& served_files,
                        const config::GatewayPolicy& served_policy,
                        const config::GatewayConfig& next);

class ConfigReload {
 public:
  struct Hooks {
    // discover() again with the options of the start (flags applied as then); empty: sluice
    // has nothing to reread (tests, `sluice call`).
    std::function<std::shared_ptr<const config::GatewayConfig>()> rediscover;
    // The fleet changed (servers added, removed or replaced): the catalog is rebuilt and
    // aggregate clients are told their lists changed.
    std::function<void()> fleet_changed;
  };
  // How long a burst of file events is waited out, and how often waiting changes are looked
  // at again while some wait for pending calls to end.
  static constexpr std::chrono::milliseconds kDebounce{200};
  static constexpr std::chrono::milliseconds kSettleEvery{100};

  ConfigReload(asio::io_context& io, Fleet& fleet, const CallLedger& calls, AuditRing& audit,
               std::shared_ptr<const config::GatewayConfig> served, Hooks hooks);
  ~ConfigReload() { stop(); }
  ConfigReload(const ConfigReload&) = delete;
  ConfigReload& operator=(const ConfigReload&) = delete;

  // Starts watching the files (a watch that cannot be set is said once in the log and in
  // health; rereads by gateway.refresh still work).
  void start();
  // No more rereads or applications (gateway shutdown).
  void stop();
  // Rereads now and applies what it may; the outcome, for gateway.refresh.
  boost::json::object reread(std::string_view why);
  // Applies `next` as a reread would have found it (the part of reread() after discovery).
  void apply(std::shared_ptr<const config::GatewayConfig> next);

  std::uint64_t generation() const { return generation_; }
  // The top-level health keys: config_generation, config_files, config_reload.
  void add_to_health(boost::json::object& out) const;
  // A waiting change of `d`'s configuration, into its health row.
  void add_to_row(const Downstream& d, boost::json::object& row) const;
  // Servers whose new configuration waits for their pending calls to end.
  std::size_t waiting() const { return waiting_.size(); }
  // Removed servers not stopped yet.
  std::size_t draining() const { return draining_.size(); }

 private:
  struct Outcome {
    std::string result = "none";  // none, applied, unchanged, rejected, failed
    std::size_t added = 0, removed = 0, changed = 0, waiting = 0;
  };
  boost::json::object outcome_json() const;
  std::map<std::string, const config::ServerConfig*> served_servers() const;
  void apply_diff(const config::GatewayConfig& next, const ConfigDiff& diff);
  // Stops removed servers whose calls ended and restarts changed ones that are idle; looks
  // again after kSettleEvery while any wait.
  void settle();
  asio::awaitable<void> stop_removed(Downstream* d);
  asio::awaitable<void> replace(std::string name);
  std::size_t pending_calls(std::string_view server) const;
  void watch_files();

  asio::io_context& io_;
  Fleet& fleet_;
  const CallLedger& calls_;
  AuditRing& audit_;
  Hooks hooks_;
  std::shared_ptr<const config::GatewayConfig> served_;  // the last good configuration
  std::shared_ptr<const config::GatewayConfig> last_read_;
  // The configuration of the start: its operator settings are what the gateway runs with
  // until sluice is restarted.
  std::shared_ptr<const config::GatewayConfig> startup_;
  std::unique_ptr<config::FileWatch> watch_;
  std::vector<std::string> watch_problems_;
  core::Timer settle_timer_;
  // Shared with the timer's handler: false once stopped, so a late (aborted) one does nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool settle_armed_ = false;
  bool stopped_ = false;
  std::uint64_t generation_ = 1;
  std::uint64_t rereads_ = 0;
  Outcome last_;
  std::vector<config::GatewayConfig::RejectedFile> problem_;  // of the last reread
  std::vector<std::string> operator_keys_;
  // Changed servers waiting to be idle, by name: the entry they restart with.
  std::map<std::string, config::ServerConfig, std::less<>> waiting_;
  // Changed servers being restarted now, by name: the entry they restart with.
  std::map<std::string, config::ServerConfig, std::less<>> replacing_;
  std::vector<Downstream*> draining_;  // removed, not stopped yet
};

}  // namespace sluice::gateway
