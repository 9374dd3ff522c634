#include "core/random.hpp"

#include <sys/random.h>

#include <cerrno>

namespace sluice::core {

bool fill_random(std::span<unsigned char> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      return false;
    }
  }
  return true;
}

}  // namespace sluice::core
