// ReferenceBackend: the CpuBackend base (plain host memory, optimizer loops) plus one reference
// operator per layer kind, created by make_op; registered as "reference".
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/cpu_backend.hpp"
#include "kernels/reference/ops.hpp"
#include "kernels/reference/reference_backend.hpp"

namespace hpcnn {

namespace reference {

void expect_shape(const Tensor* t, const Shape& shape, const std::string& node, const char* what) {
  if (!t) throw std::logic_error(node + ": " + what + " is missing");
  if (!(t->shape == shape))
    throw std::logic_error(node + ": " + what + " is " + t->shape.str() + ", expected " + shape.str());
  if (t->layout) throw std::logic_error(node + ": " + what + " is not in plain layout");
}

}  // namespace reference

namespace {

class ReferenceBackend final : public CpuBackend {
 public:
  std::string name() const override { return "reference"; }

  std::unique_ptr<Op> make_op(const Node& node, std::span<const Tensor* const> src, Mode mode,
                              Tensor& dst) override {
    if (src.empty() || !src[0]) throw std::runtime_error(node.name + ": no input tensors");
    std::vector<Shape> in;
    for (const Tensor* t : src) {
      if (!t) throw std::runtime_error(node.name + ": missing input tensor");
      if (t->layout)
        throw std::runtime_error(node.name + ": the reference backend takes plain-layout inputs only");
      in.push_back(t->shape);
    }
    const Shape out = infer_shape(node.kind, node.attr, in, node.name);
    reference::OpSetup s{node, std::move(in), out, mode};
    std::unique_ptr<Op> op;
    switch (node.kind) {
      case OpKind::Conv: op = reference::make_conv(s); break;
      case OpKind::FullyConnected: op = reference::make_fully_connected(s); break;
      case OpKind::BatchNorm: op = reference::make_batch_norm(s); break;
      case OpKind::Relu: op = reference::make_relu(s); break;
      case OpKind::Tanh: op = reference::make_tanh(s); break;
      case OpKind::MaxPool: op = reference::make_max_pool(s); break;
      case OpKind::AvgPool: op = reference::make_avg_pool(s); break;
      case OpKind::GlobalAvgPool: op = reference::make_global_avg_pool(s); break;
      case OpKind::Lrn: op = reference::make_lrn(s); break;
      case OpKind::Dropout: op = reference::make_dropout(s); break;
      case OpKind::Add: op = reference::make_add(s); break;
      case OpKind::Flatten: op = reference::make_flatten(s); break;
      case OpKind::SoftmaxCrossEntropy: op = reference::make_softmax_cross_entropy(s); break;
      case OpKind::Input: break;
    }
    if (!op) throw std::runtime_error(node.name + ": the reference backend has no operator for this node");
    dst.shape = out;
    dst.layout = nullptr;
    return op;
  }

  // The reference runs on one thread whatever is asked; the request is only recorded.
  void set_threads(int n) override { requested_threads_ = n; }
  int threads() const override { return 1; }
  int requested_threads() const { return requested_threads_; }

  LibraryVersions versions() const override {
#ifdef __VERSION__
    return {{"reference", "1"}, {"compiler", __VERSION__}};
#else
    return {{"reference", "1"}};
#endif
  }

 private:
  int requested_threads_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

void register_reference_backend(Registry<BackendInfo>& registry) {
  // Any --threads: the reference always runs on one thread and only records the request.
  registry.add({"reference", "plain C++ loops; the oracle for tests", make_reference_backend, ThreadLimit::none()});
}

}  // namespace hpcnn
