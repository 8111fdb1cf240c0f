// Synthetic data of a data set's shape, generated once before timing. The task is learnable:
// each class has a fixed random prototype image and a sample is its prototype plus Gaussian
// noise, so a training run that works lowers the loss (tests rely on that).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor.hpp"

namespace hpcnn {

// Shape and class count of the data sets the suites can imitate.
struct DatasetShape {
  std::string name;  // cifar10 | cifar100 | imagenet | mnist
  Shape sample;      // per sample, n == 1
  int classes = 10;
};
DatasetShape dataset_shape(const std::string& name);  // UsageError for unknown names
extern const char* const kDatasetChoices;             // "cifar10|cifar100|imagenet|mnist"

class SyntheticData {
 public:
  // `pool` distinct batches are generated and then cycled through. `noise` is the standard
  // deviation of the noise added to the prototype (prototypes are N(0, 1) per element).
  SyntheticData(Shape sample, int classes, int batch, std::uint64_t seed, int pool = 4,
                float noise = 1.0f);
  int batches() const { return static_cast<int>(images_.size()); }
  const float* images(int k) const { return images_[static_cast<std::size_t>(k % batches())].data(); }
  const std::int32_t* labels(int k) const { return labels_[static_cast<std::size_t>(k % batches())].data(); }

 private:
  std::vector<std::vector<float>> images_;
  std::vector<std::vector<std::int32_t>> labels_;
};

}  // namespace hpcnn
