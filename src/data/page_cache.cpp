#include "data/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/errors.hpp"

namespace hpcnn::data {

namespace {

std::uint64_t size_of(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) throw RuntimeError(path + ": " + std::strerror(errno));
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

Residency page_cache_residency(int fd, const std::string& path) {
  Residency r;
  r.bytes = size_of(fd, path);
  if (r.bytes == 0) return r;
  void* map = mmap(nullptr, r.bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw RuntimeError(path + ": cannot map it to see what the page cache holds: " + std::strerror(errno));
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t pages = (r.bytes + page - 1) / page;
  std::vector<unsigned char> in_core(pages);
  const int status = mincore(map, r.bytes, in_core.data());
  const int error = errno;
  munmap(map, r.bytes);
  if (status != 0) throw RuntimeError(path + ": mincore: " + std::strerror(error));
  for (std::uint64_t k = 0; k < pages; ++k)
    if (in_core[k] & 1) r.resident_bytes += k + 1 < pages ? page : r.bytes - k * page;
  return r;
}

void drop_from_page_cache(int fd, const std::string& path) {
  // Dirty pages (a file written just before, a decompressed copy) are not dropped: write them back.
  if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS)
    throw RuntimeError(path + ": cannot write it back before dropping its pages: " + std::strerror(errno));
  if (const int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); e != 0)
    throw RuntimeError(path + ": cannot drop its pages from the page cache: " + std::strerror(e));
}

std::string file_system_name(int fd) {
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) return "an unknown file system";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x01021994UL: return "tmpfs";
    case 0x858458f6UL: return "ramfs";
    case 0xEF53UL: return "ext2/3/4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794c7630UL: return "overlayfs";
    case 0x6969UL: return "nfs";
    case 0x65735546UL: return "fuse";
    case 0x0BD00BD0UL: return "lustre";
    case 0x47504653UL: return "gpfs";
    default: break;
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "file system 0x%lx", static_cast<unsigned long>(fs.f_type));
  return hex;
}

namespace {

// A mount point as mountinfo writes it: space, tab, newline and backslash as \ooo octal escapes.
std::string unescape_mount_point(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    const std::string octal = field.substr(i + 1, 3);
    if (field[i] == '\\' && octal.size() == 3 && octal.find_first_not_of("01234567") == std::string::npos) {
      out += static_cast<char>(std::stoi(octal, nullptr, 8));
      i += 3;
      continue;
    }
    out += field[i];
  }
  return out;
}

// Is `dir` (a mount point) `path` itself or a folder above it?
bool contains(const std::string& dir, const std::string& path) {
  if (dir == "/") return true;
  return path.compare(0, dir.size(), dir) == 0 && (path.size() == dir.size() || path[dir.size()] == '/');
}

}  // namespace

std::string file_system_type(const std::string& path, const std::string& mountinfo) {
  std::error_code ec;
  const std::string real = std::filesystem::canonical(path, ec).string();
  if (ec) return "";
  std::ifstream in(mountinfo);
  std::string line, best_dir, best_type;
  // ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS;
  // later lines mount over earlier ones at the same point.
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, word;
    if (!(fields >> id >> parent >> device >> root >> point)) continue;
    while (fields >> word && word != "-") {}
    std::string type;
    if (word != "-" || !(fields >> type)) continue;
    const std::string dir = unescape_mount_point(point);
    if (contains(dir, real) && dir.size() >= best_dir.size()) {
      best_dir = dir;
      best_type = type;
    }
  }
  return best_type;
}

}  // namespace hpcnn::data
