// The HTTP client over TLS against a loopback server with certificates made at test time:
// trust through the given CA file only, hostname and IP verification, expiry, the TLS 1.2
// floor, and no fall back to plain HTTP.
#include "transport/http_client.hpp"

#include "../run_until.hpp"
#include "core/spawn.hpp"
#include "test_certs.hpp"
#include "test_http_server.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <optional>

namespace sluice::transport {
namespace {

namespace asio = boost::asio;
using test::TestConnection;
using test::TestHttpServer;

asio::awaitable<void> http_client_tls_answer_hello(TestConnection& c) {
  while (auto request = co_await c.read_request()) {
    if (!co_await c.write(test::http_response(200, "hello"))) break;
  }
}

class HttpClientTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/sluice-tls-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = new std::filesystem::path(pattern);
    certs_ = new test::TestCertificates(test::make_test_certificates(*dir_));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete certs_;
    delete dir_;
  }

  static test::TestTls serving(const test::CertFiles& files, bool tls11_only = false) {
    return test::TestTls{files.cert.string(), files.key.string(), tls11_only};
  }

  HttpClientOptions trusting_the_test_ca() const {
    HttpClientOptions options;
    options.ca_file = certs_->ca.string();
    return options;
  }

  HttpResult<HttpResponse> get(HttpClient& client, const std::string& url) {
    std::optional<HttpResult<HttpResponse>> result;
    core::spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          // A named request: GCC 12 mis-copies an aggregate temporary built inside co_await.
          HttpRequest request{"GET", url, {}, {}};
          result.emplace(co_await client.exchange(std::move(request)));
        },
        "a test exchange");
    EXPECT_TRUE(test::run_until(io_, [&] { return result.has_value(); }));
    if (!result) return HttpError{HttpFailure::bad_response, TlsFailure::none, "no result"};
    return *result;
  }

  static void expect_tls_failure(const HttpResult<HttpResponse>& result, TlsFailure why) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().failure, HttpFailure::tls_failed) << result.error().message;
    EXPECT_EQ(tls_failure_name(result.error().tls), tls_failure_name(why))
        << result.error().message;
  }

  static std::filesystem::path* dir_;
  static test::TestCertificates* certs_;
  asio::io_context io_;
};

std::filesystem::path* HttpClientTlsTest::dir_ = nullptr;
test::TestCertificates* HttpClientTlsTest::certs_ = nullptr;

TEST_F(HttpClientTlsTest, AServerTrustedThroughTheCaFileAnswersByNameAndByAddress) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1", serving(certs_->server));
  HttpClient client(io_, trusting_the_test_ca());
  for (std::string host : {"localhost", "127.0.0.1"}) {
    auto result = get(client, server.url("/", host));
    ASSERT_TRUE(result) << host << ": " << result.error().message;
    EXPECT_EQ(result->body, "hello");
    // SNI names a host name, never an IP literal.
    EXPECT_EQ(server.last_server_name(), host == "localhost" ? host : "");
  }
}

TEST_F(HttpClientTlsTest, AKeptAliveTlsConnectionIsReused) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1", serving(certs_->server));
  HttpClient client(io_, trusting_the_test_ca());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(get(client, server.url("/", "localhost")));
  EXPECT_EQ(server.accepted(), 1u);
}

TEST_F(HttpClientTlsTest, WithoutTheCaFileTheSystemStoreDoesNotTrustTheTestCa) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1", serving(certs_->server));
  HttpClient client(io_, {});
  expect_tls_failure(get(client, server.url("/", "localhost")), TlsFailure::certificate_untrusted);
}

TEST_F(HttpClientTlsTest, ACertificateForAnotherNameIsAHostnameMismatch) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1",
                        serving(certs_->other_name));
  HttpClient client(io_, trusting_the_test_ca());
  expect_tls_failure(get(client, server.url("/", "localhost")), TlsFailure::hostname_mismatch);
  // An IP literal is checked against the certificate's IP addresses, not its names.
  expect_tls_failure(get(client, server.url("/", "127.0.0.1")), TlsFailure::hostname_mismatch);
}

TEST_F(HttpClientTlsTest, AnExpiredCertificateIsReportedAsExpired) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1", serving(certs_->expired));
  HttpClient client(io_, trusting_the_test_ca());
  auto result = get(client, server.url("/", "localhost"));
  expect_tls_failure(result, TlsFailure::certificate_expired);
  EXPECT_EQ(result.error().message.find("localhost"), 0u + std::string("https://").size());
}

TEST_F(HttpClientTlsTest, AServerOfferingOnlyTls11IsAProtocolVersionFailure) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1",
                        serving(certs_->server, true));
  HttpClient client(io_, trusting_the_test_ca());
  expect_tls_failure(get(client, server.url("/", "localhost")), TlsFailure::protocol_version);
}

TEST_F(HttpClientTlsTest, AnHttpsUrlToAPlainServerFailsInsteadOfFallingBack) {
  // A plain HTTP server that answers whatever arrives (a ClientHello) with an HTTP error.
  TestHttpServer plain(io_, [](TestConnection& c) -> asio::awaitable<void> {
    co_await c.write(test::http_response(400, "not TLS"));
  });
  HttpClient client(io_, trusting_the_test_ca());
  auto url = plain.url("/", "localhost");
  url.replace(0, 4, "https");
  expect_tls_failure(get(client, url), TlsFailure::handshake_failed);
  EXPECT_EQ(plain.accepted(), 1u);
}

TEST_F(HttpClientTlsTest, ACaFileThatCannotBeReadFailsEveryHttpsExchange) {
  TestHttpServer server(io_, http_client_tls_answer_hello, "127.0.0.1", serving(certs_->server));
  HttpClientOptions options;
  options.ca_file = (*dir_ / "missing.pem").string();
  HttpClient client(io_, options);
  auto result = get(client, server.url("/", "localhost"));
  expect_tls_failure(result, TlsFailure::handshake_failed);
  EXPECT_EQ(result.error().message.find("missing"), std::string::npos);
}

}  // namespace
}  // namespace sluice::transport
