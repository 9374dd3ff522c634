#pragma once
// Hexadecimal digits: bytes written as lowercase hex (session ids, digests, MACs) and the value
// of one hex digit (a URI's %XX, a JSON string's \uXXXX).
#include <span>
#include <string>

namespace sluice::core {

// Two lowercase hex digits per byte.
std::string to_hex(std::span<const unsigned char> bytes);
// 0..15 for 0-9, a-f, A-F; -1 for anything else.
int hex_digit_value(char c);

}  // namespace sluice::core
