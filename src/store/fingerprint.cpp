#include "store/fingerprint.hpp"

// The digest through SHA256_Init/Update/Final, not EVP (nor the one-shot SHA256(), which is
// EVP inside): EVP loads OpenSSL 3's provider tables on first use, measured at 1.8 MiB of
// resident library pages, in a process that otherwise needs no crypto until a TLS server is
// configured (the fingerprint is computed for every configured server at start). Those
// functions are deprecated in OpenSSL 3.0 in favour of EVP, not removed; API level 1.1.0
// declares them without the deprecation attribute.
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::store {
namespace {

// Each field as `<length>:<bytes>,` (a netstring), so that no choice of strings can make two
// different definitions encode alike.
void add_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ',';
}

template <typename Pairs>
void add_sorted_names(std::string& out, const Pairs& pairs, bool lowercase) {
  std::vector<std::string> names;
  names.reserve(pairs.size());
  for (const auto& [name, value] : pairs) {
    std::string key = name;
    if (lowercase) {
      std::transform(key.begin(), key.end(), key.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
    names.push_back(std::move(key));
  }
  std::sort(names.begin(), names.end());
  add_field(out, std::to_string(names.size()));
  for (const std::string& name : names) add_field(out, name);
}

std::string canonical(const config::ServerConfig& server) {
  std::string out;
  add_field(out, "sluice-server-definition-1");
  if (const auto* stdio = std::get_if<config::StdioServer>(&server.transport)) {
    add_field(out, "stdio");
    add_field(out, stdio->command);
    add_field(out, std::to_string(stdio->args.size()));
    for (const std::string& arg : stdio->args) add_field(out, arg);
    add_field(out, stdio->cwd);
    add_sorted_names(out, stdio->env, false);
  } else {
    const auto& remote = std::get<config::RemoteServer>(server.transport);
    add_field(out, "remote");
    add_field(out, remote.type);
    add_field(out, remote.url);
    add_sorted_names(out, remote.headers, true);
  }
  return out;
}

}  // namespace

std::string fingerprint(const config::ServerConfig& server) {
  const std::string text = canonical(server);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX context;
  SHA256_Init(&context);
  SHA256_Update(&context, text.data(), text.size());
  SHA256_Final(digest, &context);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned int i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace sluice::store
