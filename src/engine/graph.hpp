// Backend-agnostic model description: a small DAG of layers in topological order, plus the layout
// of every trainable parameter in one contiguous buffer and of the non-trainable buffers (batch
// norm running statistics) in another. Built by models (models.cpp), read by the
// executor (network.cpp) and by backends when they create their operators.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tensor.hpp"

namespace hpcnn {

enum class OpKind {
  Input,
  Conv,
  BatchNorm,
  Relu,
  Tanh,
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  Lrn,
  Dropout,
  FullyConnected,
  Add,
  Flatten,
  SoftmaxCrossEntropy,
};

// Operator names as the per-operator profile reports them (ref. [4] Figs 5, 7, 10,
// docs/EXPERIMENTS.md):
// "convolution", "batch_norm", "relu", "tanh", "pooling", "lrn", "dropout", "fully_connected",
// "add", "flatten", "softmax_cross_entropy", "input". Backward adds the suffix "_backward".
const char* op_kind_name(OpKind kind);

// Attributes of one layer; each kind reads only its own fields.
struct OpAttr {
  // Conv, FullyConnected: output channels / features, and whether a bias is added.
  int out_channels = 0;
  bool bias = false;
  // Conv, MaxPool, AvgPool: window, stride, zero padding (pooling ignores the padded cells:
  // max pool never selects them; average pool divides by the full window, "include padding").
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  // BatchNorm: y = scale * (x - mean) / sqrt(var + eps) + shift; running statistics are updated as
  // running = (1 - momentum) * running + momentum * batch (unbiased batch variance, as PyTorch).
  float eps = 1e-5f, momentum = 0.1f;
  // Lrn (across channels, as AlexNet/Caffe):
  //   y = x / (k + alpha / size * sum_{c' in window(c)} x_{c'}^2) ^ beta, window centred, size odd.
  int lrn_size = 5;
  float lrn_alpha = 1e-4f, lrn_beta = 0.75f, lrn_k = 1.0f;
  // Dropout: zero with probability p in training, scale survivors by 1/(1-p); identity in inference.
  // The mask is dropout_keep(seed, node, step, index) from base/rng.hpp, so all backends agree.
  float dropout_p = 0.5f;
};

// Trainable parameters, in canonical plain layouts:
//   Conv weight [O][I][KH][KW], bias [O]; FullyConnected weight [O][C*H*W of its input, NCHW
//   order], bias [O]; BatchNorm scale [C], shift [C].
enum class ParamRole { Weight, Bias, Scale, Shift };

struct ParamSpec {
  int node = 0;
  ParamRole role = ParamRole::Weight;
  std::vector<int> dims;
  std::size_t offset = 0;  // in floats, into the network's parameter (and gradient) buffer
  std::size_t count = 0;
};

struct Node {
  OpKind kind = OpKind::Input;
  std::string name;         // unique, e.g. "layer2.0.conv1"
  std::vector<int> inputs;  // node ids, all smaller than this node's id
  OpAttr attr;
  Shape out;                // output shape for ONE sample (n == 1)
  std::vector<int> params;  // indices into Graph::params(), in buffer order
  std::size_t param_offset = 0;  // offset of this node's first parameter (params are contiguous)
  std::size_t param_count = 0;   // all parameters of this node
  // Non-trainable buffers (BatchNorm only: running mean [C] at buffer_offset, running variance
  // [C] at buffer_offset + buffer_stride(C)); offsets in floats into the network's buffer block.
  std::size_t buffer_offset = 0;
  std::size_t buffer_count = 0;  // buffer_stride(C) + C for BatchNorm, 0 otherwise
};

// Every node's block of buffers, and within a BatchNorm block the variance, starts at a multiple
// of this many floats: 256 bytes, the alignment cuDNN's batch-norm kernels need for their
// statistics pointers (they fault on less); the buffer block itself comes from alloc_floats.
constexpr std::size_t kBufferAlignFloats = 64;
inline std::size_t buffer_stride(std::size_t floats) {
  return (floats + kBufferAlignFloats - 1) / kBufferAlignFloats * kBufferAlignFloats;
}

// Builder and description. Node 0 is the input. Each builder call appends a node, computes its
// output shape, and returns its id. finalize() lays out the parameters in the order backward
// produces their gradients (reverse topological), so gradient buckets are contiguous ranges that
// complete front to back, and the buffers in topological order (nothing depends on their order).
class Graph {
 public:
  explicit Graph(Shape input_per_sample);

  int input() const { return 0; }
  int conv(int x, int out_channels, int kernel, int stride, int pad, bool bias,
           std::string name = {});
  int batch_norm(int x, std::string name = {});
  int relu(int x, std::string name = {});
  int tanh(int x, std::string name = {});
  int max_pool(int x, int kernel, int stride, int pad = 0, std::string name = {});
  int avg_pool(int x, int kernel, int stride, int pad = 0, std::string name = {});
  int global_avg_pool(int x, std::string name = {});
  int lrn(int x, int size, float alpha, float beta, float k, std::string name = {});
  int dropout(int x, float p, std::string name = {});
  int fully_connected(int x, int out_features, bool bias = true, std::string name = {});
  int add(int a, int b, std::string name = {});
  int flatten(int x, std::string name = {});
  int softmax_cross_entropy(int logits, std::string name = {});
  // Generic append (used by the builder calls above and by tests that build one-layer graphs).
  int append(OpKind kind, std::vector<int> inputs, const OpAttr& attr, std::string name = {});

  void finalize();

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  const std::vector<ParamSpec>& params() const { return params_; }
  std::size_t param_count() const { return param_count_; }
  // Floats of the non-trainable buffer block (Node::buffer_offset/buffer_count), padding included.
  std::size_t buffer_count() const { return buffer_count_; }
  std::vector<int> consumers(int id) const;
  int output() const { return static_cast<int>(nodes_.size()) - 1; }  // last node
  bool has_loss() const { return nodes_.back().kind == OpKind::SoftmaxCrossEntropy; }
  Shape input_shape() const { return nodes_.front().out; }
  int classes() const;  // channels of the loss input (or of the last node without a loss)
  std::size_t flops_forward_per_sample() const;  // multiply-add = 2 FLOPs; conv and fc only
  // Forward + backward-data + backward-weights FLOPs of conv and fc layers; layers reading the
  // network input compute no backward-data.
  std::size_t flops_training_per_sample() const;

 private:
  std::string unique_name(OpKind kind, std::string name);
  std::vector<Node> nodes_;
  std::vector<ParamSpec> params_;
  std::size_t param_count_ = 0;
  std::size_t buffer_count_ = 0;
  bool finalized_ = false;
};

// Output shape of a layer for given input shapes; throws std::invalid_argument naming the layer
// when the shapes do not fit (kernel larger than the padded input, mismatched add, ...).
Shape infer_shape(OpKind kind, const OpAttr& attr, const std::vector<Shape>& in, std::string_view name);

}  // namespace hpcnn
