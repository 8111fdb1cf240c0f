// The input pipeline of real-data training: turns the 8-bit images of an ImageSet into normalized
// float batches (NCHW), optionally padded to a larger square, optionally augmented (random crop
// with zero padding + horizontal flip, a pure function of (seed, epoch, sample) so the result does
// not depend on thread timing), decoded `prefetch` batches ahead by one background thread, and
// optionally cached (each sample decoded once, later epochs only gather and augment).
// One consumer thread; next() reports how long the consumer waited, which is the load time.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/image_set.hpp"
#include "data/sample_files.hpp"

namespace hpcnn::data {

// Per-channel mean and standard deviation of pixel/255 (population statistics).
struct Normalization {
  std::vector<float> mean, stddev;
};
Normalization channel_stats(const ImageSet& set);

struct PipelineOptions {
  int out_size = 0;       // output height = width; 0: the images' own; larger: centered zero padding
  bool augment = false;   // random crop (padding crop_pad) + horizontal flip
  int crop_pad = 4;
  bool cache = false;     // keep every decoded sample
  int prefetch = 2;       // batches decoded ahead by the background thread; 0: decode in next()
  std::uint64_t seed = 1;
  // When set, every sample not served from the cache is read from the files (one pread per
  // sample) instead of the ImageSet's pixels: real I/O + decode per use. Must outlive the loader.
  const SampleFiles* files = nullptr;
};

struct Batch {
  int size = 0;
  double made_s = 0;                  // the seconds reading (from the files) and decoding it took
  std::vector<float> images;          // size x C x S x S
  std::vector<std::int32_t> labels;   // size
  // A data file failed (StorageError's message): this batch's samples from the failure on are
  // zeros, and so is every later batch's (the loader stops reading). The training must stop.
  std::string storage_error;
};

class BatchLoader {
 public:
  // `set` must outlive the loader. UsageError when out_size is smaller than the images.
  BatchLoader(const ImageSet& set, Normalization norm, PipelineOptions options);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  int channels() const { return set_.channels; }
  int out_size() const { return size_; }
  std::size_t sample_floats() const { return std::size_t(set_.channels) * size_ * size_; }

  // Starts an epoch: the batches (sample indices, see sampler.hpp) are decoded in order. Any
  // batches of a previous epoch not yet taken are dropped. Reading from files, the epoch's first
  // batch checks first that they did not change (SampleFiles::check_unchanged).
  void start_epoch(std::uint64_t epoch, std::vector<std::vector<std::uint32_t>> batches);
  // The next batch of the epoch; *waited_s gets the seconds this call blocked (or decoded, without
  // prefetch). Throws std::logic_error past the epoch's last batch.
  Batch next(double* waited_s);

  // The memory the cache holds (decoded float samples of the whole set; 0 without options.cache).
  std::size_t cache_bytes() const { return cache_.size() * sizeof(float); }

  // One sample as the pipeline produces it (tests): C x S x S floats.
  void decode(std::uint32_t index, std::uint64_t epoch, float* out);

 private:
  void produce();  // background thread
  // check_files: the epoch's first batch. Called by one thread only: the background thread with
  // prefetch, the consumer without.
  Batch make_batch(std::uint64_t epoch, const std::vector<std::uint32_t>& indices, bool check_files);

  const ImageSet& set_;
  Normalization norm_;
  PipelineOptions options_;
  int size_;
  std::vector<float> background_;   // normalized value of a zero pixel, per channel
  std::vector<float> cache_;        // decoded, un-augmented samples (cache)
  std::vector<bool> cached_;
  std::string files_failure_;       // the first StorageError: nothing is read after it (make_batch's thread)

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<std::uint32_t>> batches_;
  std::uint64_t epoch_ = 0, generation_ = 0;
  bool check_files_ = false;        // the next batch made is an epoch's first
  std::size_t produced_ = 0, taken_ = 0;
  std::deque<Batch> ready_;
  bool stop_ = false;
  std::exception_ptr error_;  // what ended the background thread
  std::thread thread_;
};

}  // namespace hpcnn::data
