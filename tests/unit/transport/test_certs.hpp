#pragma once
// Certificates made at test time with OpenSSL's C API, for tests and fixtures that serve TLS:
// a test CA, and leaf certificates it signs (or that a second, untrusted CA signs), written
// as PEM files. Nothing here is a secret or lives past the test's directory.
//
// Threading: any thread; each call makes fresh keys (P-256) and writes files under `dir`.
#include <filesystem>
#include <string>
#include <vector>

namespace sluice::test {

struct CertFiles {
  std::filesystem::path cert;  // PEM certificate
  std::filesystem::path key;   // PEM private key (unencrypted)
};

struct LeafSpec {
  std::string file_stem = "server";  // <stem>.pem and <stem>.key.pem
  std::vector<std::string> dns_names = {"localhost"};
  std::vector<std::string> ip_addresses = {"127.0.0.1", "::1"};
  bool expired = false;  // valid from two days ago until yesterday
};

// A certificate authority for one test. Throws std::runtime_error when OpenSSL fails.
class TestCa {
 public:
  // Writes the CA's own certificate to <dir>/<name>.pem.
  TestCa(const std::filesystem::path& dir, const std::string& name = "ca");
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  const std::filesystem::path& certificate() const { return cert_path_; }
  // A leaf certificate for the names and addresses of `spec`, signed by this CA.
  CertFiles issue(const LeafSpec& spec) const;

 private:
  std::filesystem::path dir_;
  std::filesystem::path cert_path_;
  struct Keys;
  Keys* keys_;
};

// The usual set, under `dir`: ca.pem, and signed by it server.pem (localhost, 127.0.0.1, ::1),
// other.pem (only other.example), expired.pem (localhost, expired).
struct TestCertificates {
  std::filesystem::path ca;
  CertFiles server;
  CertFiles other_name;
  CertFiles expired;
};
TestCertificates make_test_certificates(const std::filesystem::path& dir);

}  // namespace sluice::test
