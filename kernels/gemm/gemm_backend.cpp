// GemmCpuBackend: convolution and fully connected layers lowered to SGEMM, everything else by the
// reference backend's loops (gemm_backend.hpp).
#include "kernels/gemm/gemm_backend.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "base/errors.hpp"
#include "kernels/gemm/gemm_ops.hpp"
#include "kernels/reference/reference_backend.hpp"

namespace hpcnn {

GemmCpuBackend::GemmCpuBackend(std::string name, std::unique_ptr<Sgemm> sgemm)
    : name_(std::move(name)), sgemm_(std::move(sgemm)), plain_(make_reference_backend()),
      scratch_(std::make_shared<gemm_ops::Scratch>()) {}

GemmCpuBackend::~GemmCpuBackend() = default;

void GemmCpuBackend::configure(const BackendSettings& s) {
  check_cpu_settings(name_, s, {"gemm_columns"});
  if (s.gemm_columns < 0) throw SettingError("gemm_columns", std::to_string(s.gemm_columns), "is negative");
  gemm_columns_ = s.gemm_columns;
}

std::unique_ptr<Op> GemmCpuBackend::make_op(const Node& node, std::span<const Tensor* const> src,
                                            Mode mode, Tensor& dst) {
  if (node.kind != OpKind::Conv && node.kind != OpKind::FullyConnected)
    return plain_->make_op(node, src, mode, dst);
  if (src.empty() || !src[0]) throw std::runtime_error(node.name + ": no input tensors");
  if (src[0]->layout) throw std::runtime_error(node.name + ": the " + name_ + " backend takes plain-layout inputs only");
  const std::vector<Shape> in = {src[0]->shape};
  const Shape out = infer_shape(node.kind, node.attr, in, node.name);
  dst.shape = out;
  dst.layout = nullptr;
  if (node.kind == OpKind::Conv) return gemm_ops::make_conv(sgemm_, scratch_, node, in[0], out, gemm_columns_);
  return gemm_ops::make_fully_connected(sgemm_, node, in[0], out);
}

LibraryVersions GemmCpuBackend::versions() const {
  LibraryVersions v = sgemm_->versions();
  v.emplace_back(name_ + "_other_layers", "reference loops");
  return v;
}

}  // namespace hpcnn
