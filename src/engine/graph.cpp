// Graph construction, shape inference and parameter layout.
#include "engine/graph.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/op_kinds.hpp"

namespace hpcnn {

std::string Shape::str() const {
  return std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
         std::to_string(w);
}

const char* op_kind_name(OpKind kind) { return op_kind_facts(kind).profile_name; }

namespace {

int window_out(int in, int k, int s, int p, std::string_view name, const char* what) {
  if (k < 1 || s < 1 || p < 0)
    throw std::invalid_argument(std::string(name) + ": invalid " + what + " window");
  const int span = in + 2 * p - k;
  if (span < 0)
    throw std::invalid_argument(std::string(name) + ": " + what + " window " + std::to_string(k) +
                                " larger than padded input " + std::to_string(in + 2 * p));
  return span / s + 1;
}

}  // namespace

Shape infer_shape(OpKind kind, const OpAttr& a, const std::vector<Shape>& in, std::string_view name) {
  const std::size_t arity = kind == OpKind::Input ? 0 : kind == OpKind::Add ? 2 : 1;
  if (in.size() != arity)
    throw std::invalid_argument(std::string(name) + ": expects " + std::to_string(arity) + " inputs");
  switch (kind) {
    case OpKind::Input:
      throw std::invalid_argument(std::string(name) + ": input shape is given, not inferred");
    case OpKind::Conv:
      if (a.out_channels < 1) throw std::invalid_argument(std::string(name) + ": no output channels");
      return {in[0].n, a.out_channels, window_out(in[0].h, a.kh, a.sh, a.ph, name, "convolution"),
              window_out(in[0].w, a.kw, a.sw, a.pw, name, "convolution")};
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      return {in[0].n, in[0].c, window_out(in[0].h, a.kh, a.sh, a.ph, name, "pooling"),
              window_out(in[0].w, a.kw, a.sw, a.pw, name, "pooling")};
    case OpKind::GlobalAvgPool:
      return {in[0].n, in[0].c, 1, 1};
    case OpKind::FullyConnected:
      if (a.out_channels < 1) throw std::invalid_argument(std::string(name) + ": no output features");
      return {in[0].n, a.out_channels, 1, 1};
    case OpKind::Flatten:
      return {in[0].n, in[0].c * in[0].h * in[0].w, 1, 1};
    case OpKind::Add:
      if (!(in[0] == in[1]))
        throw std::invalid_argument(std::string(name) + ": adds " + in[0].str() + " and " + in[1].str());
      return in[0];
    case OpKind::Lrn:
      if (a.lrn_size < 1 || a.lrn_size % 2 == 0)
        throw std::invalid_argument(std::string(name) + ": LRN size must be odd");
      return in[0];
    case OpKind::SoftmaxCrossEntropy:
      if (in[0].h != 1 || in[0].w != 1)
        throw std::invalid_argument(std::string(name) + ": loss expects {n, classes, 1, 1}, got " + in[0].str());
      return in[0];
    case OpKind::Dropout:
      if (!(a.dropout_p >= 0.0f && a.dropout_p < 1.0f))
        throw std::invalid_argument(std::string(name) + ": dropout p must be in [0, 1)");
      return in[0];
    case OpKind::BatchNorm:
    case OpKind::Relu:
    case OpKind::Tanh:
      return in[0];
  }
  throw std::invalid_argument(std::string(name) + ": unknown layer kind");
}

Graph::Graph(Shape input_per_sample) {
  input_per_sample.n = 1;
  Node in;
  in.kind = OpKind::Input;
  in.name = "input";
  in.out = input_per_sample;
  nodes_.push_back(std::move(in));
}

std::string Graph::unique_name(OpKind kind, std::string name) {
  if (name.empty()) name = op_kind_facts(kind).name_prefix + std::to_string(nodes_.size());
  for (const Node& n : nodes_)
    if (n.name == name) throw std::invalid_argument("duplicate layer name '" + name + "'");
  return name;
}

int Graph::append(OpKind kind, std::vector<int> inputs, const OpAttr& attr, std::string name) {
  if (finalized_) throw std::logic_error("Graph::append after finalize()");
  name = unique_name(kind, std::move(name));
  std::vector<Shape> in_shapes;
  for (int id : inputs) {
    if (id < 0 || id >= static_cast<int>(nodes_.size()))
      throw std::invalid_argument(name + ": input node " + std::to_string(id) + " does not exist");
    in_shapes.push_back(nodes_[static_cast<std::size_t>(id)].out);
  }
  Node node;
  node.kind = kind;
  node.attr = attr;
  node.out = infer_shape(kind, attr, in_shapes, name);
  node.name = std::move(name);
  node.inputs = std::move(inputs);
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

int Graph::conv(int x, int out_channels, int kernel, int stride, int pad, bool bias, std::string name) {
  OpAttr a;
  a.out_channels = out_channels;
  a.bias = bias;
  a.kh = a.kw = kernel;
  a.sh = a.sw = stride;
  a.ph = a.pw = pad;
  return append(OpKind::Conv, {x}, a, std::move(name));
}
int Graph::batch_norm(int x, std::string name) { return append(OpKind::BatchNorm, {x}, {}, std::move(name)); }
int Graph::relu(int x, std::string name) { return append(OpKind::Relu, {x}, {}, std::move(name)); }
int Graph::tanh(int x, std::string name) { return append(OpKind::Tanh, {x}, {}, std::move(name)); }
int Graph::max_pool(int x, int kernel, int stride, int pad, std::string name) {
  OpAttr a;
  a.kh = a.kw = kernel;
  a.sh = a.sw = stride;
  a.ph = a.pw = pad;
  return append(OpKind::MaxPool, {x}, a, std::move(name));
}
int Graph::avg_pool(int x, int kernel, int stride, int pad, std::string name) {
  OpAttr a;
  a.kh = a.kw = kernel;
  a.sh = a.sw = stride;
  a.ph = a.pw = pad;
  return append(OpKind::AvgPool, {x}, a, std::move(name));
}
int Graph::global_avg_pool(int x, std::string name) {
  return append(OpKind::GlobalAvgPool, {x}, {}, std::move(name));
}
int Graph::lrn(int x, int size, float alpha, float beta, float k, std::string name) {
  OpAttr a;
  a.lrn_size = size;
  a.lrn_alpha = alpha;
  a.lrn_beta = beta;
  a.lrn_k = k;
  return append(OpKind::Lrn, {x}, a, std::move(name));
}
int Graph::dropout(int x, float p, std::string name) {
  OpAttr a;
  a.dropout_p = p;
  return append(OpKind::Dropout, {x}, a, std::move(name));
}
int Graph::fully_connected(int x, int out_features, bool bias, std::string name) {
  OpAttr a;
  a.out_channels = out_features;
  a.bias = bias;
  return append(OpKind::FullyConnected, {x}, a, std::move(name));
}
int Graph::add(int a, int b, std::string name) { return append(OpKind::Add, {a, b}, {}, std::move(name)); }
int Graph::flatten(int x, std::string name) { return append(OpKind::Flatten, {x}, {}, std::move(name)); }
int Graph::softmax_cross_entropy(int logits, std::string name) {
  return append(OpKind::SoftmaxCrossEntropy, {logits}, {}, std::move(name));
}

void Graph::finalize() {
  if (finalized_) return;
  finalized_ = true;
  params_.clear();
  std::size_t offset = 0;
  auto add_param = [&](int id, ParamRole role, std::vector<int> dims) {
    ParamSpec p;
    p.node = id;
    p.role = role;
    p.count = 1;
    for (int d : dims) p.count *= static_cast<std::size_t>(d);
    p.dims = std::move(dims);
    p.offset = offset;
    offset += p.count;
    Node& node = nodes_[static_cast<std::size_t>(id)];
    node.params.push_back(static_cast<int>(params_.size()));
    node.param_count += p.count;
    params_.push_back(std::move(p));
  };
  // Reverse topological order: backward reaches the last layers first, so their gradients come
  // first in the buffer and buckets complete front to back.
  for (int id = static_cast<int>(nodes_.size()) - 1; id > 0; --id) {
    Node& node = nodes_[static_cast<std::size_t>(id)];
    node.param_offset = offset;
    const Shape in = nodes_[static_cast<std::size_t>(node.inputs[0])].out;
    const OpAttr& a = node.attr;
    switch (node.kind) {
      case OpKind::Conv:
        add_param(id, ParamRole::Weight, {a.out_channels, in.c, a.kh, a.kw});
        if (a.bias) add_param(id, ParamRole::Bias, {a.out_channels});
        break;
      case OpKind::FullyConnected:
        add_param(id, ParamRole::Weight, {a.out_channels, static_cast<int>(in.per_sample())});
        if (a.bias) add_param(id, ParamRole::Bias, {a.out_channels});
        break;
      case OpKind::BatchNorm:
        add_param(id, ParamRole::Scale, {in.c});
        add_param(id, ParamRole::Shift, {in.c});
        break;
      default:
        break;
    }
  }
  param_count_ = offset;
  // Buffers: each BatchNorm node's running mean then running variance, both aligned (graph.hpp).
  std::size_t buffers = 0;
  for (Node& node : nodes_) {
    if (node.kind != OpKind::BatchNorm) continue;
    const auto c = static_cast<std::size_t>(node.out.c);
    node.buffer_offset = buffer_stride(buffers);
    node.buffer_count = buffer_stride(c) + c;
    buffers = node.buffer_offset + node.buffer_count;
  }
  buffer_count_ = buffers;
}

std::vector<int> Graph::consumers(int id) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    for (int in : nodes_[i].inputs)
      if (in == id) out.push_back(static_cast<int>(i));
  return out;
}

int Graph::classes() const {
  const Node& last = nodes_.back();
  if (last.kind == OpKind::SoftmaxCrossEntropy) return nodes_[static_cast<std::size_t>(last.inputs[0])].out.c;
  return last.out.c;
}

std::size_t Graph::flops_forward_per_sample() const {
  std::size_t flops = 0;
  for (const Node& node : nodes_) {
    if (node.kind == OpKind::Conv) {
      const Shape in = nodes_[static_cast<std::size_t>(node.inputs[0])].out;
      flops += 2ull * node.out.per_sample() * static_cast<std::size_t>(in.c) * node.attr.kh * node.attr.kw;
    } else if (node.kind == OpKind::FullyConnected) {
      const Shape in = nodes_[static_cast<std::size_t>(node.inputs[0])].out;
      flops += 2ull * static_cast<std::size_t>(node.attr.out_channels) * in.per_sample();
    }
  }
  return flops;
}

std::size_t Graph::flops_training_per_sample() const {
  std::size_t on_input = 0;
  for (const Node& node : nodes_) {
    if ((node.kind != OpKind::Conv && node.kind != OpKind::FullyConnected) || node.inputs[0] != 0) continue;
    const Shape in = nodes_.front().out;
    const std::size_t window = node.kind == OpKind::Conv ? std::size_t(in.c) * node.attr.kh * node.attr.kw
                                                         : in.per_sample();
    on_input += 2 * node.out.per_sample() * window;
  }
  return 3 * flops_forward_per_sample() - on_input;
}

}  // namespace hpcnn
