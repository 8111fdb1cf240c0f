// One operator of a graph set up alone on a backend, with random input, weights and output
// gradient (uniform in [-1, 1], from a seed): what hpcnn-blas --sweep layers and
// bench/gbench_kernels time. Forward and backward run the backend's op as the executor would.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/backend.hpp"
#include "engine/graph.hpp"
#include "engine/op.hpp"

namespace hpcnn {

class SingleOp {
 public:
  // `in`: the input shape with the batch; data_grad: also compute the input gradient (a layer
  // that reads the network input needs none); weights are scaled by weight_scale.
  SingleOp(Backend& backend, const Node& node, const Shape& in, bool data_grad, std::uint64_t seed,
           float weight_scale = 1.0f);
  SingleOp(const SingleOp&) = delete;
  SingleOp& operator=(const SingleOp&) = delete;
  void forward() { op_->forward(ctx_); }
  void backward() { op_->backward(ctx_); }
  const Shape& output_shape() const { return dst_.shape; }

 private:
  void fill(Tensor& t, std::uint64_t seed);
  Backend& backend_;
  Tensor src_, dst_, diff_dst_, diff_src_;
  const Tensor* srcs_[1] = {&src_};
  Tensor* diffs_[1] = {nullptr};
  std::unique_ptr<Op> op_;
  std::shared_ptr<float> weights_, diff_weights_;
  OpContext ctx_;
};

}  // namespace hpcnn
