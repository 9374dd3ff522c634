#pragma once
// A serving gateway's place in the registry of running gateways (gateway_registry.hpp): its
// entry file and its status socket (status_socket.hpp), and the document the socket answers
// `sluice status` with (status_document()).
//
// `sluice serve` (stdio and HTTP) makes one before its gateway, hands the gateway the
// recorder of its clients' names (GatewayOptions::on_client_info), publishes once the gateway
// is built (and, for HTTP, listening), closes the socket at the end of the orderly shutdown,
// and its destructor, after the loop has ended, removes the entry and the socket. A gateway
// that cannot register (no state directory, a run folder others can use) logs one warning and
// serves on; status then does not list it. A crash leaves the entry behind: status removes it.
//
// Ownership: owns the entry, the socket and the clients' names. Threading: made, published
// and destroyed on the serving thread; the recorder and the socket's answer run on the loop.
#include "cli/gateway_registry.hpp"
#include "cli/status_socket.hpp"
#include "gateway/gateway.hpp"

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::cli {

// The clients that initialized a session with this gateway: their clientInfo name and version
// (each cut to a few dozen bytes), the first kMaxClients distinct ones, and how many others.
struct ClientNames {
  static constexpr std::size_t kMaxClients = 8;
  std::vector<std::pair<std::string, std::string>> seen;
  std::uint64_t others = 0;
  void record(std::string_view name, std::string_view version);
};

// The document of one gateway, as its status socket answers it: pid, kind, version, start,
// uptime, clients, the HTTP port, a summary (servers online and in all, calls in flight,
// abandoned calls, what needs a restart with its next step) and the whole gateway.health.
std::string status_document(const gateway::Gateway& gw, const RegistryEntry& entry,
                            const ClientNames& clients);

class RunRegistration {
 public:
  RunRegistration() : clients_(std::make_shared<ClientNames>()) {}
  ~RunRegistration();
  RunRegistration(const RunRegistration&) = delete;
  RunRegistration& operator=(const RunRegistration&) = delete;

  // What GatewayOptions::on_client_info is set to.
  std::function<void(std::string_view, std::string_view)> client_recorder();

  struct Where {
    std::filesystem::path state_dir;  // empty: not registered
    std::string kind;                 // "stdio" or "http"
    std::string host;                 // http
    std::uint16_t port = 0;           // http
    bool token_required = false;      // http
  };
  // Opens the status socket on `io` and writes the entry (the socket first, so an entry
  // always has one). `gw` must outlive close().
  void publish(boost::asio::io_context& io, const gateway::Gateway& gw, Where where);
  // Stops answering (the end of the orderly shutdown).
  void close();

 private:
  std::shared_ptr<ClientNames> clients_;
  std::filesystem::path run_dir_;
  std::unique_ptr<StatusSocket> socket_;
  bool written_ = false;
};

}  // namespace sluice::cli
