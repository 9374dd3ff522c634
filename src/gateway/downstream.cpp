#include "gateway/downstream.hpp"

#include "core/json.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "core/token_bucket.hpp"
#include "core/version.hpp"
#include "mcp/protocol.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <csignal>
#include <typeinfo>
#include <unistd.h>

namespace sluice::gateway {
namespace cj = core::json;
namespace bj = boost::json;

std::string_view to_string(Status s) {
  switch (s) {
    case Status::lazy: return "lazy";
    case Status::starting: return "starting";
    case Status::online: return "online";
    case Status::restarting: return "restarting";
    case Status::failed: return "failed";
    case Status::offline: return "offline";
    case Status::unsupported_transport: return "unsupported_transport";
    case Status::disabled: return "disabled";
  }
  return "unknown";
}

std::string Downstream::overlong_line_reason() const {
  return fmt::format(
      "it sent a message over the {} byte limit (a protocol violation), so sluice stopped "
      "reading it",
      limits_.max_message_bytes);
}

namespace {

std::optional<std::pair<struct stat, std::string>> stat_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st, path);
}


}  // namespace

// Requests and notifications the downstream sends to sluice.
class Downstream::PeerHandler : public mcp::Handler {
 public:
  explicit PeerHandler(Downstream& owner) : owner_(owner) {}
  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    // Server-to-client requests (sampling, elicitation, roots) are relayed in aggregate
    // mode; behind meta-tools nothing is advertised, so they are not available.
    if (!owner_.events_.relay_request) {
      request.respond_error(rpc::code::kMethodNotFound, "Method not found");
      co_return;
    }
    const auto& m = request.message();
    // Named locals, not temporaries: GCC 12 destroys a temporary of a conditional expression
    // inside a co_await twice.
    std::string method = m.method();
    std::string params = m.params().empty() ? std::string("{}") : std::string(m.params());
    if (method == "roots/list") owner_.asked_for_roots_ = true;
    auto relayed = owner_.events_.relay_request(std::move(method), std::move(params));
    mcp::Reply reply = co_await std::move(relayed);
    if (reply.status == mcp::Reply::Status::result) {
      request.respond_result(reply.message->result());
    } else if (reply.status == mcp::Reply::Status::error) {
      request.respond_error_raw(reply.message->error());
    } else {
      request.respond_error(rpc::code::kInternalError, "the client did not answer");
    }
  }
  void on_notification(const rpc::Message& message) override { owner_.on_notification(message); }

 private:
  Downstream& owner_;
};

Downstream::Downstream(asio::io_context& io, config::ServerConfig config,
                       const core::Limits& limits, const config::GatewayPolicy& policy,
                       DownstreamEvents events)
    : io_(io),
      config_(std::move(config)),
      limits_(limits),
      policy_(policy),
      events_(std::move(events)) {
  if (std::holds_alternative<config::RemoteServer>(config_.transport)) {
    status_ = Status::unsupported_transport;
    last_error_ = "remote transports are not supported yet";
  }
  if (config_.disabled) {
    disabled_reason_ = fmt::format(
        "disabled in {} (\"disabled\": true); sluice does not start it: set \"disabled\": "
        "false there to use it",
        config_.source_file);
  }
}

Downstream::~Downstream() {
  if (session_) session_->detach();
  if (stream_) stream_->close();
  // child_'s destructor SIGKILLs the group and reaps if teardown did not run.
}

