// JSON-RPC framing and parsing: the stdio line framing (core::LineSplitter), the frame
// parser (rpc::parse, both strictnesses) and what reads a parsed frame (ids, params, the
// initialize negotiation), then the same bytes as a whole stdio stream: a transport::FdStream
// reading them from a file into an mcp::Session, once in the server role (client frames,
// requests answered by a handler) and once in the client role (peer frames, answering
// requests the session has sent).
//
// The first byte of the input sets the framing: the line cap (small, so that
// over-long lines happen; 16 B to 2 KiB) and the size of the chunks the splitter is fed.
//
// Properties: no crash, leak, UB or hang; no coroutine ends in an exception; the splitter accounts
// for every byte and never keeps more than its cap; whatever the client strictness accepts, the
// peer strictness accepts as the same kind with the same id and method; a request has a usable id;
// frames built from a parsed frame's parts parse again; parse failures are value-free;
// core::json::validate accepts exactly what Boost.JSON's own parser accepts.
#include "core/json.hpp"
#include "core/limits.hpp"
#include "core/line_splitter.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "fuzz_check.hpp"
#include "mcp/protocol.hpp"
#include "mcp/session.hpp"
#include "rpc/message.hpp"
#include "transport/fd_stream.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace {

using namespace sluice;
namespace asio = boost::asio;

const core::json::ParseLimits kParseLimits{64};

void check_built_frames(const rpc::Message& m) {
  if (m.id().empty()) return;
  auto result = rpc::parse(rpc::make_result(m.id(), "{}"), kParseLimits, rpc::Strictness::client);
  FUZZ_CHECK(std::holds_alternative<rpc::Message>(result));
  FUZZ_CHECK(std::get<rpc::Message>(result).id() == m.id());
  auto error = rpc::parse(rpc::make_error(m.id(), rpc::code::kInvalidParams, m.method()),
                          kParseLimits, rpc::Strictness::client);
  FUZZ_CHECK(std::holds_alternative<rpc::Message>(error));
}

// validate() and parse_strict() handle long strings with their own bulk routines: validate
// accepts exactly what Boost.JSON's parser accepts (with the same depth limit), and what
// parse_strict accepts is the DOM Boost.JSON builds.
void check_validate_agrees(std::string_view line) {
  boost::json::error_code ec;
  boost::json::parse_options opt;
  opt.max_depth = kParseLimits.max_depth;
  boost::json::value dom = boost::json::parse(line, ec, {}, opt);
  FUZZ_CHECK(!ec == !core::json::validate(line, kParseLimits).has_value());
  // parse_strict (which also refuses duplicate keys) builds Boost.JSON's DOM.
  auto strict = core::json::parse_strict(line, kParseLimits);
  if (strict) FUZZ_CHECK(!ec && *strict == dom);
}

void check_frame(std::string_view line) {
  check_validate_agrees(line);
  auto peer = rpc::parse(std::string(line), kParseLimits, rpc::Strictness::peer);
  auto client = rpc::parse(std::string(line), kParseLimits, rpc::Strictness::client);
  if (auto* failure = std::get_if<rpc::ParseFailure>(&client)) {
    FUZZ_CHECK(!failure->message.empty());
    FUZZ_CHECK(!fuzz::contains(failure->message, fuzz::kSentinel));
    return;
  }
  const rpc::Message& m = std::get<rpc::Message>(client);
  FUZZ_CHECK(std::holds_alternative<rpc::Message>(peer));
  const rpc::Message& p = std::get<rpc::Message>(peer);
  FUZZ_CHECK(p.kind() == m.kind());
  FUZZ_CHECK(p.id() == m.id());
  FUZZ_CHECK(p.method() == m.method());
  if (m.is_request()) FUZZ_CHECK(rpc::id_key(m.id()).has_value());
  boost::json::value params = m.params_value(kParseLimits);
  FUZZ_CHECK(params.is_object() || params.is_array());
  if (const boost::json::object* object = m.params_object()) {
    FUZZ_CHECK(m.params_member("name").has_value() == object->contains("name"));
  }
  if (m.method() == "initialize") {
    FUZZ_CHECK(mcp::is_supported_version(mcp::negotiate_initialize(m.params())));
    (void)mcp::requested_version(m.params());
  }
  check_built_frames(m);
}

