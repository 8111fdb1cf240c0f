// The page cache's hold on a data file, for cold reads (hpcnn-scale --data --storage cold): how
// much of the file is resident in memory (mincore over a read-only mapping), and dropping it
// (dirty pages written back first, then posix_fadvise DONTNEED). A file system that keeps its
// files in memory (tmpfs, ramfs) cannot drop them: the residency measured after a drop says so,
// and a reader that wants cold reads must refuse such a file rather than report warm reads as cold.
#pragma once

#include <cstdint>
#include <string>

namespace hpcnn::data {

struct Residency {
  std::uint64_t resident_bytes = 0, bytes = 0;
  // resident_bytes / bytes; 0 for an empty file (nothing of it can be served from memory).
  double fraction() const { return bytes ? double(resident_bytes) / double(bytes) : 0.0; }
  Residency& operator+=(const Residency& o) {
    resident_bytes += o.resident_bytes;
    bytes += o.bytes;
    return *this;
  }
};

// The bytes of the file open at `fd` that are in the page cache now. RuntimeError naming `path`
// when the file cannot be mapped.
Residency page_cache_residency(int fd, const std::string& path);

// Asks the kernel to drop the file's pages from the page cache (after writing back any dirty
// ones, which it would otherwise keep). RuntimeError naming `path` when a call fails. Whether the
// pages went is for page_cache_residency to tell.
void drop_from_page_cache(int fd, const std::string& path);

// The largest resident fraction a dropped file may keep and still be read cold: a few pages that
// another process of the node read in between.
constexpr double kColdResidentLimit = 0.05;

// The file system type of `fd` for messages: "tmpfs", "ext2/3/4", ... or its magic number in hex.
std::string file_system_name(int fd);

// The type of the file system `path` is on, as this process's mount table names it ("ext4",
// "nfs4", "lustre", "gpfs", "fuse.sshfs"): that of the mount whose mount point is the longest
// prefix of the path's real path, so a FUSE file system says which one. "" when it cannot be told.
// `mountinfo`: the table to read (tests).
std::string file_system_type(const std::string& path, const std::string& mountinfo = "/proc/self/mountinfo");

}  // namespace hpcnn::data
