#pragma once
// Random bytes from the kernel's CSPRNG (getrandom(2)): HTTP session ids and the input
// bridge's MAC key. Preferred to OpenSSL's RAND_bytes where nothing else of OpenSSL is needed
// yet: RAND_bytes' first use loads OpenSSL's providers, some 3.5 MiB of resident library
// pages in every sluice process.
#include <cstddef>
#include <span>

namespace sluice::core {

// Fills `out` (retrying an interrupted call); false when the kernel gives none (a sandbox
// forbidding getrandom).
bool fill_random(std::span<unsigned char> out);

}  // namespace sluice::core
