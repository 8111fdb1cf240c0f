#include "base/file_kind.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace hpcnn {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

// strerror's text with a lower-case first letter, to continue "FILE: ...".
std::string system_reason(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

std::string not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return S_ISREG(st.st_mode) ? "" : kind_of(st.st_mode);
  const int err = errno;
  if (err == ELOOP) return "symlink loop";
  if (err == ENOENT) {
    struct stat link {};
    // The name exists as a link whose target does not: say so, the user will look at the link.
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return "dangling symlink";
    return "no such file";
  }
  return system_reason(err);
}

}  // namespace hpcnn
