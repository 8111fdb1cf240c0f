// CRC-32 (IEEE 802.3, the zlib/PNG polynomial) over bytes added in pieces: the checksum of result
// files (results/checksum_block.cpp) and training checkpoints (harness/checkpoint.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpcnn {

class Crc32 {
 public:
  Crc32() {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table_[i] = c;
    }
  }
  void add(const char* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      crc_ = table_[(crc_ ^ static_cast<unsigned char>(data[i])) & 0xff] ^ (crc_ >> 8);
  }
  std::uint32_t value() const { return crc_ ^ 0xffffffffu; }

 private:
  std::uint32_t table_[256];
  std::uint32_t crc_ = 0xffffffffu;
};

}  // namespace hpcnn
