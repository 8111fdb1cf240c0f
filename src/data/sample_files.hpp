// Reading single training samples straight from a data set's files, at their offsets: what a
// framework that reads every batch from disk (paper 003's PyTorch and MXNet) does, so an uncached
// input pipeline really pays the I/O + decode on every use. Uncompressed files only (idx, CIFAR-10/100
// binary): a gzip stream cannot be read at an offset without inflating everything before it.
// Thread-safe (pread); the counters say how many reads and bytes really went to the files.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace hpcnn::data {

class SampleFiles {
 public:
  // The training files of `set` (located and read by load_dataset, whose ImageSet gives the
  // geometry). UsageError naming the file when one is gzip-compressed; RuntimeError when one
  // cannot be opened or no longer matches the set.
  explicit SampleFiles(const DataSet& set);
  ~SampleFiles();
  SampleFiles(const SampleFiles&) = delete;
  SampleFiles& operator=(const SampleFiles&) = delete;

  // Before any work: UsageError naming the first of `paths` that is gzip-compressed (missing
  // files are the readers' to report).
  static void require_uncompressed(const std::vector<std::string>& paths);

  std::size_t size() const { return samples_; }
  // The image_bytes() pixel bytes of training sample `index` (planar C x H x W), one pread.
  // RuntimeError("FILE: short read ...") when the file shrank since it was loaded.
  void read(std::size_t index, std::uint8_t* pixels) const;

  std::uint64_t reads() const { return reads_.load(); }
  std::uint64_t bytes() const { return bytes_.load(); }

 private:
  struct Part {  // one file: samples [first, first + count), sample k's pixels at offset + k * stride
    std::string path;
    int fd = -1;
    std::size_t first = 0, count = 0;
    std::uint64_t offset = 0, stride = 0;
  };
  void open_part(const std::string& path, std::size_t count, std::uint64_t offset, std::uint64_t stride);

  std::vector<Part> parts_;
  std::size_t samples_ = 0, image_bytes_ = 0;
  mutable std::atomic<std::uint64_t> reads_{0}, bytes_{0};
};

}  // namespace hpcnn::data
