// DnnlBackend: oneDNN primitives on the CPU, activations in the blocked layouts oneDNN prefers.
#include <omp.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/cpu_backend.hpp"
#include "base/errors.hpp"
#include "kernels/dnnl/dnnl_backend.hpp"
#include "kernels/dnnl/int8.hpp"
#include "kernels/dnnl/layout.hpp"
#include "kernels/dnnl/ops.hpp"
#include "kernels/dnnl/precision.hpp"

namespace hpcnn {
namespace {

using namespace dnnl_impl;

std::string version_string() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

class DnnlBackend final : public CpuBackend {
 public:
  DnnlBackend() : ctx_(std::make_shared<Context>()), copier_(ctx_) {}

  std::string name() const override { return "dnnl"; }

  // fp32, bf16 where this CPU has a bf16 kernel (precision_problem below), or int8 inference with
  // the calibrated input ranges of its layers; the convolution algorithm.
  void configure(const BackendSettings& s) override {
    BackendSettings rest = s;
    rest.precision = Precision::Fp32;
    check_cpu_settings(name(), rest, {"conv_algorithm"});
    if (s.conv_algorithm != "auto" && s.conv_algorithm != "direct")
      throw SettingError("conv_algorithm", s.conv_algorithm, "not auto or direct");
    ctx_->conv_algorithm = s.conv_algorithm == "direct" ? ConvAlgorithm::Direct : ConvAlgorithm::Auto;
    if (s.precision == Precision::Fp32) return;
    if (const std::string why = precision_problem(s.precision); !why.empty())
      throw SettingError("precision", precision_name(s.precision), "backend 'dnnl': " + why);
    if (s.precision == Precision::Int8) {
      if (!s.calibration)
        throw SettingError("precision", "int8", "backend 'dnnl': no calibrated input ranges (a calibration pass)");
      ctx_->int8 = true;
      ctx_->ranges = s.calibration;
      return;
    }
    ctx_->compute = dt::bf16;
  }

  std::string precision_exceptions() const override {
    std::string names;
    for (const std::string& n : ctx_->fp32_in_int8) names += (names.empty() ? "" : ",") + n;
    return names.empty() ? names : "fp32 (no optimized int8 kernel): " + names;
  }

  static std::string precision_problem(Precision p) {
    if (p == Precision::Tf32) return "tf32 is a GPU tensor-core format (the CPU runs fp32, bf16 or int8)";
    return p == Precision::Bf16 ? bf16_support().problem : std::string();
  }

  // Blocked formats may pad channels: the size is the layout's, not count * 4.
  std::size_t storage_bytes(const Tensor& t) const override {
    if (!t.layout) return CpuBackend::storage_bytes(t);
    return desc_of(t).get_size();
  }

  void write_plain(Tensor& t, const float* host_nchw) override {
    if (!t.layout) return CpuBackend::write_plain(t, host_nchw);
    copier_.run(host_nchw, plain_desc(t.shape), t.data, desc_of(t));
  }

  void read_plain(const Tensor& t, float* host_nchw) override {
    if (!t.layout) return CpuBackend::read_plain(t, host_nchw);
    if (quantized_scale(*ctx_, t) > 0.0f) return dequantize_plain(ctx_, t, host_nchw);  // int8 between layers
    copier_.run(t.data, desc_of(t), host_nchw, plain_desc(t.shape));
  }

  void set_zero(Tensor& t) override {
    if (!t.layout) return CpuBackend::set_zero(t);
    std::memset(t.data, 0, desc_of(t).get_size());
  }

  void accumulate(Tensor& dst, const Tensor& src) override {
    const memory::desc dd = desc_of(dst), sd = desc_of(src);
    if (dd == sd) return add_floats(dst.data, src.data, dd.get_size() / sizeof(float));
    float* tmp = scratch_.reserve(dd.get_size());
    copier_.run(src.data, sd, tmp, dd);
    add_floats(dst.data, tmp, dd.get_size() / sizeof(float));
  }

  std::unique_ptr<Op> make_op(const Node& node, std::span<const Tensor* const> src, Mode mode,
                              Tensor& dst) override {
    if (!reads_int8(node)) return make_layer_op(node, src, mode, dst);
    return with_fp32_inputs(ctx_, src, [&](Inputs fp32) { return make_layer_op(node, fp32, mode, dst); });
  }

  std::unique_ptr<Op> make_fused_op(const Node& node, const Epilogue& e, std::span<const Tensor* const> src,
                                    Mode mode, Tensor& dst) override {
    if (!reads_int8(node)) return make_fused_layer_op(node, e, src, mode, dst);
    return with_fp32_inputs(ctx_, src, [&](Inputs fp32) { return make_fused_layer_op(node, e, fp32, mode, dst); });
  }

  void synchronize() override { ctx_->stream.wait(); }

