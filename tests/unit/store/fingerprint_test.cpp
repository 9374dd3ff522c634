// store::fingerprint: what defines a server (command, args, cwd, env NAMES; type, url, header
// NAMES) and never the values of its env variables or headers.
#include <gtest/gtest.h>

#include "store/fingerprint.hpp"
#include "store_files.hpp"

#include <functional>
#include <string>
#include <vector>

namespace sluice::store {
namespace {

config::ServerConfig stdio_server() {
  config::ServerConfig server;
  server.name = "files";
  server.transport = config::StdioServer{
      "/usr/bin/files-server", {"--root", "/srv"}, {{"API_KEY", "k-1"}, {"MODE", "fast"}}, "/srv"};
  return server;
}

config::ServerConfig remote_server() {
  config::ServerConfig server;
  server.name = "weather";
  server.transport = config::RemoteServer{
      "http", "https://example.test/mcp", {{"Authorization", "Bearer t-1"}, {"X-Team", "blue"}}};
  return server;
}

config::StdioServer& stdio(config::ServerConfig& server) {
  return std::get<config::StdioServer>(server.transport);
}
config::RemoteServer& remote(config::ServerConfig& server) {
  return std::get<config::RemoteServer>(server.transport);
}

TEST(Fingerprint, TheSameDefinitionAlwaysGivesTheSameHexSha256) {
  const std::string first = fingerprint(stdio_server());
  EXPECT_EQ(first, fingerprint(stdio_server()));
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(first, fingerprint(remote_server()));
}

TEST(Fingerprint, EachPartOfAStdioDefinitionChangesIt) {
  const std::string base = fingerprint(stdio_server());
  const std::vector<std::pair<const char*, std::function<void(config::StdioServer&)>>> changes{
      {"command", [](auto& s) { s.command = "/usr/bin/other"; }},
      {"an argument", [](auto& s) { s.args[1] = "/home"; }},
      {"one more argument", [](auto& s) { s.args.push_back("-v"); }},
      {"arguments split differently", [](auto& s) { s.args = {"--root /srv"}; }},
      {"cwd", [](auto& s) { s.cwd = "/tmp"; }},
      {"an env name", [](auto& s) { s.env[1].first = "LEVEL"; }},
      {"one more env variable",
       [](auto& s) {
         s.env.push_back({"DEBUG", "1"});
       }},
  };
  for (const auto& [what, change] : changes) {
    config::ServerConfig changed = stdio_server();
    change(stdio(changed));
    EXPECT_NE(fingerprint(changed), base) << what;
  }
}

TEST(Fingerprint, EachPartOfARemoteDefinitionChangesIt) {
  const std::string base = fingerprint(remote_server());
  const std::vector<std::pair<const char*, std::function<void(config::RemoteServer&)>>> changes{
      {"type", [](auto& s) { s.type = "sse"; }},
      {"url", [](auto& s) { s.url = "https://example.test/other"; }},
      {"a header name", [](auto& s) { s.headers[1].first = "X-Org"; }},
      {"one more header",
       [](auto& s) {
         s.headers.push_back({"X-Trace", "1"});
       }},
  };
  for (const auto& [what, change] : changes) {
    config::ServerConfig changed = remote_server();
    change(remote(changed));
    EXPECT_NE(fingerprint(changed), base) << what;
  }
}

TEST(Fingerprint, ValuesOfEnvAndHeadersAndTheirOrderDoNotChangeIt) {
  config::ServerConfig rotated = stdio_server();
  stdio(rotated).env = {{"MODE", "slow"}, {"API_KEY", "k-2-rotated"}};
  EXPECT_EQ(fingerprint(rotated), fingerprint(stdio_server()));

  config::ServerConfig other = remote_server();
  remote(other).headers = {{"x-team", "red"}, {"authorization", "Bearer t-2-rotated"}};
  EXPECT_EQ(fingerprint(other), fingerprint(remote_server()));
}

TEST(Fingerprint, NoSecretValueReachesTheCacheFile) {
  const std::string secret = "s3cr3t-value-9f2c";
  config::ServerConfig server = stdio_server();
  stdio(server).env = {{"API_KEY", secret}};
  config::ServerConfig web = remote_server();
  remote(web).headers = {{"Authorization", "Bearer " + secret}};

  test::TempDir dir;
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    store.save(test::listing(server.name, fingerprint(server)));
    store.save(test::listing(web.name, fingerprint(web)));
    test::flush(io, store);
    EXPECT_EQ(store.status().writes, 2u);
    // While the store is open the listings may still be in the write-ahead log: read both.
    const std::string bytes = test::bytes_of(dir.path() / "catalog.sqlite3") +
                              test::bytes_of(dir.path() / "catalog.sqlite3-wal");
    EXPECT_NE(bytes.find(fingerprint(server)), std::string::npos) << "the scan reads the rows";
    EXPECT_EQ(bytes.find(secret), std::string::npos);
  }
  EXPECT_EQ(test::bytes_of(dir.path() / "catalog.sqlite3").find(secret), std::string::npos);
}

}  // namespace
}  // namespace sluice::store
