#include "data/cifar.hpp"

#include <cstdint>

#include "data/file_bytes.hpp"
#include "base/errors.hpp"

namespace hpcnn::data {

namespace {
constexpr int kSide = 32, kChannels = 3;
constexpr std::size_t kPixels = std::size_t(kSide) * kSide * kChannels;
}  // namespace

ImageSet read_cifar(CifarKind kind, const std::vector<std::string>& paths, std::size_t memory_limit) {
  const bool c100 = kind == CifarKind::Cifar100;
  const std::size_t label_bytes = c100 ? 2 : 1;
  const std::size_t record = label_bytes + kPixels;
  const int classes = c100 ? 100 : 10;
  const char* format = c100 ? "CIFAR-100" : "CIFAR-10";
  ImageSet set;
  set.channels = kChannels;
  set.height = set.width = kSide;
  set.classes = classes;
  for (const std::string& path : paths) {
    const std::vector<std::uint8_t> b = read_file_bytes(path);
    if (b.empty()) throw RuntimeError(path + ": empty file");
    if (b.size() % record != 0)
      throw RuntimeError(path + ": size " + std::to_string(b.size()) + " is not a whole number of " +
                         std::to_string(record) + "-byte " + format + " records (truncated or not " + format + ")");
    const std::size_t n = b.size() / record;
    // The set so far and this file's records decoded, while its bytes are still held.
    const std::size_t images = set.labels.size() + n;
    check_memory(path, b.size() + images * (kPixels + sizeof(std::int32_t)), memory_limit,
                 std::to_string(images) + " images of 3x32x32 bytes, with the file's " + std::to_string(b.size()) +
                     " bytes");
    set.pixels.reserve(set.pixels.size() + n * kPixels);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* r = b.data() + i * record;
      if (c100 && r[0] >= 20)
        throw RuntimeError(path + ": coarse label " + std::to_string(r[0]) + " of record " + std::to_string(i) +
                           " is out of range [0, 20)");
      const int label = r[label_bytes - 1];
      if (label >= classes)
        throw RuntimeError(path + ": label " + std::to_string(label) + " of record " + std::to_string(i) +
                           " is out of range [0, " + std::to_string(classes) + ")");
      set.labels.push_back(label);
      set.pixels.insert(set.pixels.end(), r + label_bytes, r + record);
    }
  }
  return set;
}

}  // namespace hpcnn::data
