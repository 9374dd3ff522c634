// Test certificates through OpenSSL's C API (see test_certs.hpp).
#include "test_certs.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace sluice::test {

namespace {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using CertPtr = std::unique_ptr<X509, CertFree>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificate: ") + what);
}

KeyPtr new_key() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  check(key != nullptr, "EC key generation");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "an extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, valid over [now + from, now + to] seconds.
CertPtr new_cert(EVP_PKEY* key, const std::string& common_name, long from, long to) {
  static long serial = 1;
  CertPtr cert(X509_new());
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), to);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return cert;
}

void write_cert(const std::filesystem::path& path, X509* cert) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open a certificate file");
  const bool ok = PEM_write_X509(f, cert) == 1;
  std::fclose(f);
  check(ok, "write a certificate");
}

void write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open a key file");
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  check(ok, "write a key");
}

constexpr long kDay = 24 * 60 * 60;

}  // namespace

struct TestCa::Keys {
  KeyPtr key;
  CertPtr cert;
};

TestCa::TestCa(const std::filesystem::path& dir, const std::string& name)
    : dir_(dir), cert_path_(dir / (name + ".pem")), keys_(new Keys) {
  keys_->key = new_key();
  keys_->cert = new_cert(keys_->key.get(), "sluice test CA " + name, -kDay, 30 * kDay);
  X509* cert = keys_->cert.get();
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  add_extension(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
  add_extension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(cert, cert, NID_subject_key_identifier, "hash");
  check(X509_sign(cert, keys_->key.get(), EVP_sha256()) > 0, "sign the CA");
  write_cert(cert_path_, cert);
}

TestCa::~TestCa() { delete keys_; }

CertFiles TestCa::issue(const LeafSpec& spec) const {
  KeyPtr key = new_key();
  const long from = spec.expired ? -2 * kDay : -kDay;
  const long to = spec.expired ? -kDay : 30 * kDay;
  CertPtr cert = new_cert(key.get(), spec.file_stem, from, to);
  X509* issuer = keys_->cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  std::string names;
  for (const auto& dns : spec.dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : spec.ip_addresses) names += (names.empty() ? "IP:" : ",IP:") + ip;
  add_extension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), issuer, NID_key_usage, "critical,digitalSignature");
  add_extension(cert.get(), issuer, NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), issuer, NID_authority_key_identifier, "keyid:always");
  if (!names.empty()) add_extension(cert.get(), issuer, NID_subject_alt_name, names);
  check(X509_sign(cert.get(), keys_->key.get(), EVP_sha256()) > 0, "sign a leaf");
  CertFiles files{dir_ / (spec.file_stem + ".pem"), dir_ / (spec.file_stem + ".key.pem")};
  write_cert(files.cert, cert.get());
  write_key(files.key, key.get());
  return files;
}

TestCertificates make_test_certificates(const std::filesystem::path& dir) {
  TestCa ca(dir);
  TestCertificates out;
  out.ca = ca.certificate();
  out.server = ca.issue(LeafSpec{});
  out.other_name = ca.issue(LeafSpec{"other", {"other.example"}, {}, false});
  out.expired = ca.issue(LeafSpec{"expired", {"localhost"}, {"127.0.0.1", "::1"}, true});
  return out;
}

}  // namespace sluice::test
