#include "engine/calibration.hpp"

#include <set>
#include <stdexcept>

namespace hpcnn {

NetworkOptions calibration_options(int batch, std::uint64_t seed) {
  NetworkOptions no;
  no.batch = batch;
  no.mode = Mode::Infer;
  no.seed = seed;
  no.fuse_relu = false;
  no.memory_plan = false;
  return no;
}

namespace {

// A residual sum's result (an Add, or the ReLU after one): int8 stores it over its shortcut's
// bytes, quantized whoever reads it.
bool residual_result(const Graph& g, const Node& node) {
  if (node.kind == OpKind::Add) return true;
  return node.kind == OpKind::Relu && g.node(node.inputs.at(0)).kind == OpKind::Add;
}

}  // namespace

ActivationRanges calibrate(Network& net, int batches, const std::function<void(Network&, int)>& feed) {
  if (batches < 1) throw std::invalid_argument("calibration needs at least one batch");
  const Graph& g = net.graph();
  ActivationRanges ranges;
  auto quantized_reader = [](OpKind k) { return k == OpKind::Conv || k == OpKind::FullyConnected || k == OpKind::Add; };
  for (int k = 0; k < batches; ++k) {
    feed(net, k);
    net.forward();
    std::set<int> read;  // producers whose output range this batch has added
    for (std::size_t id = 0; id < g.nodes().size(); ++id) {
      const Node& node = g.nodes()[id];
      if (residual_result(g, node) && read.insert(static_cast<int>(id)).second) {
        const std::vector<float> v = net.read_output(static_cast<int>(id));
        ranges[output_range_key(node.name)].add(v.data(), v.size());
      }
      if (!quantized_reader(node.kind)) continue;
      for (std::size_t j = 0; j < node.inputs.size(); ++j) {
        const int producer = node.inputs[j];
        const bool own_input = j == 0 && node.kind != OpKind::Add;
        if (!own_input && read.count(producer)) continue;
        const std::vector<float> v = net.read_output(producer);
        if (own_input) ranges[node.name].add(v.data(), v.size());
        if (read.insert(producer).second) ranges[output_range_key(g.node(producer).name)].add(v.data(), v.size());
      }
    }
  }
  return ranges;
}

}  // namespace hpcnn
