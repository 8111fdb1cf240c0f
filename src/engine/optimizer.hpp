// The optimizer a suite applies after backward: SGD (momentum, weight decay) or Adam over the
// network's contiguous parameter buffer, with its state allocated on the backend's device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"

namespace hpcnn {

struct OptimizerSettings {
  std::string kind = "sgd";  // sgd | adam
  float lr = 0.01f;
  float momentum = 0.9f;     // SGD only
  float weight_decay = 0.0f;
};

class Optimizer {
 public:
  Optimizer(Backend& backend, std::size_t count, const OptimizerSettings& settings);
  // params -= update(grads); asynchronous on a GPU like every backend call.
  void step(float* params, const float* grads);
  std::int64_t steps() const { return steps_; }
  // Learning-rate schedules (suites/accuracy_suite.cpp) change the rate between steps.
  void set_lr(float lr) { settings_.lr = lr; }
  // The state a training checkpoint saves: the step count and the moments (host copies; the
  // second is empty for SGD).
  struct State {
    std::int64_t steps = 0;
    std::vector<float> first, second;
  };
  State state() const;
  void restore(const State& s);  // RuntimeError when the sizes do not fit

 private:
  Backend& backend_;
  std::size_t count_;
  OptimizerSettings settings_;
  std::shared_ptr<float> state1_, state2_;  // SGD velocity; Adam first and second moments
  std::int64_t steps_ = 0;
};

}  // namespace hpcnn
