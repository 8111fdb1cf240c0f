#include "harness/synthetic_data.hpp"

#include "base/errors.hpp"
#include "base/rng.hpp"

namespace hpcnn {

const char* const kDatasetChoices = "cifar10|cifar100|imagenet|mnist";

DatasetShape dataset_shape(const std::string& name) {
  if (name == "cifar10") return {name, {1, 3, 32, 32}, 10};
  if (name == "cifar100") return {name, {1, 3, 32, 32}, 100};
  if (name == "imagenet") return {name, {1, 3, 224, 224}, 1000};
  if (name == "mnist") return {name, {1, 1, 28, 28}, 10};
  throw UsageError("unknown dataset '" + name + "' (choose from " + kDatasetChoices + ")");
}

SyntheticData::SyntheticData(Shape sample, int classes, int batch, std::uint64_t seed, int pool,
                             float noise) {
  const std::size_t per = sample.per_sample();
  std::vector<float> prototypes(per * static_cast<std::size_t>(classes));
  Rng proto_rng(seed, 0x70726f746fULL);
  for (float& x : prototypes) x = proto_rng.normal();
  images_.resize(static_cast<std::size_t>(pool));
  labels_.resize(static_cast<std::size_t>(pool));
  for (int k = 0; k < pool; ++k) {
    Rng rng(seed, 1000 + static_cast<std::uint64_t>(k));
    auto& img = images_[static_cast<std::size_t>(k)];
    auto& lab = labels_[static_cast<std::size_t>(k)];
    img.resize(per * static_cast<std::size_t>(batch));
    lab.resize(static_cast<std::size_t>(batch));
    for (int i = 0; i < batch; ++i) {
      const auto label = static_cast<std::int32_t>(rng.next() % static_cast<std::uint64_t>(classes));
      lab[static_cast<std::size_t>(i)] = label;
      const float* proto = prototypes.data() + per * static_cast<std::size_t>(label);
      float* out = img.data() + per * static_cast<std::size_t>(i);
      for (std::size_t e = 0; e < per; ++e) out[e] = proto[e] + noise * rng.normal();
    }
  }
}

}  // namespace hpcnn
