// Reading single training samples straight from a data set's files, at their offsets: what a
// framework that reads every batch from disk (ref. [4]'s PyTorch and MXNet, docs/EXPERIMENTS.md) does, so an uncached
// input pipeline really pays the I/O + decode on every use. idx and CIFAR-10/100 binary files; a
// gzip stream cannot be read at an offset without inflating everything before it, so a gzip file is
// decompressed once, when this is made, into an unnamed scratch copy (data/scratch_copy.hpp) that
// the samples are then read from, as torchvision reads the raw files it decompressed on download.
// Thread-safe (pread); the counters say how many reads and bytes really went to the files.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "data/dataset.hpp"
#include "data/page_cache.hpp"

namespace hpcnn::data {

// A data file that failed under a running training: a read that failed or came back short (the
// file shrank, its file system went away), or a file that changed between epochs. The message
// names the file and what happened; the training stops at the next step boundary on every rank
// (suites/epoch_driver.hpp), and --resume continues from its last checkpoint once the files are back.
struct StorageError : RuntimeError {
  using RuntimeError::RuntimeError;
};

class SampleFiles {
 public:
  // The training files of `set` (located and read by load_dataset, whose ImageSet gives the
  // geometry); gzip files are decompressed into scratch_dir(scratch) first. RuntimeError when a
  // file cannot be opened or no longer matches the set, or a copy does not fit.
  explicit SampleFiles(const DataSet& set, const std::string& scratch = "");
  ~SampleFiles();
  SampleFiles(const SampleFiles&) = delete;
  SampleFiles& operator=(const SampleFiles&) = delete;

  // Before any work, from locate_dataset's paths: RuntimeError (one line) when scratch_dir(scratch)
  // cannot hold `copies` decompressed copies of the gzip files samples would be read from (one per
  // worker of the node). Nothing to check for uncompressed files.
  static void check_scratch_space(const DataSet& located, int copies, const std::string& scratch = "");

  // Before any work, for cold reads: RuntimeError (one line) naming a file samples would be read
  // from (or, for gzip files, the scratch folder of their copies) whose file system keeps its
  // pages in memory (tmpfs). Drops the plain files' pages as it checks.
  static void check_cold_storage(const DataSet& located, const std::string& scratch = "");

  std::size_t size() const { return samples_; }
  // The image_bytes() pixel bytes of training sample `index` (planar C x H x W), one pread.
  // StorageError naming the file when the read fails or comes back short.
  void read(std::size_t index, std::uint8_t* pixels) const;
  // StorageError naming the first file (not a decompressed copy, which is this process's own)
  // whose size or modification time is no longer what it was when it was opened, or that can no
  // longer be asked. Once per epoch: a file rewritten in place would otherwise be read half old,
  // half new.
  void check_unchanged() const;

  // The page cache's share of the files samples are read from (of the decompressed copies, for
  // gzip files).
  Residency residency() const;
  // Cold reads: drops those files' pages from the page cache and returns what stayed. RuntimeError
  // naming the file and its file system when more than kColdResidentLimit of it stayed (tmpfs).
  Residency drop_pages() const;

  std::uint64_t reads() const { return reads_.load(); }
  std::uint64_t bytes() const { return bytes_.load(); }
  // The gzip files decompressed into scratch copies, their inflated bytes, and the seconds it took
  // (once, in the constructor: no part of any batch's load time).
  std::size_t decompressed_files() const { return decompressed_files_; }
  std::uint64_t decompressed_bytes() const { return decompressed_bytes_; }
  double decompress_seconds() const { return decompress_s_; }

 private:
  struct Part {  // one file: samples [first, first + count), sample k's pixels at offset + k * stride
    std::string path;
    int fd = -1;
    bool copy = false;  // fd is a decompressed copy of the gzip file `path`
    std::size_t first = 0, count = 0;
    std::uint64_t offset = 0, stride = 0;
    std::uint64_t size = 0;   // bytes when opened
    std::int64_t mtime_ns = 0;  // modification time when opened
  };
  // Opens `path` (or its decompressed copy) and takes up to `wanted` samples from it, as many as it
  // holds.
  void open_part(const std::string& path, std::size_t wanted, std::uint64_t offset, std::uint64_t stride);
  int open_samples(const std::string& path);

  std::string scratch_;
  std::vector<Part> parts_;
  std::size_t samples_ = 0, image_bytes_ = 0;
  std::size_t decompressed_files_ = 0;
  std::uint64_t decompressed_bytes_ = 0;
  double decompress_s_ = 0;
  mutable std::atomic<std::uint64_t> reads_{0}, bytes_{0};
};

}  // namespace hpcnn::data