void split_lines(std::string_view data, std::size_t cap, std::size_t chunk) {
  core::LineSplitter splitter(cap, cap / 4);
  std::size_t accounted = 0;
  auto on_line = [&](const core::Line& line) {
    FUZZ_CHECK(line.text.size() <= cap);
    FUZZ_CHECK(line.truncated == (line.total_bytes > cap));
    FUZZ_CHECK(line.truncated || line.text.size() == line.total_bytes);
    accounted += line.total_bytes;
    if (!line.truncated) check_frame(line.text);
  };
  std::size_t newlines = 0;
  for (std::size_t at = 0; at < data.size(); at += chunk) {
    std::string_view part = data.substr(at, chunk);
    for (char c : part) newlines += c == '\n';
    splitter.feed(part, on_line);
    FUZZ_CHECK(splitter.buffered_bytes() <= cap);
  }
  splitter.finish(on_line);
  FUZZ_CHECK(accounted + newlines == data.size());
}

// Answers every request at once, with an empty result or, for "fail", an error.
class Answering : public mcp::Handler {
 public:
  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    if (request.message().method() == "fail") {
      request.respond_error(rpc::code::kInvalidParams, "refused");
    } else {
      request.respond_result("{}");
    }
    co_return;
  }
  void on_notification(const rpc::Message&) override {}
};

asio::awaitable<void> ask(std::shared_ptr<mcp::Session> session) {
  mcp::Reply reply = co_await session->request("tools/list", "{}", std::chrono::hours(1));
  if (reply.message) FUZZ_CHECK(reply.message->is_response());
}

// The bytes as a stdio stream read from a file (FdStream reads regular files directly).
void run_stream(std::string_view data, const core::Limits& limits, rpc::Strictness strictness) {
  int fd = ::memfd_create("fuzz-stream", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
  FUZZ_CHECK(::lseek(fd, 0, SEEK_SET) == 0);
  asio::io_context io;
  const bool server_role = strictness == rpc::Strictness::client;
  auto session = mcp::Session::create(
      io, mcp::SessionOptions{server_role ? "client" : "fuzz", strictness, &limits});
  auto stream = transport::FdStream::create(
      io, fd, -1, limits,
      server_role ? transport::OverlongLine::refuse : transport::OverlongLine::end_stream);
  Answering handler;
  session->attach(stream.get(), &handler);
  bool closed = false;
  stream->start(session, [&closed] { closed = true; });
  if (!server_role) {
    for (int i = 0; i < 3; ++i) core::spawn(io, ask(session), "a fuzzed request");
  }
  io.run();
  FUZZ_CHECK(closed);
  FUZZ_CHECK(session->pending_outgoing() == 0);
  session->detach();
  stream->close();
  FUZZ_CHECK(core::coroutine_failures() == 0);
}

void run(std::string_view data) {
  if (data.empty()) return;
  const auto selector = static_cast<std::uint8_t>(data.front());
  data.remove_prefix(1);
  const std::size_t cap = std::size_t{16} << (selector & 7);  // 16 B .. 2 KiB
  const std::size_t chunk = 1 + (selector >> 3) * 4;          // 1 .. 125 bytes
  check_frame(data);
  split_lines(data, cap, chunk);
  core::Limits limits;
  limits.max_message_bytes = cap;
  run_stream(data, limits, rpc::Strictness::client);
  run_stream(data, limits, rpc::Strictness::peer);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Log lines are formatted (and escaped) as always, then written where nobody reads them.
  sluice::core::log::configure(sluice::core::log::Level::debug, {.file = "/dev/null"});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
