#pragma once
// The TLS side of the HTTP client, over OpenSSL through asio::ssl: the client context (TLS 1.2
// at least, peer verification against the system CA store or one given CA file), what each
// connection sets before its handshake (SNI, the name or IP address the certificate must
// carry), and the reading of a failed handshake as a TlsFailure. Private to src/transport/.
//
// Ownership: ClientTls owns its asio::ssl::context; connections borrow it, so it outlives
// them (the HttpClient holds both). Threading: the client's io_context thread.
#include "transport/http_client.hpp"
#include "transport/http_url.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <optional>
#include <string>

namespace sluice::transport {

class ClientTls {
 public:
  // Never throws: a CA file that cannot be loaded is kept as `problem()`, and every https
  // exchange then fails with it.
  explicit ClientTls(const std::string& ca_file);

  boost::asio::ssl::context& context() { return context_; }
  // Why this context cannot verify anything (value-free), if so.
  const std::optional<std::string>& problem() const { return problem_; }

 private:
  boost::asio::ssl::context context_;
  std::optional<std::string> problem_;
};

// Sets SNI (for a host name only) and the identity the peer's certificate must show (the name,
// or the IP address of an IP literal). False when OpenSSL refused either.
bool prepare_tls_connection(SSL* ssl, const HttpUrl& url);

// Why a handshake failed, from the verification result of `ssl` and the handshake's error.
TlsFailure classify_tls_failure(SSL* ssl, const boost::system::error_code& ec);

}  // namespace sluice::transport
