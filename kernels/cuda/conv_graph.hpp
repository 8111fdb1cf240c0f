// One convolution (forward, backward-data or backward-filter) through cuDNN's graph API: an
// operation graph of one node, engine configurations from cuDNN's heuristics, an execution plan.
// This reaches the engines cuDNN 9 has for recent GPUs (Hopper's implicit-GEMM "xmma" kernels) that
// the legacy cudnnConvolution* calls do not choose. When no plan can be built, ok() is false and
// the caller uses the legacy path.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <string>

#include "engine/graph.hpp"
#include "kernels/cuda/context.hpp"

namespace hpcnn::cuda {

enum class ConvKind { Forward, BackwardData, BackwardFilter };

class GraphConv {
 public:
  // x: input activation, w: filter dims {O, I, KH, KW}, y: output activation; layout l for both
  // activations and the filter (NHWC -> KRSC filter). tensor_cores: allow TF32/BF16 engines.
  GraphConv(Context& c, ConvKind kind, const Shape& x, const Shape& w, const Shape& y, const OpAttr& a,
            const Layout& l, bool tensor_cores);
  ~GraphConv();
  GraphConv(const GraphConv&) = delete;
  GraphConv& operator=(const GraphConv&) = delete;

  bool ok() const { return plan_ != nullptr; }
  const std::string& why_not() const { return why_; }
  std::size_t workspace() const { return workspace_; }
  // Picks the fastest of the first few plans by timing them on these buffers (--cudnn-benchmark).
  void autotune(void* x, void* w, void* y);
  // Forward: y = conv(x, w). BackwardData: x = dgrad(y, w). BackwardFilter: w = wgrad(x, y).
  void run(void* x, void* w, void* y);

 private:
  bool build_plan(cudnnBackendDescriptor_t cfg, cudnnBackendDescriptor_t& plan, std::size_t& ws);
  // A plan of this configuration that this precision may use and that fits the workspace, or null.
  cudnnBackendDescriptor_t usable_plan(cudnnBackendDescriptor_t cfg, std::size_t& workspace);
  Context& c_;
  cudnnBackendDescriptor_t graph_ = nullptr, plan_ = nullptr;
  std::size_t workspace_ = 0;
  bool tensor_cores_ = false;
  std::string why_;
};

}  // namespace hpcnn::cuda
