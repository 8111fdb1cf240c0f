#include "engine/calibration.hpp"

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

ActivationRanges calibrate(Network& net, int batches, const std::function<void(Network&, int)>& feed) {
  if (batches < 1) throw std::invalid_argument("calibration needs at least one batch");
  const Graph& g = net.graph();
  ActivationRanges ranges;
  for (int k = 0; k < batches; ++k) {
    feed(net, k);
    net.forward();
    for (const Node& node : g.nodes()) {
      if (node.kind != OpKind::Conv && node.kind != OpKind::FullyConnected) continue;
      const std::vector<float> in = net.read_output(node.inputs.at(0));
      ranges[node.name].add(in.data(), in.size());
    }
  }
  return ranges;
}

}  // namespace hpcnn
