#include "data/idx.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "data/file_bytes.hpp"
#include "base/errors.hpp"

namespace hpcnn::data {

namespace {

constexpr int kClasses = 10;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw RuntimeError(path + ": " + problem);
}

std::uint32_t big_endian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Checks the header of an idx file with `rank` dimensions of unsigned bytes and that the data
// after it is exactly the product of the dimensions. Returns the dimensions.
std::vector<std::uint32_t> check_idx(const std::string& path, const std::vector<std::uint8_t>& b, int rank,
                                     const char* what) {
  if (b.size() < 4) fail(path, "file of " + std::to_string(b.size()) + " bytes is too short for an idx header");
  if (b[0] != 0 || b[1] != 0)
    fail(path, "bad magic (not an idx file: the first two bytes must be zero)");
  if (b[2] != 0x08) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", b[2]);
    fail(path, std::string("idx data type ") + hex + " is not supported (only 0x08, unsigned byte)");
  }
  if (b[3] != rank)
    fail(path, std::string("idx file has ") + std::to_string(b[3]) + " dimensions, " + what +
                   " files have " + std::to_string(rank));
  const std::size_t header = 4 + 4 * std::size_t(rank);
  if (b.size() < header) fail(path, "truncated idx header");
  std::vector<std::uint32_t> dims;
  std::uint64_t expected = 1;
  for (int d = 0; d < rank; ++d) {
    dims.push_back(big_endian32(b.data() + 4 + 4 * d));
    if (dims.back() == 0) fail(path, "dimension " + std::to_string(d) + " is zero");
    expected *= dims.back();  // < 2^96 impossible: stop before overflow below
    if (expected > (std::uint64_t{1} << 40)) fail(path, "dimensions claim an absurd size");
  }
  const std::uint64_t have = b.size() - header;
  if (have < expected)
    fail(path, "truncated: the header's dimensions need " + std::to_string(expected) + " data bytes, the file has " +
                   std::to_string(have));
  if (have > expected)
    fail(path, std::to_string(have - expected) + " trailing bytes after the " + std::to_string(expected) +
                   " data bytes the header describes");
  return dims;
}

}  // namespace

ImageSet read_idx_pair(const std::string& images_path, const std::string& labels_path, std::size_t memory_limit) {
  std::vector<std::uint8_t> ib = read_file_bytes(images_path);
  const std::vector<std::uint32_t> idims = check_idx(images_path, ib, 3, "image");
  if (idims[1] > 4096 || idims[2] > 4096)
    fail(images_path, "image size " + std::to_string(idims[1]) + "x" + std::to_string(idims[2]) + " is implausible");
  // The pixels are the file's bytes (moved, not copied), plus the labels and the label file's
  // bytes (8 bytes of header and one per image).
  const std::size_t images = idims[0];
  const std::size_t need = ib.size() + images * sizeof(std::int32_t) + 8 + images;
  check_memory(images_path, need, memory_limit,
               std::to_string(images) + " images of " + std::to_string(idims[1]) + "x" + std::to_string(idims[2]) +
                   " bytes and their labels");
  const std::vector<std::uint8_t> lb = read_file_bytes(labels_path);
  const std::vector<std::uint32_t> ldims = check_idx(labels_path, lb, 1, "label");
  if (ldims[0] != idims[0])
    fail(labels_path, std::to_string(ldims[0]) + " labels, but " + images_path + " has " +
                          std::to_string(idims[0]) + " images");
  ImageSet set;
  set.channels = 1;
  set.height = static_cast<int>(idims[1]);
  set.width = static_cast<int>(idims[2]);
  set.classes = kClasses;
  set.labels.resize(ldims[0]);
  for (std::size_t i = 0; i < set.labels.size(); ++i) {
    const int label = lb[8 + i];
    if (label >= kClasses)
      fail(labels_path, "label " + std::to_string(label) + " of image " + std::to_string(i) + " is out of range [0, " +
                            std::to_string(kClasses) + ")");
    set.labels[i] = label;
  }
  // The header dropped in place: every rank of a node that reads the set holds one copy of it.
  ib.erase(ib.begin(), ib.begin() + 16);
  set.pixels = std::move(ib);
  return set;
}

void ImageSet::truncate(std::size_t n) {
  if (n >= size()) return;
  labels.resize(n);
  pixels.resize(n * image_bytes());
  // What --train-limit leaves is all a rank keeps: at hundreds of ranks per node, the rest of
  // the set in every rank would be the node's memory.
  labels.shrink_to_fit();
  pixels.shrink_to_fit();
}

}  // namespace hpcnn::data
