#pragma once
// What defines a configured server, as a short stable key for its cached listings.
//
// fingerprint() is the hex SHA-256 (OpenSSL EVP) of a canonical encoding of the server's
// definition: for a stdio server its command, args, cwd and the sorted NAMES of its env
// variables; for a remote server its type, url and the sorted header NAMES (lowercased, as
// HTTP compares them). The VALUES of env variables and headers never enter it, so a rotated
// secret keeps the cache and no secret can be recovered from the key. The same definition
// always gives the same fingerprint, across processes and versions of sluice that keep this
// encoding (its first field names the encoding's version).
// Threading: a pure function, safe from any thread.
#include "config/gateway_config.hpp"

#include <string>

namespace sluice::store {

std::string fingerprint(const config::ServerConfig& server);

}  // namespace sluice::store
