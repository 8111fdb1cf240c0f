#include "harness/single_op.hpp"

#include <vector>

#include "base/rng.hpp"

namespace hpcnn {

namespace {

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float scale) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = scale * rng.uniform(-1.0f, 1.0f);
  return v;
}

}  // namespace

void SingleOp::fill(Tensor& t, std::uint64_t seed) {
  backend_.allocate(t);
  const std::vector<float> host = uniform(t.shape.count(), seed, 1.0f);
  backend_.write_plain(t, host.data());
}

SingleOp::SingleOp(Backend& backend, const Node& node, const Shape& in, bool data_grad, std::uint64_t seed,
                   float weight_scale)
    : backend_(backend) {
  src_.shape = in;
  fill(src_, seed);
  op_ = backend_.make_op(node, srcs_, Mode::Train, dst_);
  backend_.allocate(dst_);
  weights_ = backend_.alloc_floats(node.param_count);
  diff_weights_ = backend_.alloc_floats(node.param_count);
  const std::vector<float> w = uniform(node.param_count, seed + 1, weight_scale);
  backend_.copy_to_device(weights_.get(), w.data(), w.size() * sizeof(float));
  diff_dst_.shape = dst_.shape;
  diff_dst_.layout = dst_.layout;
  fill(diff_dst_, seed + 2);
  if (data_grad) {
    diff_src_.shape = src_.shape;
    diff_src_.layout = src_.layout;
    backend_.allocate(diff_src_);
    diffs_[0] = &diff_src_;
  }
  ctx_.src = srcs_;
  ctx_.dst = &dst_;
  ctx_.weights = weights_.get();
  ctx_.diff_weights = diff_weights_.get();
  ctx_.diff_dst = &diff_dst_;
  ctx_.diff_src = diffs_;
}

}  // namespace hpcnn
