// Gateway construction and start(): linear in the configuration (a long autoStart list once
// looked each name up with a linear search over the servers), and a disabled server is never
// started by autoStart.
#include "../cpu_time.hpp"
#include "gateway/downstream/downstream.hpp"
#include "gateway/gateway.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>

namespace sluice::gateway {
namespace {

std::shared_ptr<const config::GatewayConfig> gateway_startup_disabled_servers(int count) {
  auto config = std::make_shared<config::GatewayConfig>();
  config->servers.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    config::ServerConfig server;
    server.name = "s" + std::to_string(i);
    server.transport = config::StdioServer{"/nonexistent-dir/srv", {}, {}, {}};
    server.source_file = "/projects/app/.mcp.json";
    server.disabled = true;
    config->servers.push_back(std::move(server));
    // Reversed, so that a linear search would walk most of the list for each name.
    config->auto_start.push_back("s" + std::to_string(count - 1 - i));
  }
  return config;
}

TEST(GatewayStartup, ALongAutoStartListOverManyServersStartsInLinearTime) {
  constexpr int kServers = 100000;
  auto config = gateway_startup_disabled_servers(kServers);
  boost::asio::io_context io;
  const double start = test::thread_cpu_seconds();
  {
    Gateway gw(io, config, GatewayOptions{});
    gw.start();
    io.run();
    ASSERT_EQ(gw.fleet().servers().size(), static_cast<std::size_t>(kServers));
    EXPECT_EQ(gw.fleet().find("s0"), gw.fleet().servers().front().get());
    EXPECT_EQ(gw.fleet().find("s99999"), gw.fleet().servers().back().get());
    EXPECT_EQ(gw.fleet().find("s100000"), nullptr);
    for (const auto& d : gw.fleet().servers()) {
      ASSERT_EQ(d->phase(), Phase::disabled) << d->name();
      ASSERT_EQ(d->generation(), 0u) << d->name() << " was started";
    }
  }
  const double took = test::thread_cpu_seconds() - start;
  EXPECT_LT(took, 5.0) << "construction and start took " << took << " s of CPU";
}

TEST(GatewayStartup, ADisabledServerSaysWhereItIsDisabled) {
  auto config = gateway_startup_disabled_servers(1);
  boost::asio::io_context io;
  Gateway gw(io, config, GatewayOptions{});
  const Downstream& d = *gw.fleet().servers().front();
  EXPECT_EQ(to_string(d.phase()), "disabled");
  EXPECT_NE(d.last_error().find("disabled in /projects/app/.mcp.json"), std::string::npos)
      << d.last_error();
}

}  // namespace
}  // namespace sluice::gateway
