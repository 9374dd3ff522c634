// The cost admission adds to one call: acquiring a slot from a tool budget and a client
// budget and giving both back, on the loop, as gateway.invoke does (no contention).
#include "gateway/calls/admission.hpp"

#include <benchmark/benchmark.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace {
using namespace sluice;

void BM_AdmitAndReleaseOneCall(benchmark::State& state) {
  boost::asio::io_context io;
  gateway::Budget tool(io, 4, 64);
  gateway::Budget client(io, 16, 64);
  for (auto _ : state) {
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          gateway::Permit permit;
          co_await tool.acquire(std::chrono::seconds(30), nullptr, permit);
          co_await client.acquire(std::chrono::seconds(30), nullptr, permit);
        },
        boost::asio::detached);
    io.run();
    io.restart();
  }
}
BENCHMARK(BM_AdmitAndReleaseOneCall);

// The same coroutine without admission: what the loop costs anyway.
void BM_EmptyCallCoroutine(benchmark::State& state) {
  boost::asio::io_context io;
  for (auto _ : state) {
    boost::asio::co_spawn(
        io, []() -> boost::asio::awaitable<void> { co_return; }, boost::asio::detached);
    io.run();
    io.restart();
  }
}
BENCHMARK(BM_EmptyCallCoroutine);

}  // namespace
