#include "engine/op_kinds.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace hpcnn {

double op_input_elements(const Graph& g, const Node& n, int batch) {
  double e = 0;
  for (int i : n.inputs) e += static_cast<double>(g.node(i).out.per_sample());
  return e * batch;
}

double op_output_elements(const Node& n, int batch) { return static_cast<double>(n.out.per_sample()) * batch; }

namespace {

double no_flops(const Graph&, const Node&, int) { return 0.0; }
double one_per_output(const Graph&, const Node& n, int batch) { return op_output_elements(n, batch); }
double conv_flops(const Graph& g, const Node& n, int batch) {
  return 2.0 * op_output_elements(n, batch) * g.node(n.inputs[0]).out.c * n.attr.kh * n.attr.kw;
}
double fully_connected_flops(const Graph& g, const Node& n, int batch) {
  return 2.0 * op_output_elements(n, batch) * static_cast<double>(g.node(n.inputs[0]).out.per_sample());
}
// mean, variance, normalize, scale, shift
double batch_norm_flops(const Graph&, const Node& n, int batch) { return 5.0 * op_output_elements(n, batch); }
double window_flops(const Graph&, const Node& n, int batch) {
  return op_output_elements(n, batch) * n.attr.kh * n.attr.kw;
}
double one_per_input(const Graph& g, const Node& n, int batch) { return op_input_elements(g, n, batch); }
double lrn_flops(const Graph&, const Node& n, int batch) {
  return op_output_elements(n, batch) * (2.0 * n.attr.lrn_size + 4.0);
}
double softmax_cross_entropy_flops(const Graph& g, const Node& n, int batch) {
  return 4.0 * op_input_elements(g, n, batch);
}

// In OpKind's order.                     profile name   prefix   relu   weights view   reuses  FLOPs
constexpr std::array<OpKindFacts, 14> kFacts = {{
    {OpKind::Input, "input", "input", false, false, false, false, no_flops},
    {OpKind::Conv, "convolution", "conv", true, true, false, false, conv_flops},
    {OpKind::BatchNorm, "batch_norm", "bn", true, false, false, false, batch_norm_flops},
    {OpKind::Relu, "relu", "relu", false, false, false, true, one_per_output},
    {OpKind::Tanh, "tanh", "tanh", false, false, false, false, one_per_output},
    {OpKind::MaxPool, "pooling", "maxpool", false, false, false, false, window_flops},
    {OpKind::AvgPool, "pooling", "avgpool", false, false, false, false, window_flops},
    {OpKind::GlobalAvgPool, "pooling", "gap", false, false, false, false, one_per_input},
    {OpKind::Lrn, "lrn", "lrn", false, false, false, false, lrn_flops},
    {OpKind::Dropout, "dropout", "dropout", false, false, false, false, one_per_output},
    {OpKind::FullyConnected, "fully_connected", "fc", true, true, false, false, fully_connected_flops},
    {OpKind::Add, "add", "add", true, false, false, false, one_per_output},
    {OpKind::Flatten, "flatten", "flatten", false, false, true, true, no_flops},
    {OpKind::SoftmaxCrossEntropy, "softmax_cross_entropy", "loss", false, false, false, false,
     softmax_cross_entropy_flops},
}};

constexpr bool rows_in_kind_order() {
  for (std::size_t i = 0; i < kFacts.size(); ++i)
    if (static_cast<std::size_t>(kFacts[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_kind_order(), "kFacts must list every OpKind once, in the enum's order");
static_assert(static_cast<std::size_t>(OpKind::SoftmaxCrossEntropy) + 1 == kFacts.size(),
              "a new OpKind needs its row in kFacts");

}  // namespace

const OpKindFacts& op_kind_facts(OpKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  if (i >= kFacts.size()) throw std::logic_error("op_kind_facts: no row for OpKind " + std::to_string(i));
  return kFacts[i];
}

}  // namespace hpcnn
