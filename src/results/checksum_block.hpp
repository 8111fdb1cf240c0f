// The checksum block of a result file (results/result_file.hpp).
//
// HDF5 does not checksum everything it parses (variable-length strings live in unchecked global
// heaps), and a damaged file can crash or hang the library. So the writer reserves an HDF5 user
// block (kUserBlock bytes at the start, which HDF5 skips) and, once the file is built, fills it
// with a text header holding the file size and the CRC-32 of every byte after the block:
//   hpcnn-result\nchecksum-block 1\nsize <bytes>\ncrc32 <8 hex digits>\n  (then NUL bytes)
// The reader verifies both before HDF5 sees the file, and requires them: a file without the header
// (damaged in its first bytes, foreign, or rewritten by another tool) is never handed to HDF5.
// HDF5 is not safe on untrusted files, so hpcnn-summary also parses in a child process
// (isolated_read.hpp). No HDF5 here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hpcnn {

constexpr std::size_t kUserBlock = 512;

// The checksum block (kUserBlock bytes) of a file whose bytes after the block are `body`.
std::string checksum_block(const std::vector<char>& body);

// Throws RuntimeError naming the file unless it starts with a checksum block that matches every
// byte after it (a foreign file, a damaged header, a truncated or changed file).
void verify_checksum_block(const std::string& path);

}  // namespace hpcnn
