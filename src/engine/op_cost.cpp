#include "engine/op_cost.hpp"

namespace hpcnn {

namespace {

constexpr double kFloat = 4.0;

double in_elems(const Graph& g, const Node& n, int batch) {
  double e = 0;
  for (int i : n.inputs) e += static_cast<double>(g.node(i).out.per_sample());
  return e * batch;
}

double out_elems(const Node& n, int batch) { return static_cast<double>(n.out.per_sample()) * batch; }

// Forward FLOPs of one call.
double forward_flops(const Graph& g, const Node& n, int batch) {
  const double out = out_elems(n, batch);
  switch (n.kind) {
    case OpKind::Conv: {
      const Shape in = g.node(n.inputs[0]).out;
      return 2.0 * out * in.c * n.attr.kh * n.attr.kw;
    }
    case OpKind::FullyConnected:
      return 2.0 * out * static_cast<double>(g.node(n.inputs[0]).out.per_sample());
    case OpKind::BatchNorm: return 5.0 * out;  // mean, variance, normalize, scale, shift
    case OpKind::MaxPool:
    case OpKind::AvgPool: return out * n.attr.kh * n.attr.kw;
    case OpKind::GlobalAvgPool: return in_elems(g, n, batch);
    case OpKind::Lrn: return out * (2.0 * n.attr.lrn_size + 4.0);
    case OpKind::SoftmaxCrossEntropy: return 4.0 * in_elems(g, n, batch);
    case OpKind::Relu:
    case OpKind::Tanh:
    case OpKind::Dropout:
    case OpKind::Add: return out;
    case OpKind::Input:
    case OpKind::Flatten: return 0.0;
  }
  return 0.0;
}

}  // namespace

OpCost op_forward_cost(const Graph& g, int node, int batch) {
  const Node& n = g.node(node);
  OpCost c;
  c.flops = forward_flops(g, n, batch);
  c.bytes = kFloat * (in_elems(g, n, batch) + out_elems(n, batch) + static_cast<double>(n.param_count));
  if (n.kind == OpKind::Flatten) c.bytes = 0;  // a view
  return c;
}

OpCost op_backward_cost(const Graph& g, int node, int batch) {
  const Node& n = g.node(node);
  OpCost c;
  const double fwd = forward_flops(g, n, batch);
  const bool reads_input = n.inputs.size() == 1 && n.inputs[0] == 0;
  switch (n.kind) {
    case OpKind::Conv:
    case OpKind::FullyConnected:
      c.flops = reads_input ? fwd : 2.0 * fwd;  // weight gradient, plus data gradient unless on the input
      break;
    default: c.flops = 2.0 * fwd;  // chain rule through an elementwise or reduction op
  }
  // Reads the output gradient, the input (or output) and parameters; writes the input gradient
  // and the parameter gradients.
  c.bytes = kFloat * (2.0 * in_elems(g, n, batch) + out_elems(n, batch) + 2.0 * static_cast<double>(n.param_count));
  if (n.kind == OpKind::Flatten) c.bytes = 0;
  return c;
}

OpCost weights_update_cost(std::size_t params) {
  const double p = static_cast<double>(params);
  return {4.0 * p, kFloat * 5.0 * p};  // read params, grads, momentum; write params, momentum
}

}  // namespace hpcnn
