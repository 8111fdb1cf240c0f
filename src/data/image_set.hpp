// A labelled set of 8-bit images as the files hold them: N x C x H x W bytes (planar, like NCHW)
// and one label per image in [0, classes). Owned by the data set readers; the input pipeline
// (batch_loader.hpp) turns them into normalized float batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hpcnn::data {

struct ImageSet {
  int channels = 1, height = 0, width = 0;
  int classes = 10;
  std::vector<std::uint8_t> pixels;   // size() * channels * height * width
  std::vector<std::int32_t> labels;   // size()
  std::size_t size() const { return labels.size(); }
  std::size_t image_bytes() const {
    return std::size_t(channels) * std::size_t(height) * std::size_t(width);
  }
  const std::uint8_t* image(std::size_t i) const { return pixels.data() + i * image_bytes(); }
  // The memory the set holds: its pixels and labels.
  std::size_t bytes() const { return pixels.size() + labels.size() * sizeof(std::int32_t); }
  // Keeps the first n images (n >= size() keeps all).
  void truncate(std::size_t n);
};

}  // namespace hpcnn::data