const ToolEntry* Downstream::find_tool(std::string_view name) const {
  for (const auto& t : tools_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string Downstream::spawn_token() const {
  return fmt::format("{}.{}.{}", ::getpid(), config_.name, generation_);
}

void Downstream::fail(std::string reason) {
  status_ = Status::failed;
  last_error_ = std::move(reason);
  core::log::warn("server {}: {}", config_.name, last_error_);
}

asio::awaitable<bool> Downstream::ensure_started(bool explicit_request) {
  if (config_.disabled) co_return false;  // whoever asks, an operator's connect included
  if (status_ == Status::online) co_return true;
  if (status_ == Status::unsupported_transport || shutting_down_) co_return false;
  if (status_ == Status::restarting && restart_done_) {
    co_await restart_done_->wait();
    co_return status_ == Status::online;
  }
  if (status_ == Status::starting && started_) {
    co_await started_->wait();
    co_return status_ == Status::online;
  }
  if (explicit_request) {
    held_ = false;
    external_signal_ = 0;
    consecutive_failures_ = 0;
  } else if (held_ || (status_ == Status::failed &&
                       std::chrono::steady_clock::now() < retry_not_before_)) {
    co_return false;
  }
  co_return co_await start();
}

asio::awaitable<bool> Downstream::start() {
  // Whatever goes wrong inside (EMFILE, bad_alloc), waiters are released and the child
  // does not outlive the failure.
  bool threw = false;
  bool ok = false;
  try {
    ok = co_await start_impl();
  } catch (const std::exception& e) {
    threw = true;
    core::log::error("server {}: start failed ({})", config_.name, typeid(e).name());
  }
  if (threw) {
    fail("internal error while starting");
    if (child_) co_await teardown(false);
    status_ = Status::failed;
    if (started_) started_->set();
  }
  co_return ok;
}

asio::awaitable<bool> Downstream::start_impl() {
  const auto* stdio = std::get_if<config::StdioServer>(&config_.transport);
  if (!stdio) co_return false;
  if (!config_.missing_variables.empty()) {
    fail("configuration refers to unset variables: see the warnings for " + config_.name);
    co_return false;
  }
  // Leftovers of a previous run (a crash) are torn down before a new spawn.
  while (tearing_down_) co_await teardown_done_->wait();
  if (child_) co_await teardown(false);
  if (shutting_down_) co_return false;
  status_ = Status::starting;
  started_ = std::make_unique<core::Event>(io_);
  ++generation_;
  tearing_down_ = false;
  signalled_by_sluice_ = false;
  last_exit_.reset();

  process::SpawnSpec spec;
  spec.program = stdio->command;
  spec.args = stdio->args;
  spec.env = stdio->env;
  spec.cwd = stdio->cwd;
  spec.env.emplace_back(std::string(process::kOwnerTokenVariable), spawn_token());
  auto child = process::Child::spawn(spec);
  if (!child) {
    fail("could not start: " + child.error().message);
    ++consecutive_failures_;
    retry_not_before_ = std::chrono::steady_clock::now() + backoff_delay();
    started_->set();
    co_return false;
  }
  child_ = std::move(*child);
  core::log::info("server {}: started (pid {})", config_.name, child_->pid());
  spawned_executable_.reset();
  {
    // The binary the kernel actually ran (ds_stale_code compares against it later).
    char exe[4096];
    std::string link = "/proc/" + std::to_string(child_->pid()) + "/exe";
    ssize_t n = ::readlink(link.c_str(), exe, sizeof exe - 1);
    if (n > 0) {
      std::string path(exe, static_cast<std::size_t>(n));
      if (auto st = stat_path(path)) {
        spawned_executable_ = FileIdentity{
            path, st->first.st_dev, st->first.st_ino,
            static_cast<std::int64_t>(st->first.st_mtim.tv_sec) * 1000000000 +
                st->first.st_mtim.tv_nsec};
      }
    }
  }

  exited_ = std::make_unique<core::Event>(io_);
  pidfd_watch_ = std::make_shared<asio::posix::stream_descriptor>(io_, ::dup(child_->pidfd()));
  core::spawn(io_, watch_exit(pidfd_watch_), "a server's exit watch");
  stderr_ =
      std::make_shared<asio::posix::stream_descriptor>(io_, child_->take_stderr().release());
  core::spawn(io_, drain_stderr(stderr_), "a server's stderr drain");

  // A line over the message limit is a protocol violation here (not waited out).
  stream_ = transport::FdStream::create(io_, child_->take_stdout().release(),
                                        child_->take_stdin().release(), limits_,
                                        transport::OverlongLine::end_stream);
  mcp::SessionOptions opts;
  opts.label = config_.name;
  opts.strictness = rpc::Strictness::peer;
  opts.limits = &limits_;
  session_ = mcp::Session::create(io_, opts);
  handler_ = std::make_unique<PeerHandler>(*this);
  session_->attach(stream_.get(), handler_.get());
  stream_->start(session_, [this, generation = generation_] {
    // The server closed its stdout (it crashed or quit): its calls already failed with the
    // session; it cannot serve again, so it is marked failed and torn down now rather than
    // when its exit is noticed.
    // While starting, the failed handshake or listing reports it instead.
    if (generation != generation_ || tearing_down_ || !child_ || status_ != Status::online) {
      return;
    }
    std::string why = stream_ && stream_->protocol_violation()
                          ? overlong_line_reason()
                          : "the server closed its output (it exited or crashed)";
    core::spawn(io_, on_unexpected_end(std::move(why)), "a server's recovery after it ended");
  });

  bool ok = co_await handshake();
  if (ok) ok = co_await list_tools();
  // Prompts and resources matter only when they are aggregated.
  if (ok && events_.relay_request) {
    bool listed = co_await list_other();
    ok = listed;
  }
  if (ok && (!session_ || session_->closed())) {
    fail("the server exited while starting");
    ok = false;
  }
  if (ok) {
    status_ = Status::online;
    online_since_ = std::chrono::steady_clock::now();
    last_error_.clear();
    core::log::info("server {}: online, {} tools, protocol {}", config_.name, tools_.size(),
                    protocol_version_);
  } else {
    co_await teardown(false);
    status_ = Status::failed;
    ++consecutive_failures_;
    retry_not_before_ = std::chrono::steady_clock::now() + backoff_delay();
  }
  started_->set();
  if (ok && events_.tools_changed) events_.tools_changed();
  co_return ok;
}

asio::awaitable<bool> Downstream::handshake() {
  // In aggregate mode sluice relays sampling, elicitation and roots requests to its client,
  // so it offers them; otherwise it offers nothing.
  std::string capabilities = events_.relay_request
                                 ? R"({"sampling":{},"elicitation":{},"roots":{}})"
                                 : "{}";
  std::string params = R"({"protocolVersion":)" + cj::quote(mcp::kLatestVersion) +
                       R"(,"capabilities":)" + capabilities +
                       R"(,"clientInfo":{"name":"sluice","version":)" + cj::quote(core::kVersion) + "}}";
  auto reply = co_await session_->request("initialize", params, limits_.initialize_timeout);
  if (!reply.ok()) {
    fail(reply.status == mcp::Reply::Status::timeout ? "initialize timed out"
         : reply.status == mcp::Reply::Status::error ? "initialize was refused"
                                                     : "the server exited during initialize");
    co_return false;
  }
  auto version = cj::member_span(reply.message->result(), "protocolVersion");
  bj::error_code ec;
  bj::value v = version ? bj::parse(*version, ec) : bj::value();
  if (ec || !v.is_string() || !mcp::is_supported_version(v.get_string())) {
    fail("the server answered initialize with an unsupported protocol version");
    co_return false;
  }
  protocol_version_ = std::string(v.get_string());
  auto caps = cj::member_span(reply.message->result(), "capabilities");
  server_capabilities_ = caps ? std::string(cj::trim(*caps)) : "{}";
  session_->notify("notifications/initialized", "");
  co_return true;
}

bool Downstream::offers(std::string_view capability) const {
  return cj::member_span(server_capabilities_, capability).has_value();
}

void Downstream::notify(std::string_view method, std::string_view params) {
  // Starting counts: a server may ask for roots while it starts, and hear of a change then.
  if (session_ && !session_->closed() && !tearing_down_) session_->notify(method, params);
}

asio::awaitable<mcp::Reply> Downstream::forward(std::string method, std::string params,
                                                std::chrono::milliseconds timeout,
                                                core::CancelSignal* cancel) {
  if (!session_ || status_ != Status::online) co_return mcp::Reply{mcp::Reply::Status::closed, {}};
  auto session = session_;
  mcp::Reply reply = co_await session->request(std::move(method), std::move(params), timeout, cancel);
  co_return reply;
}

asio::awaitable<mcp::Reply> Downstream::call_tool(std::string_view tool,
                                                  std::string_view arguments_json,
                                                  std::chrono::milliseconds timeout,
                                                  core::CancelSignal* cancel,
                                                  std::string_view progress_token,
                                                  const mcp::CallTracking* tracking) {
  if (!session_ || status_ != Status::online) co_return mcp::Reply{mcp::Reply::Status::closed, {}};
  std::string params;
  params.reserve(64 + tool.size() + arguments_json.size());
  params += R"({"name":)";
  params += cj::quote(tool);
  params += R"(,"arguments":)";
  params += arguments_json.empty() ? std::string_view("{}") : arguments_json;
  if (!progress_token.empty()) {
    params += R"(,"_meta":{"progressToken":)";
    params += progress_token;
    params += '}';
  }
  params += '}';
  auto session = session_;  // keeps the session alive across a teardown
  co_return co_await session->request("tools/call", std::move(params), timeout, cancel, nullptr,
                                      tracking);
}

std::size_t Downstream::resolved_budget(const ToolEntry& tool) const {
  // A1: tool override, then the server's default, then the class default.
  std::size_t budget = tool.read_only ? policy_.read_budget : policy_.mutating_budget;
  if (config_.policy.budget) budget = *config_.policy.budget;
  for (const auto& [name, value] : config_.policy.tool_budgets) {
    if (name == tool.name) budget = value;
  }
  return budget;
}

Budget* Downstream::write_lane(const ToolEntry& tool) {
  if (tool.read_only || !std::holds_alternative<config::StdioServer>(config_.transport)) {
    return nullptr;
  }
  if (config_.policy.budget) return nullptr;
  for (const auto& [name, value] : config_.policy.tool_budgets) {
    if (name == tool.name) return nullptr;
  }
  if (!write_lane_) {
    write_lane_ = std::make_unique<Budget>(
        io_, config_.policy.writes.value_or(policy_.writes_per_server), policy_.queue_size);
  }
  return write_lane_.get();
}

ToolAdmission& Downstream::admission(const ToolEntry& tool) {
  auto it = admissions_.find(tool.name);
  if (it != admissions_.end()) return *it->second;
  auto admission =
      std::make_unique<ToolAdmission>(io_, resolved_budget(tool), policy_.queue_size);
  ToolAdmission& ref = *admission;
  admissions_.emplace(tool.name, std::move(admission));
  return ref;
}

std::uint64_t Downstream::work_in_flight() const {
  std::uint64_t n = 0;
  for (const auto& [name, a] : admissions_) n += a->counters.in_flight;
  return n;
}

void Downstream::on_notification(const rpc::Message& message) {
  if (message.method() == "notifications/tools/list_changed") {
    if (status_ != Status::online || relist_pending_) return;
    relist_pending_ = true;
    core::spawn(
        io_,
        [this]() -> asio::awaitable<void> {
          relist_pending_ = false;
          if (status_ != Status::online) co_return;
          bool listed = co_await list_tools();
          if (listed && events_.tools_changed) events_.tools_changed();
        },
        "a server's tool relisting");
  } else if (message.method() == "notifications/progress") {
    if (events_.progress) events_.progress(message.params());
  } else if (message.method() == "notifications/prompts/list_changed" ||
             message.method() == "notifications/resources/list_changed") {
    if (status_ != Status::online || !events_.relay_request) return;
    core::spawn(io_, relist_other(message.method()), "a server's prompt or resource relisting");
  } else if (message.method() == "notifications/message" ||
             message.method() == "notifications/resources/updated") {
    if (events_.relay_notification) events_.relay_notification(message.method(), message.params());
  }
}

asio::awaitable<void> Downstream::drain_stderr(
    std::shared_ptr<asio::posix::stream_descriptor> err) {
  core::LineSplitter splitter(limits_.max_stderr_line_bytes, limits_.max_stderr_line_bytes);
  std::string name = config_.name;
  // A child's stderr is logged at debug. At most stderr_lines_per_second lines and
  // stderr_bytes_per_second bytes are logged (bursts up to twice that, and always room for
  // one whole line); the rest are counted and the count is logged when logging resumes, so
  // a flood cannot turn into a flood of the log. Below debug the lines are only drained.
  const double rate = static_cast<double>(limits_.stderr_lines_per_second);
  core::TokenBucket lines(rate, 2 * rate);
  const double byte_rate = static_cast<double>(limits_.stderr_bytes_per_second);
  core::TokenBucket bytes(
      byte_rate, std::max(2 * byte_rate, static_cast<double>(limits_.max_stderr_line_bytes)));
  std::uint64_t suppressed = 0;
  // The count of lines not logged is reported at most once a second (and at the end), not
  // after every line a sustained flood lets through.
  auto reported_at = core::TokenBucket::Clock::time_point{};
  auto report = [&] {
    core::log::warn("server {} stderr: {} lines not logged (over {} lines/s or {} bytes/s)", name,
                    suppressed, limits_.stderr_lines_per_second, limits_.stderr_bytes_per_second);
    suppressed = 0;
  };
  auto log_line = [&](const core::Line& line) {
    if (core::log::level() > core::log::Level::debug) return;
    auto now = core::TokenBucket::Clock::now();
    if (!lines.take(now) || !bytes.take(static_cast<double>(line.text.size()), now)) {
      ++suppressed;
      return;
    }
    if (suppressed > 0 && now - reported_at >= std::chrono::seconds(1)) {
      reported_at = now;
      report();
    }
    core::log::debug("server {} stderr: {}{}", name, line.text,
                     line.truncated ? " (truncated)" : "");
  };
  std::array<char, 16384> buf;
  for (;;) {
    boost::system::error_code ec;
    std::size_t n = co_await err->async_read_some(asio::buffer(buf),
                                                  asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    splitter.feed(std::string_view(buf.data(), n), log_line);
  }
  splitter.finish(log_line);
  if (suppressed > 0) report();
}

asio::awaitable<void> Downstream::relist_other(std::string notification) {
  bool listed = co_await list_other();
  if (listed && events_.relay_notification) events_.relay_notification(notification, "");
}

asio::awaitable<bool> Downstream::relist() {
  if (status_ != Status::online || !session_) co_return false;
  bool ok = co_await list_tools();
  if (ok && events_.tools_changed) events_.tools_changed();
  co_return ok;
}

bool Downstream::executable_changed() const {
  if (!spawned_executable_ || !child_) return false;
  auto now = stat_path(spawned_executable_->path);
  if (!now) return true;  // removed or renamed away
  const struct stat& st = now->first;
  FileIdentity id{spawned_executable_->path, st.st_dev, st.st_ino,
                  static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  return !(id == *spawned_executable_);
}

}  // namespace sluice::gateway
