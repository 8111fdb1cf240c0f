// The operator contract between the executor (network.cpp) and the backends. A backend creates one
// Op per graph node and batch size, choosing the output layout then; the executor owns the
// activations and gradients and calls forward/backward in topological / reverse order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/graph.hpp"
#include "engine/tensor.hpp"

namespace hpcnn {

enum class Mode { Train, Infer };

// What a fused op computes after its own node (Backend::make_fused_op), in this order.
struct Epilogue {
  // Inference only: the BatchNorm that is a Conv's only consumer, folded into the convolution
  // (weights scaled and a bias added per output channel, from OpContext::bn_*).
  const Node* batch_norm = nullptr;
  // Inference only: the Add that is the last node's only consumer (a residual connection), then
  // computed as dst += that result. Its other input (the shortcut) is the op's last src entry, and
  // the executor gives the op that input's own tensor as dst (same storage; the layout the same or
  // one of the same size, Backend::make_fused_op): the op adds onto the shortcut in place, which
  // saves the Add's pass over both tensors. The executor asks only where nothing reads the
  // shortcut after this op (network.cpp: residual_of).
  const Node* add = nullptr;
  bool relu = false;  // then max(., 0): the ReLU that is the last node's only consumer
  // Inference only: the node whose value the op's output holds (the last node it computes), and
  // every node that reads that output. A backend may store the output in the form its readers
  // take (the dnnl backend in int8: quantized for int8 convolutions, fully connected layers and
  // residual sums), provided it hands the tensor over as FP32 wherever else it is read (read_plain,
  // its other ops).
  const Node* result = nullptr;
  std::vector<const Node*> readers;
};

// Everything one node sees when it runs. Pointers into device memory are only for the backend.
struct OpContext {
  std::span<const Tensor* const> src;  // the node's inputs, in Node::inputs order
  Tensor* dst = nullptr;               // the node's output (allocated by the executor)
  // Backward only: gradient w.r.t. each input. An entry is nullptr when nobody needs it (the
  // network input): the op must then skip that computation. Backward OVERWRITES these tensors;
  // the executor sums contributions of several consumers itself.
  std::span<Tensor* const> diff_src;
  const Tensor* diff_dst = nullptr;
  // Ops made by Backend::make_fused_op with a ReLU only: diff_dst itself when nobody reads it after this
  // backward, so the op may apply the ReLU's derivative in place; nullptr when the buffer is
  // shared (the op then writes the masked gradient elsewhere).
  Tensor* diff_dst_writable = nullptr;
  // The node's parameters in canonical layout (graph.hpp), contiguous: weight then bias, or scale
  // then shift. diff_weights has the same layout; backward OVERWRITES it.
  const float* weights = nullptr;
  float* diff_weights = nullptr;
  // SoftmaxCrossEntropy only: device pointer to N int32 labels in [0, classes); forward stores the
  // batch-mean loss and the number of correct arg-max predictions in these HOST locations.
  const std::int32_t* labels = nullptr;
  float* loss = nullptr;
  std::int64_t* correct = nullptr;
  // BatchNorm only: the node's running statistics, C floats each, owned by the Network (its
  // non-trainable buffers, graph.hpp's Node::buffer_offset), each pointer aligned to 256 bytes
  // (kBufferAlignFloats). Forward in Train updates them with graph.hpp's momentum rule; forward in
  // Infer normalizes with them. Same pointers in backward (which does not use them).
  float* running_mean = nullptr;
  float* running_var = nullptr;
  // A Conv with a folded BatchNorm (Epilogue::batch_norm): that node's scale then shift, and its
  // running mean and variance. params_version changes when these change too.
  const float* bn_weights = nullptr;
  const float* bn_mean = nullptr;
  const float* bn_var = nullptr;
  // Changes whenever the parameters may have changed (every training step, every set_params).
  // While it stays the same an op may reuse a converted copy of its weights (e.g. oneDNN's
  // blocked layout in inference). 0 means unknown: convert every time.
  std::uint64_t params_version = 0;
  // Dropout masks come from (seed, node, step); step counts forward passes.
  std::uint64_t seed = 0;
  std::uint64_t step = 0;
  int node = 0;
};

// Which of the executor's activations an op's backward reads (its own copies, workspaces and
// masks aside). The memory plan (memory_plan.hpp) reuses an activation's bytes once no later
// forward and no later backward reads it, so an op that answers false must not touch that tensor,
// nor a pointer into it kept from forward, in backward. The default is the safe answer: both.
struct BackwardReads {
  bool src = true;  // OpContext::src (every input), or pointers to them kept from forward
  bool dst = true;  // OpContext::dst (e.g. a ReLU's mask from its output)
};

class Op {
 public:
  virtual ~Op() = default;
  virtual void forward(const OpContext& ctx) = 0;
  // Only called for networks created in Mode::Train, after forward of the same step.
  virtual void backward(const OpContext& ctx) = 0;
  virtual BackwardReads backward_reads() const { return {}; }
};

}  // namespace hpcnn
