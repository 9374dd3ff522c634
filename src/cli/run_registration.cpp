#include "cli/run_registration.hpp"

#include "core/log.hpp"
#include "core/wall_clock.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace sluice::cli {
namespace bj = boost::json;

namespace {

constexpr std::size_t kNameBytes = 64;
constexpr std::size_t kVersionBytes = 32;

// `text` cut to at most `bytes`, never inside a UTF-8 sequence.
std::string cut(std::string_view text, std::size_t bytes) {
  if (text.size() <= bytes) return std::string(text);
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

// What needs a restart: the gateway itself (a replaced binary) and each server row that says
// so, with the next step each names.
bj::array restarts_required(const bj::object& health) {
  bj::array out;
  auto add = [&out](const bj::value& server, const bj::value* required) {
    if (!required || !required->is_object()) return;
    const bj::object& r = required->get_object();
    bj::object item{{"server", server}};
    if (const bj::value* v = r.if_contains("reason")) item["reason"] = *v;
    if (const bj::value* v = r.if_contains("next_step")) item["next_step"] = *v;
    out.push_back(std::move(item));
  };
  if (const bj::value* gw = health.if_contains("gateway"); gw && gw->is_object()) {
    add(nullptr, gw->get_object().if_contains("restart_required"));
  }
  if (const bj::value* rows = health.if_contains("servers"); rows && rows->is_array()) {
    for (const bj::value& row : rows->get_array()) {
      if (!row.is_object()) continue;
      const bj::value* name = row.get_object().if_contains("name");
      add(name ? *name : bj::value(nullptr), row.get_object().if_contains("restart_required"));
    }
  }
  return out;
}

bj::object summary_of(const gateway::Gateway& gw, const bj::object& health) {
  std::size_t online = 0;
  std::uint64_t abandoned = 0;
  for (const auto& server : gw.fleet().servers()) {
    if (server->phase() == gateway::Phase::online) ++online;
    for (const auto& [tool, admission] : server->admissions()) {
      abandoned += admission->counters.abandoned_in_flight;
    }
  }
  bj::object summary;
  summary["servers_total"] = gw.fleet().servers().size();
  summary["servers_online"] = online;
  if (const bj::value* by = health.if_contains("servers_by_status")) {
    summary["servers_by_status"] = *by;
  }
  summary["calls_in_flight"] = gw.pending_work();
  summary["abandoned"] = abandoned;
  summary["restart_required"] = restarts_required(health);
  return summary;
}

}  // namespace

void ClientNames::record(std::string_view name, std::string_view version) {
  std::pair<std::string, std::string> client{cut(name, kNameBytes), cut(version, kVersionBytes)};
  if (std::find(seen.begin(), seen.end(), client) != seen.end()) return;
  if (seen.size() >= kMaxClients) {
    ++others;
    return;
  }
  seen.push_back(std::move(client));
}

std::string status_document(const gateway::Gateway& gw, const RegistryEntry& entry,
                            const ClientNames& clients) {
  bj::object health = gw.health();
  bj::object doc;
  doc["pid"] = entry.pid;
  doc["kind"] = entry.kind;
  doc["version"] = entry.version;
  doc["started_at"] = core::utc_text(
      std::chrono::system_clock::time_point(std::chrono::milliseconds(entry.started_unix_ms)));
  doc["uptime_ms"] = std::max<std::int64_t>(0, core::unix_ms_now() - entry.started_unix_ms);
  bj::array names;
  for (const auto& [name, version] : clients.seen) {
    names.push_back(bj::object{{"name", name}, {"version", version}});
  }
  doc["clients"] = std::move(names);
  doc["clients_not_listed"] = clients.others;
  if (entry.kind == "http") {
    doc["http"] = bj::object{
        {"host", entry.host}, {"port", entry.port}, {"token_required", entry.token_required}};
  }
  doc["summary"] = summary_of(gw, health);
  doc["health"] = std::move(health);
  return bj::serialize(doc);
}

RunRegistration::~RunRegistration() {
  socket_.reset();  // removes the socket file
  if (written_) remove_entry(run_dir_, ::getpid());
}

std::function<void(std::string_view, std::string_view)> RunRegistration::client_recorder() {
  return [clients = clients_](std::string_view name, std::string_view version) {
    clients->record(name, version);
  };
}

void RunRegistration::publish(boost::asio::io_context& io, const gateway::Gateway& gw,
                              Where where) {
  if (where.state_dir.empty()) return;
  run_dir_ = run_dir_of(where.state_dir);
  if (auto ready = prepare_run_dir(run_dir_); !ready) {
    core::log::warn("not registered for `sluice status`: {}", ready.error().message);
    return;
  }
  RegistryEntry entry;
  entry.pid = ::getpid();
  entry.kind = where.kind;
  entry.start_ticks = process_start_ticks(entry.pid).value_or(0);
  entry.started_unix_ms = core::unix_ms_now();
  entry.version = gw.options().version;
  entry.host = where.host;
  entry.port = where.port;
  entry.token_required = where.token_required;
  StatusSocket::Options options;
  options.path = socket_file(run_dir_, entry.pid);
  auto socket = StatusSocket::open(io, options, [&gw, entry, clients = clients_] {
    return status_document(gw, entry, *clients);
  });
  if (!socket) {
    core::log::warn("not registered for `sluice status`: {}", socket.error().message);
    return;
  }
  socket_ = std::move(*socket);
  socket_->start();
  if (auto written = write_entry(run_dir_, entry); !written) {
    core::log::warn("not registered for `sluice status`: {}", written.error().message);
    socket_.reset();
    return;
  }
  written_ = true;
}

void RunRegistration::close() {
  if (socket_) socket_->close();
}

}  // namespace sluice::cli
