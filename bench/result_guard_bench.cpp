// What the result guard (redaction screen, output cap) costs a proxied call's answer when it
// has nothing to do, the common case, beside the cost of classifying that answer: a small
// result, and 1 MiB of English-like text, whose words start two of the screen's literals
// ("bearer", the "aut" of authorization) every 160 bytes.
#include "config/gateway_config.hpp"
#include "gateway/policy/redactor.hpp"
#include "gateway/policy/result_guard.hpp"
#include "rpc/message.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {
using namespace sluice;

std::string result_of(std::size_t payload) {
  const std::string_view words =
      "the quick brown fox jumps over the lazy dog; they asked whether a key, a token or a "
      "bearer of news would be seen here, because authors write such words every day. ";
  std::string text;
  while (text.size() < payload) text += words;
  text.resize(payload);
  return R"({"content":[{"type":"text","text":")" + text + R"("}],"isError":false})";
}

void BM_GuardAResultWithNothingToDo(benchmark::State& state) {
  const std::string result = result_of(static_cast<std::size_t>(state.range(0)));
  config::GatewayPolicy policy;
  gateway::ResultGuard guard(policy, 64);
  config::ServerConfig server;
  server.name = "fx";
  for (auto _ : state) {
    std::string copy = result;
    guard.apply(server, "echo", copy);
    benchmark::DoNotOptimize(copy);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * result.size()));
}
BENCHMARK(BM_GuardAResultWithNothingToDo)->Arg(64)->Arg(1 << 20);

void BM_ScreenOnly(benchmark::State& state) {
  const std::string result = result_of(static_cast<std::size_t>(state.range(0)));
  gateway::Redactor redactor(config::RedactSettings{});
  for (auto _ : state) benchmark::DoNotOptimize(redactor.may_hold_secret(result));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * result.size()));
}
BENCHMARK(BM_ScreenOnly)->Arg(64)->Arg(1 << 20);

// The screen's own speed: 1 MiB of one letter (no candidates to confirm), the text of the
// latency driver's large calls.
void BM_ScreenOnlyOneLetter(benchmark::State& state) {
  const std::string result = R"({"content":[{"type":"text","text":")" +
                             std::string(static_cast<std::size_t>(state.range(0)), 'x') +
                             R"("}],"isError":false})";
  gateway::Redactor redactor(config::RedactSettings{});
  for (auto _ : state) benchmark::DoNotOptimize(redactor.may_hold_secret(result));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * result.size()));
}
BENCHMARK(BM_ScreenOnlyOneLetter)->Arg(1 << 20);

void BM_ClassifyTheAnswerForComparison(benchmark::State& state) {
  const std::string frame = R"({"jsonrpc":"2.0","id":7,"result":)" +
                            result_of(static_cast<std::size_t>(state.range(0))) + "}";
  for (auto _ : state) {
    auto m = rpc::parse(frame, {64}, rpc::Strictness::peer);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_ClassifyTheAnswerForComparison)->Arg(64)->Arg(1 << 20);

}  // namespace
