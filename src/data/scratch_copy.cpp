#include "data/scratch_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/errors.hpp"
#include "data/file_bytes.hpp"

namespace hpcnn::data {

namespace {

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Closes a descriptor unless released: a copy half-written when an error is thrown is freed.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// Reads exactly `n` bytes at `offset`; false when the file is shorter or unreadable.
bool read_at(int fd, void* buf, std::size_t n, off_t offset) {
  return pread(fd, buf, n, offset) == static_cast<ssize_t>(n);
}

void write_all(int fd, const std::uint8_t* bytes, std::size_t n, const std::string& what) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t put = ::write(fd, bytes + done, n - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) throw RuntimeError(what + ": " + (put < 0 ? std::strerror(errno) : "nothing written"));
    done += static_cast<std::size_t>(put);
  }
}

}  // namespace

std::string scratch_dir(const std::string& requested) {
  if (!requested.empty()) return requested;
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

bool is_gzip_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const FdGuard guard(fd);
  unsigned char magic[2] = {0, 0};
  return read_at(fd, magic, 2, 0) && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::uint64_t gzip_inflated_size(const std::string& path) {
  if (!is_gzip_file(path)) return 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const FdGuard guard(fd);
  struct stat st {};
  unsigned char isize[4];
  if (fstat(fd, &st) != 0 || st.st_size < 18 || !read_at(fd, isize, 4, st.st_size - 4)) return 0;
  return std::uint64_t{isize[0]} | std::uint64_t{isize[1]} << 8 | std::uint64_t{isize[2]} << 16 |
         std::uint64_t{isize[3]} << 24;  // little-endian (RFC 1952)
}

void check_scratch_space(const std::string& dir, std::uint64_t need_bytes, const std::string& what) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0)
    throw RuntimeError(dir + ": scratch folder for " + what + ": " + std::strerror(errno));
  const std::uint64_t free_bytes = std::uint64_t{fs.f_bavail} * fs.f_frsize;
  if (need_bytes > free_bytes)
    throw RuntimeError(dir + ": " + what + " need " + mib(need_bytes) + ", the folder has " + mib(free_bytes) +
                       " free (set TMPDIR to a larger folder, or use --cache)");
}

int decompressed_copy(const std::string& path, const std::string& dir) {
  // Inflated with the readers' own checks and size limit; transiently in memory, as when the set
  // was loaded.
  const std::vector<std::uint8_t> bytes = read_file_bytes(path);
  std::string name = dir + "/hpcnn-decompressed-XXXXXX";
  FdGuard fd(mkostemp(name.data(), O_CLOEXEC));  // mode 0600: private to this user
  if (fd.get() < 0) throw RuntimeError(dir + ": scratch file for a decompressed copy of " + path + ": " + std::strerror(errno));
  ::unlink(name.c_str());  // nameless from here on: freed with the descriptor, however the process ends
  write_all(fd.get(), bytes.data(), bytes.size(), dir + ": writing the decompressed copy of " + path);
  return fd.release();
}

}  // namespace hpcnn::data
