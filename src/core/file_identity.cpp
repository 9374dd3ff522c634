#include "core/file_identity.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace sluice::core {

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{path, st.st_dev, st.st_ino,
                      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                          st.st_mtim.tv_nsec};
}

std::optional<FileIdentity> executable_of(pid_t pid) {
  std::string link = pid == 0 ? "/proc/self/exe" : "/proc/" + std::to_string(pid) + "/exe";
  char exe[4096];
  ssize_t n = ::readlink(link.c_str(), exe, sizeof exe - 1);
  if (n <= 0) return std::nullopt;
  return identity_of(std::string(exe, static_cast<std::size_t>(n)));
}

bool changed_since(const FileIdentity& before) {
  auto now = identity_of(before.path);
  return !now || !(*now == before);
}

}  // namespace sluice::core
