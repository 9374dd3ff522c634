// The hot path of a proxied call: parsing the client's frame, splicing the arguments into
// the downstream request, and classifying the downstream's answer (small and 1 MiB).
#include "core/json.hpp"
#include "rpc/message.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {
using namespace sluice;

const std::string kClientCall =
    R"({"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"gateway.invoke",)"
    R"("arguments":{"tool_id":"files::read_file","arguments":{"path":"/tmp/a.txt",)"
    R"("encoding":"utf-8","max_bytes":65536}}}})";

std::string response_of(std::size_t payload) {
  return R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":")" +
         std::string(payload, 'x') + R"("}],"isError":false}})";
}

void BM_ParseClientRequest(benchmark::State& state) {
  for (auto _ : state) {
    auto m = rpc::parse(kClientCall, {64}, rpc::Strictness::client);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ParseClientRequest);

void BM_SpliceDownstreamRequest(benchmark::State& state) {
  auto m = std::get<rpc::Message>(rpc::parse(kClientCall, {64}, rpc::Strictness::client));
  for (auto _ : state) {
    auto args = core::json::member_span(m.params(), "arguments");
    auto inner = core::json::member_span(*args, "arguments");
    std::string params = R"({"name":"read_file","arguments":)" + std::string(*inner) + "}";
    auto frame = rpc::make_request("17", "tools/call", params);
    benchmark::DoNotOptimize(frame);
  }
}
BENCHMARK(BM_SpliceDownstreamRequest);

void BM_ParsePeerResponse(benchmark::State& state) {
  std::string frame = response_of(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    auto m = rpc::parse(frame, {64}, rpc::Strictness::peer);
    auto reply = rpc::make_result("42", std::get<rpc::Message>(m).result());
    benchmark::DoNotOptimize(reply);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_ParsePeerResponse)->Arg(64)->Arg(1 << 20);

// A 1 MiB answer of text lines (an escape every 82 bytes, as a tool's output has): the strings
// the parse checks in bulk.
void BM_ParsePeerResponseOfLines(benchmark::State& state) {
  static constexpr std::string_view kLine =
      "The quick brown fox jumps over 13 lazy dogs; {braces}, [brackets] and 'quotes'.\\n";
  std::string text;
  while (text.size() < (1u << 20)) text += kLine;
  const std::string frame =
      R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":")" + text +
      R"("}],"isError":false}})";
  for (auto _ : state) {
    auto m = rpc::parse(frame, {64}, rpc::Strictness::peer);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_ParsePeerResponseOfLines);

}  // namespace
