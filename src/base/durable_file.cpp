#include "base/durable_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/errors.hpp"

namespace hpcnn {

void sync_path(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw RuntimeError(path + ": cannot open to sync: " + std::strerror(errno));
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  // EINVAL: a file system that cannot sync this kind of file (some do not for folders).
  if (rc != 0 && err != EINVAL) throw RuntimeError(path + ": cannot sync to disk: " + std::strerror(err));
}

void write_file_durably(const std::string& path, std::string_view bytes, const std::string& what) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  try {
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw RuntimeError(tmp + ": cannot write " + what + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        close(fd);
        throw RuntimeError(tmp + ": cannot write " + what + ": " + std::strerror(err));
      }
      done += static_cast<std::size_t>(n);
    }
    const bool synced = fsync(fd) == 0 || errno == EINVAL;
    const int err = errno;
    if (close(fd) != 0 || !synced) throw RuntimeError(tmp + ": cannot write " + what + ": " + std::strerror(err));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw RuntimeError(path + ": cannot put " + what + " in place: " + std::strerror(errno));
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  std::string folder = std::filesystem::path(path).parent_path().string();
  sync_path(folder.empty() ? "." : folder);
}

}  // namespace hpcnn
