#include "results/checksum_block.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "base/crc32.hpp"
#include "base/errors.hpp"

namespace hpcnn {

namespace {

constexpr const char* kBlockMagic = "hpcnn-result\n";

// Size and CRC-32 of the bytes after the user block.
std::pair<std::uint64_t, std::uint32_t> file_checksum(std::FILE* f, const std::string& path) {
  Crc32 crc;
  std::uint64_t size = 0;
  std::vector<char> buf(1 << 20);
  if (std::fseek(f, static_cast<long>(kUserBlock), SEEK_SET) != 0)
    throw RuntimeError(path + ": cannot seek: " + std::strerror(errno));
  size = kUserBlock;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), f)) {
    crc.add(buf.data(), n);
    size += n;
  }
  if (std::ferror(f)) throw RuntimeError(path + ": cannot read: " + std::strerror(errno));
  return {size, crc.value()};
}

}  // namespace

std::string checksum_block(const std::vector<char>& body) {
  Crc32 crc;
  crc.add(body.data(), body.size());
  char block[kUserBlock] = {};
  std::snprintf(block, sizeof block, "%schecksum-block 1\nsize %llu\ncrc32 %08x\n", kBlockMagic,
                static_cast<unsigned long long>(kUserBlock + body.size()), static_cast<unsigned>(crc.value()));
  return std::string(block, sizeof block);
}

void verify_checksum_block(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw RuntimeError(path + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  char block[kUserBlock + 1] = {};
  std::size_t got = std::fread(block, 1, kUserBlock, f);
  const std::size_t magic_len = std::strlen(kBlockMagic);
  if (got < magic_len || std::memcmp(block, kBlockMagic, magic_len) != 0)
    throw RuntimeError(path + ": not an hpcnn result file, or its header is damaged (no '" +
                       std::string(kBlockMagic, magic_len - 1) + "' checksum block in its first bytes)");
  unsigned version = 0;
  unsigned long long size = 0;
  unsigned crc = 0;
  if (std::sscanf(block + magic_len, "checksum-block %u\nsize %llu\ncrc32 %8x\n", &version, &size, &crc) != 3)
    throw RuntimeError(path + ": corrupted file (unreadable checksum block)");
  if (version != 1) throw RuntimeError(path + ": checksum block version " + std::to_string(version) +
                                       " is not supported (this build reads version 1)");
  if (got < kUserBlock) throw RuntimeError(path + ": truncated file (" + std::to_string(got) + " bytes, expected " +
                                           std::to_string(size) + ")");
  auto [actual_size, actual_crc] = file_checksum(f, path);
  if (actual_size != size)
    throw RuntimeError(path + ": " + (actual_size < size ? "truncated" : "corrupted") + " file (" +
                       std::to_string(actual_size) + " bytes, expected " + std::to_string(size) + ")");
  if (actual_crc != crc)
    throw RuntimeError(path + ": corrupted file (CRC-32 mismatch: the file changed after it was written)");
}

}  // namespace hpcnn
