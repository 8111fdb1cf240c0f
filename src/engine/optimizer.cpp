#include "engine/optimizer.hpp"

#include "base/errors.hpp"

namespace hpcnn {

Optimizer::Optimizer(Backend& backend, std::size_t count, const OptimizerSettings& settings)
    : backend_(backend), count_(count), settings_(settings) {
  if (settings_.kind != "sgd" && settings_.kind != "adam")
    throw UsageError("unknown optimizer '" + settings_.kind + "' (choose from sgd|adam)");
  state1_ = backend_.alloc_floats(count_);
  if (settings_.kind == "adam") state2_ = backend_.alloc_floats(count_);
}

void Optimizer::step(float* params, const float* grads) {
  ++steps_;
  if (settings_.kind == "adam") {
    AdamParams p;
    p.lr = settings_.lr;
    p.weight_decay = settings_.weight_decay;
    backend_.adam_step(params, grads, state1_.get(), state2_.get(), count_, p, steps_);
  } else {
    SgdParams p;
    p.lr = settings_.lr;
    p.momentum = settings_.momentum;
    p.weight_decay = settings_.weight_decay;
    backend_.sgd_step(params, grads, state1_.get(), count_, p);
  }
}

Optimizer::State Optimizer::state() const {
  State s;
  s.steps = steps_;
  s.first.resize(count_);
  backend_.copy_to_host(s.first.data(), state1_.get(), count_ * sizeof(float));
  if (state2_) {
    s.second.resize(count_);
    backend_.copy_to_host(s.second.data(), state2_.get(), count_ * sizeof(float));
  }
  return s;
}

void Optimizer::restore(const State& s) {
  if (s.first.size() != count_ || s.second.size() != (state2_ ? count_ : 0))
    throw RuntimeError("optimizer state of " + std::to_string(s.first.size()) + " values does not fit " +
                       std::to_string(count_) + " parameters");
  steps_ = s.steps;
  backend_.copy_to_device(state1_.get(), s.first.data(), count_ * sizeof(float));
  if (state2_) backend_.copy_to_device(state2_.get(), s.second.data(), count_ * sizeof(float));
  backend_.synchronize();
}

}  // namespace hpcnn
