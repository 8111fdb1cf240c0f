// Whole-file reading for the data set readers: plain or gzip (detected from the magic bytes, not
// the name), with a cap on the decompressed size so a corrupt or hostile file cannot make us
// allocate without bound. Throws RuntimeError("FILE: problem").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hpcnn::data {

// Largest (decompressed) file the readers accept: far above CIFAR-100's 150 MB training file.
inline constexpr std::size_t kMaxDataFileBytes = std::size_t{2} << 30;

// The file's bytes; a gzip file (one or more members) is inflated. Errors: missing or unreadable
// file, corrupt or truncated gzip data, bytes after the last gzip member that are not another
// member, more than max_bytes of data.
std::vector<std::uint8_t> read_file_bytes(const std::string& path, std::size_t max_bytes = kMaxDataFileBytes);

// Whether a regular file is at `path` (through symlinks): false when nothing is there; throws
// RuntimeError("FILE: is a FIFO") and the like when something else is (never opened).
bool file_exists(const std::string& path);

// Memory the decoded set may take: what the node has available, given by the caller (the data
// layer does not query the machine). Throws RuntimeError("FILE: decoding needs ... (what), more
// than the ... of memory available") when `need_bytes` exceeds `limit_bytes` (0: no limit).
void check_memory(const std::string& path, std::size_t need_bytes, std::size_t limit_bytes, const std::string& what);
inline constexpr std::size_t kNoMemoryLimit = 0;

}  // namespace hpcnn::data
