#include "data/batch_loader.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "base/errors.hpp"
#include "base/rng.hpp"

namespace hpcnn::data {

Normalization channel_stats(const ImageSet& set) {
  Normalization n;
  const std::size_t plane = std::size_t(set.height) * set.width;
  for (int c = 0; c < set.channels; ++c) {
    double sum = 0, sq = 0;
    for (std::size_t i = 0; i < set.size(); ++i) {
      const std::uint8_t* p = set.image(i) + std::size_t(c) * plane;
      for (std::size_t k = 0; k < plane; ++k) {
        const double v = p[k] / 255.0;
        sum += v;
        sq += v * v;
      }
    }
    const double count = double(plane) * double(set.size());
    const double mean = count > 0 ? sum / count : 0.0;
    const double var = count > 0 ? std::max(0.0, sq / count - mean * mean) : 1.0;
    n.mean.push_back(static_cast<float>(mean));
    n.stddev.push_back(static_cast<float>(var > 0 ? std::sqrt(var) : 1.0));
  }
  return n;
}

BatchLoader::BatchLoader(const ImageSet& set, Normalization norm, PipelineOptions options)
    : set_(set), norm_(std::move(norm)), options_(options) {
  if (set_.height != set_.width)
    throw UsageError("the pipeline needs square images, got " + std::to_string(set_.height) + "x" +
                     std::to_string(set_.width));
  size_ = options_.out_size > 0 ? options_.out_size : set_.height;
  if (size_ < set_.height)
    throw UsageError("--image-size " + std::to_string(size_) + " is smaller than the data set's " +
                     std::to_string(set_.height) + "x" + std::to_string(set_.width) + " images (only padding is supported)");
  if (int(norm_.mean.size()) != set_.channels || int(norm_.stddev.size()) != set_.channels)
    throw std::invalid_argument("BatchLoader: normalization has the wrong channel count");
  for (int c = 0; c < set_.channels; ++c) background_.push_back(-norm_.mean[c] / norm_.stddev[c]);
  if (options_.cache) {
    cache_.resize(set_.size() * sample_floats());
    cached_.assign(set_.size(), false);
  }
  if (options_.prefetch > 0) thread_ = std::thread([this] { produce(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BatchLoader::decode(std::uint32_t index, std::uint64_t epoch, float* out) {
  const int s = size_, h = set_.height, w = set_.width, channels = set_.channels;
  const std::size_t sample = sample_floats();
  const float* plain = nullptr;
  std::vector<float> local;
  if (options_.cache && cached_[index]) {
    plain = cache_.data() + std::size_t(index) * sample;
  } else {
    float* dst = options_.cache ? cache_.data() + std::size_t(index) * sample : nullptr;
    if (!dst) {
      local.resize(sample);
      dst = local.data();
    }
    const int off_y = (s - h) / 2, off_x = (s - w) / 2;
    const std::uint8_t* img = set_.image(index);
    std::vector<std::uint8_t> raw;
    if (options_.files) {
      raw.resize(set_.image_bytes());
      options_.files->read(index, raw.data());
      img = raw.data();
    }
    for (int c = 0; c < channels; ++c) {
      float* plane = dst + std::size_t(c) * s * s;
      const float scale = 1.0f / (255.0f * norm_.stddev[c]), shift = -norm_.mean[c] / norm_.stddev[c];
      for (int k = 0; k < s * s; ++k) plane[k] = background_[c];
      const std::uint8_t* src = img + std::size_t(c) * h * w;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) plane[(y + off_y) * s + x + off_x] = src[y * w + x] * scale + shift;
    }
    if (options_.cache) cached_[index] = true;
    plain = dst;
  }
  if (!options_.augment) {
    if (plain != out) std::copy(plain, plain + sample, out);
    return;
  }
  // Random crop of the zero-padded image and a coin-flip mirror, from (seed, epoch, sample).
  const std::uint64_t bits = hash3(options_.seed, 0xa06e000000000000ull + epoch, index);
  const int span = 2 * options_.crop_pad + 1;
  const int dy = int(bits % std::uint64_t(span)) - options_.crop_pad;
  const int dx = int((bits >> 16) % std::uint64_t(span)) - options_.crop_pad;
  const bool flip = (bits >> 40) & 1u;
  for (int c = 0; c < channels; ++c) {
    const float* src = plain + std::size_t(c) * s * s;
    float* dst = out + std::size_t(c) * s * s;
    for (int y = 0; y < s; ++y)
      for (int x = 0; x < s; ++x) {
        const int sy = y + dy, sx = (flip ? s - 1 - x : x) + dx;
        dst[y * s + x] = (sy >= 0 && sy < s && sx >= 0 && sx < s) ? src[sy * s + sx] : background_[c];
      }
  }
}

Batch BatchLoader::make_batch(std::uint64_t epoch, const std::vector<std::uint32_t>& indices, bool check_files) {
  const auto t0 = std::chrono::steady_clock::now();
  Batch b;
  b.size = static_cast<int>(indices.size());
  b.images.resize(indices.size() * sample_floats());
  b.labels.resize(indices.size());
  try {
    if (check_files && options_.files && files_failure_.empty()) options_.files->check_unchanged();
  } catch (const StorageError& e) {
    files_failure_ = e.what();
  }
  for (std::size_t i = 0; i < indices.size(); ++i) {
    b.labels[i] = set_.labels[indices[i]];
    const bool from_files = options_.files && !(options_.cache && cached_[indices[i]]);
    if (from_files && !files_failure_.empty()) continue;  // zeros: the training stops at the next step
    try {
      decode(indices[i], epoch, b.images.data() + i * sample_floats());
    } catch (const StorageError& e) {
      files_failure_ = e.what();
    }
  }
  b.storage_error = files_failure_;
  b.made_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

void BatchLoader::start_epoch(std::uint64_t epoch, std::vector<std::vector<std::uint32_t>> batches) {
  for (const auto& b : batches)
    for (std::uint32_t i : b)
      if (i >= set_.size()) throw std::out_of_range("BatchLoader: sample index out of range");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batches_ = std::move(batches);
    epoch_ = epoch;
    ++generation_;
    produced_ = taken_ = 0;
    ready_.clear();
    check_files_ = true;
  }
  changed_.notify_all();
}

void BatchLoader::produce() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] {
      return stop_ || (produced_ < batches_.size() && ready_.size() < std::size_t(options_.prefetch));
    });
    if (stop_) return;
    const std::uint64_t generation = generation_, epoch = epoch_;
    const std::vector<std::uint32_t> indices = batches_[produced_];
    const bool check = std::exchange(check_files_, false);
    lock.unlock();
    Batch b;
    try {
      b = make_batch(epoch, indices, check);  // the cache is touched by this thread only
    } catch (...) {  // next() rethrows it in the consumer
      lock.lock();
      error_ = std::current_exception();
      changed_.notify_all();
      return;
    }
    lock.lock();
    if (generation != generation_) continue;  // a new epoch started meanwhile: drop it
    ready_.push_back(std::move(b));
    ++produced_;
    changed_.notify_all();
  }
}

Batch BatchLoader::next(double* waited_s) {
  const auto t0 = std::chrono::steady_clock::now();
  Batch b;
  if (options_.prefetch <= 0) {
    if (taken_ >= batches_.size()) throw std::logic_error("BatchLoader::next past the end of the epoch");
    b = make_batch(epoch_, batches_[taken_++], std::exchange(check_files_, false));
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    if (taken_ >= batches_.size()) throw std::logic_error("BatchLoader::next past the end of the epoch");
    changed_.wait(lock, [this] { return !ready_.empty() || error_; });
    if (ready_.empty()) std::rethrow_exception(error_);
    b = std::move(ready_.front());
    ready_.pop_front();
    ++taken_;
    changed_.notify_all();
  }
  if (waited_s) *waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

}  // namespace hpcnn::data
