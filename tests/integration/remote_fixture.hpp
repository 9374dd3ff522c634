#pragma once
// Runs the remote MCP fixture (tests/fixtures/http_fixture_server.cpp) for a test: started
// with the flags given and --record into the test's directory, its environment carrying the
// test's leftover-process marker, its port read from its one stdout line. The test holds its
// stdin: stop() (or the destructor) closes it and the fixture exits, so a test that fails
// half-way leaves nothing behind.
//
// One RemoteFixture owns one fixture process; it is used from the test's thread.
#include "harness.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sluice::test {

class RemoteFixture {
 public:
  RemoteFixture(const TempDir& dir, const std::string& marker,
                const std::vector<std::string>& flags = {})
      : record_(dir.path() / ("fixture-record-" + std::to_string(++count()) + ".jsonl")) {
    std::vector<std::string> args{"SLUICE_FIXTURE_MARKER=" + marker, HTTP_FIXTURE_SERVER,
                                  "--record=" + record_.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Sluice>(args, dir.path(), dir.path(), "/usr/bin/env");
    auto line = process_->read_line();
    if (!line || !line->starts_with("listening ")) {
      throw std::runtime_error("http_fixture_server did not start: " + process_->stderr_text());
    }
    port_ = std::stoi(line->substr(10));
  }

  int port() const { return port_; }
  std::string url(const std::string& path = "/mcp") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // The --record lines so far, one object per HTTP request the fixture received.
  std::vector<boost::json::object> records() const {
    std::vector<boost::json::object> lines;
    std::ifstream in(record_);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(boost::json::parse(line).as_object());
    }
    return lines;
  }

  // Closes its stdin and waits for it to exit; its exit code (nullopt after the guard).
  std::optional<int> stop() {
    process_->close_stdin();
    return process_->wait_exit();
  }
  Sluice& process() { return *process_; }

 private:
  static int& count() {
    static int n = 0;
    return n;
  }

  std::filesystem::path record_;
  std::unique_ptr<Sluice> process_;
  int port_ = 0;
};

}  // namespace sluice::test
