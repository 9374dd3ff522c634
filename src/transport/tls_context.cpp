// The HTTP client's TLS context and handshake classification (see tls_context.hpp).
#include "transport/tls_context.hpp"

#include <boost/asio/ssl/error.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace sluice::transport {

ClientTls::ClientTls(const std::string& ca_file) : context_(boost::asio::ssl::context::tls_client) {
  SSL_CTX* ctx = context_.native_handle();
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    problem_ = "TLS 1.2 cannot be required";
  }
  boost::system::error_code ec;
  context_.set_verify_mode(boost::asio::ssl::verify_peer, ec);
  if (ca_file.empty()) {
    context_.set_default_verify_paths(ec);
    if (ec) problem_ = "the system CA store cannot be loaded";
  } else {
    context_.load_verify_file(ca_file, ec);
    if (ec) problem_ = "the server's CA file cannot be loaded";
  }
}

bool prepare_tls_connection(SSL* ssl, const HttpUrl& url) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (url.host_is_ip) return X509_VERIFY_PARAM_set1_ip_asc(param, url.host.c_str()) == 1;
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set_tlsext_host_name(ssl, url.host.c_str()) == 1 &&
         X509_VERIFY_PARAM_set1_host(param, url.host.c_str(), url.host.size()) == 1;
}

TlsFailure classify_tls_failure(SSL* ssl, const boost::system::error_code& ec) {
  switch (SSL_get_verify_result(ssl)) {
    case X509_V_OK:
      break;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
    case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD:
    case X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
      return TlsFailure::certificate_expired;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return TlsFailure::hostname_mismatch;
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_INVALID_CA:
      return TlsFailure::certificate_untrusted;
    default:
      return TlsFailure::handshake_failed;
  }
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
      case SSL_R_UNSUPPORTED_PROTOCOL:
      case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      case SSL_R_NO_PROTOCOLS_AVAILABLE:
      case SSL_R_VERSION_TOO_LOW:
        return TlsFailure::protocol_version;
      default:
        break;
    }
  }
  return TlsFailure::handshake_failed;
}

}  // namespace sluice::transport
