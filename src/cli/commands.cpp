// `sluice call` and `sluice servers`: a gateway in this process, no client session.
#include "cli/audit_setup.hpp"
#include "cli/serve.hpp"
#include "cli/shutdown.hpp"
#include "core/describe.hpp"
#include "core/json.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"
#include "process/child.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <signal.h>

#include <cstdio>

namespace sluice::cli {
namespace asio = boost::asio;
namespace bj = boost::json;

namespace {

// Prints a CallToolResult for a person: text content as is (escaped), other content by
// kind, structuredContent as JSON. Returns whether the result was an error.
bool print_result(std::string_view result_json) {
  bj::error_code ec;
  bj::value v = bj::parse(result_json, ec);
  if (ec || !v.is_object()) {
    print_err("sluice: the server's result is not a JSON object");
    return true;
  }
  const auto& obj = v.get_object();
  bool is_error = false;
  if (const auto* e = obj.if_contains("isError"); e && e->is_bool()) is_error = e->get_bool();
  auto print = is_error ? print_err : print_out;
  if (const auto* content = obj.if_contains("content"); content && content->is_array()) {
    for (const auto& item : content->get_array()) {
      if (!item.is_object()) continue;
      const auto& io = item.get_object();
      const auto* type = io.if_contains("type");
      const auto* text = io.if_contains("text");
      if (type && type->is_string() && type->get_string() == "text" && text &&
          text->is_string()) {
        print(text->get_string());
      } else if (type && type->is_string()) {
        print(fmt::format("[{} content]", std::string_view(type->get_string())));
      }
    }
  }
  if (const auto* sc = obj.if_contains("structuredContent"); sc && !is_error) {
    print_out("structuredContent: " + bj::serialize(*sc));
  }
  return is_error;
}

}  // namespace

int call_tool(const CommonOptions& options, const std::string& tool_id, const std::string& args,
              bool json_output, int timeout_ms) {
  if (!setup_logging(options)) return 2;
  ::signal(SIGPIPE, SIG_IGN);
  process::become_subreaper();
  auto parsed = core::json::parse_strict(args, {options.limits.max_json_depth});
  if (!parsed || !parsed->is_object()) {
    print_err(parsed ? fmt::format("sluice: --args must be a JSON object, not {}",
                                   core::describe_kind(*parsed))
                     : "sluice: --args is not valid JSON: " + parsed.error().message);
    return 2;
  }
  asio::io_context io;
  auto config = load_config(options);
  announce_run_trust(options, *config, false);
  gateway::Gateway gw(io, config, with_audit_log(gateway_options(options), options, *config));
  // P9: a signal cancels the call (the cancel is forwarded), then the children are torn
  // down as `serve` tears them down, with no drain (the operator asked to stop), and the
  // exit code is 128+n. The call's own end takes the same path.
  core::CancelSignal cancel;
  OrderlyShutdown shutdown(io, gw, std::chrono::milliseconds(0), [&] { cancel.cancel(); }, [] {});
  gw.start();
  int exit_code = 0;
  core::spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::optional<std::chrono::milliseconds> timeout;
        if (timeout_ms > 0) timeout = std::chrono::milliseconds(timeout_ms);
        gateway::Gateway::InvokeRequest call{
            .tool_id = tool_id, .arguments_json = args, .timeout = timeout, .cancel = &cancel};
        auto outcome = co_await gw.invoke(std::move(call));
        if (shutdown.stopping()) co_return;  // a signal: nothing is printed
        if (json_output) {
          std::string line = std::string(outcome.result()) + "\n";
          std::fwrite(line.data(), 1, line.size(), stdout);
          bj::error_code ec;
          bj::value v = bj::parse(outcome.result(), ec);
          bool is_error = !ec && v.is_object() && v.get_object().if_contains("isError") &&
                          v.get_object().at("isError") == true;
          exit_code = is_error ? 1 : 0;
        } else {
          exit_code = print_result(outcome.result()) ? 1 : 0;
        }
        shutdown.stop("the call ended");
      },
      "sluice call", [&] {
        exit_code = core::kInternalErrorExit;
        shutdown.stop("the call failed");
      });
  io.run();
  std::fflush(stdout);
  if (shutdown.signal_number() != 0) return 128 + shutdown.signal_number();
  return exit_code;
}

int list_servers(const CommonOptions& options, bool json_output, bool probe) {
  if (!setup_logging(options)) return 2;
  ::signal(SIGPIPE, SIG_IGN);
  process::become_subreaper();
  auto config = load_config(options);
  for (const auto& w : config->warnings) print_err("warning: " + w);
  announce_run_trust(options, *config, false);
  asio::io_context io;
  gateway::Gateway gw(io, config, gateway_options(options));
  // P9, as for `call`: a signal tears the probed servers down, then exit 128+n.
  OrderlyShutdown shutdown(io, gw, std::chrono::milliseconds(0), [] {}, [] {});
  bj::array rows;
  core::spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (const auto& d : gw.fleet().servers()) {
          if (!probe || shutdown.stopping()) break;
          co_await d->ensure_started();
        }
        if (shutdown.stopping()) co_return;
        gateway::Gateway::HealthQuery every;
        every.limit = gw.fleet().servers().size();
        bj::object health = gw.health(every);
        rows = health.at("servers").as_array();
        shutdown.stop("the listing ended");
      },
      "sluice servers", [&] { shutdown.stop("the listing failed"); });
  io.run();
  if (shutdown.signal_number() != 0) return 128 + shutdown.signal_number();
  if (json_output) {
    std::string line = bj::serialize(bj::object{{"servers", rows}}) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    return 0;
  }
  if (rows.empty()) {
    print_out("no servers configured (looked for .mcp.json in the project, ~/.mcp.json, "
              "~/.claude/.mcp.json and --config files)");
    return 0;
  }
  for (const auto& r : rows) {
    const auto& o = r.as_object();
    std::string status(o.at("status").as_string());
    std::string line =
        fmt::format("{:<24} {:<22} {:<6}", std::string_view(o.at("name").as_string()), status,
                    std::string_view(o.at("transport").as_string()));
    if (probe) line += fmt::format(" {:>4} tools", o.at("tool_count").to_number<std::int64_t>());
    line += "  " + std::string(o.at("source").as_string());
    if (probe && o.at("last_error").is_string()) {
      line += "\n    last error: " + std::string(o.at("last_error").as_string());
    }
    print_out(line);
  }
  return 0;
}

}  // namespace sluice::cli
