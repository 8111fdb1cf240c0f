#include "engine/op_cost.hpp"

#include "engine/op_kinds.hpp"

namespace hpcnn {

namespace {

constexpr double kFloat = 4.0;

}  // namespace

OpCost op_forward_cost(const Graph& g, int node, int batch) {
  const Node& n = g.node(node);
  OpCost c;
  const OpKindFacts& facts = op_kind_facts(n.kind);
  c.flops = facts.forward_flops(g, n, batch);
  c.bytes = facts.is_view ? 0.0
                          : kFloat * (op_input_elements(g, n, batch) + op_output_elements(n, batch) +
                                      static_cast<double>(n.param_count));
  return c;
}

OpCost op_backward_cost(const Graph& g, int node, int batch) {
  const Node& n = g.node(node);
  OpCost c;
  const OpKindFacts& facts = op_kind_facts(n.kind);
  const double fwd = facts.forward_flops(g, n, batch);
  const bool reads_input = n.inputs.size() == 1 && n.inputs[0] == 0;
  // A weight gradient, plus a data gradient unless on the input; else the chain rule through an
  // elementwise or reduction op.
  c.flops = facts.has_weights && reads_input ? fwd : 2.0 * fwd;
  // Reads the output gradient, the input (or output) and parameters; writes the input gradient
  // and the parameter gradients.
  c.bytes = facts.is_view ? 0.0
                          : kFloat * (2.0 * op_input_elements(g, n, batch) + op_output_elements(n, batch) +
                                      2.0 * static_cast<double>(n.param_count));
  return c;
}

OpCost weights_update_cost(std::size_t params) {
  const double p = static_cast<double>(params);
  return {4.0 * p, kFloat * 5.0 * p};  // read params, grads, momentum; write params, momentum
}

}  // namespace hpcnn
