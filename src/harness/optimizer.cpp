#include "harness/optimizer.hpp"

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

}  // namespace hpcnn
