// Reference operators, one factory per layer kind (private to kernels/reference). Every operator
// works on plain NCHW float tensors, accumulates dot products and statistics in double, and keeps
// what backward needs (pooling arg-max, dropout mask, BN batch statistics) from its forward.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "engine/tensor.hpp"

namespace hpcnn::reference {

// What make_op knows when it creates an operator: the node, full input shapes (batch included),
// the output shape and the mode.
struct OpSetup {
  const Node& node;
  std::vector<Shape> in;
  Shape out;
  Mode mode;
};

std::unique_ptr<Op> make_conv(const OpSetup& s);
std::unique_ptr<Op> make_fully_connected(const OpSetup& s);
std::unique_ptr<Op> make_batch_norm(const OpSetup& s);
std::unique_ptr<Op> make_relu(const OpSetup& s);
std::unique_ptr<Op> make_tanh(const OpSetup& s);
std::unique_ptr<Op> make_max_pool(const OpSetup& s);
std::unique_ptr<Op> make_avg_pool(const OpSetup& s);
std::unique_ptr<Op> make_global_avg_pool(const OpSetup& s);
std::unique_ptr<Op> make_lrn(const OpSetup& s);
std::unique_ptr<Op> make_dropout(const OpSetup& s);
std::unique_ptr<Op> make_add(const OpSetup& s);
std::unique_ptr<Op> make_flatten(const OpSetup& s);
std::unique_ptr<Op> make_softmax_cross_entropy(const OpSetup& s);

// Small checks shared by the operators: a tensor has the shape the op was made for (throws
// std::logic_error naming the node otherwise).
void expect_shape(const Tensor* t, const Shape& shape, const std::string& node, const char* what);

}  // namespace hpcnn::reference