  void set_threads(int n) override {
    // More than OMP_THREAD_LIMIT makes oneDNN's primitives wait forever for threads OpenMP never
    // starts (seen with libgomp): refuse it here too, not only in the suites' validation.
    if (n > omp_get_thread_limit())
      throw UsageError(std::string("dnnl: ")
                           .append(std::to_string(n))
                           .append(" threads is above OpenMP's thread limit ")
                           .append(std::to_string(omp_get_thread_limit())));
    if (n > 0) omp_set_num_threads(n);
  }
  int threads() const override { return omp_get_max_threads(); }

  LibraryVersions versions() const override {
    LibraryVersions v = {{"oneDNN", version_string()},
                         {"oneDNN_isa", compat::isa_name(dnnl::get_effective_cpu_isa())},
                         {"oneDNN_conv_algorithm", ctx_->conv_algorithm == ConvAlgorithm::Auto
                                                       ? "auto (winograd for 3x3/s1 in fp32)"
                                                       : "direct"}};
    // bf16: what computes in it, and the kernel oneDNN dispatched (native or emulated).
    if (ctx_->compute == dt::bf16) {
      v.push_back({"oneDNN_bf16", "convolutions and inner products (f32 accumulation, output, master weights)"});
      v.push_back({"oneDNN_bf16_kernel", bf16_kernel_text(bf16_support())});
    }
    if (ctx_->int8) {
      v.push_back({"oneDNN_int8", "convolutions and inner products: u8/s8 inputs (per-tensor scales from calibration), "
                                  "s8 weights (per output channel), int32 accumulation; a convolution whose readers "
                                  "all take int8 (int8 layers, residual sums) writes its output in u8/s8 at its "
                                  "calibrated scale, a residual sum onto such an output too, else fp32 output"});
      v.push_back({"oneDNN_int8_kernel", int8_kernel_text()});
    }
    return v;
  }

 private:
  // int8: a node other than a convolution or fully connected layer reads a quantized input
  // through an FP32 copy (int8.hpp: with_fp32_inputs); those two take it as it is.
  bool reads_int8(const Node& node) const {
    return ctx_->int8 && node.kind != OpKind::Conv && node.kind != OpKind::FullyConnected;
  }

  std::unique_ptr<Op> make_layer_op(const Node& node, Inputs src, Mode mode, Tensor& dst) {
    switch (node.kind) {
      case OpKind::Conv: return make_conv(ctx_, node, src, mode, dst);
      case OpKind::BatchNorm: return make_batch_norm(ctx_, node, src, mode, dst);
      case OpKind::Relu:
      case OpKind::Tanh: return make_eltwise(ctx_, node, src, mode, dst);
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalAvgPool: return make_pooling(ctx_, node, src, mode, dst);
      case OpKind::Lrn: return make_lrn(ctx_, node, src, mode, dst);
      case OpKind::FullyConnected: return make_inner_product(ctx_, node, src, mode, dst);
      case OpKind::Add: return make_add(ctx_, node, src, mode, dst);
      case OpKind::Flatten: return make_flatten(ctx_, node, src, mode, dst);
      case OpKind::Dropout: return make_dropout(ctx_, node, src, mode, dst);
      case OpKind::SoftmaxCrossEntropy: return make_softmax_xent(ctx_, node, src, mode, dst);
      case OpKind::Input: break;
    }
    throw std::runtime_error("dnnl backend: no operator for node '" + node.name + "' (" +
                             op_kind_name(node.kind) + ")");
  }

  std::unique_ptr<Op> make_fused_layer_op(const Node& node, const Epilogue& e, Inputs src, Mode mode, Tensor& dst) {
    if (node.kind == OpKind::Conv) return make_conv(ctx_, node, src, mode, dst, e);
    if (e.batch_norm || e.add || !e.relu) return nullptr;
    switch (node.kind) {
      case OpKind::BatchNorm: return make_batch_norm(ctx_, node, src, mode, dst, true);
      case OpKind::FullyConnected: return make_inner_product(ctx_, node, src, mode, dst, true);
      case OpKind::Add: return make_add(ctx_, node, src, mode, dst, true);
      default: return nullptr;
    }
  }

  ContextPtr ctx_;
  Copier copier_;
  Buffer scratch_;
};

}  // namespace

std::unique_ptr<Backend> make_dnnl_backend() { return std::make_unique<DnnlBackend>(); }

void register_dnnl_backend(Registry<BackendInfo>& registry) {
  // OpenMP runs at most its thread-limit-var (OMP_THREAD_LIMIT) threads; unset, it is INT_MAX,
  // which means no limit.
  const int omp_limit = omp_get_thread_limit();
  BackendInfo info{"dnnl", "oneDNN " + version_string() + " primitives (fp32; bf16 where the CPU has a kernel; int8 inference)",
                   make_dnnl_backend, omp_limit == INT_MAX ? ThreadLimit::none() : ThreadLimit(omp_limit)};
  info.precision_problem = DnnlBackend::precision_problem;
  info.own_settings = {"conv_algorithm"};
  registry.add(std::move(info));
}

}  // namespace hpcnn
