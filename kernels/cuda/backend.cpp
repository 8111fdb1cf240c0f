// CudaBackend: one GPU (chosen by local rank), one stream, cuDNN for convolution and batch norm,
// cuBLAS for fully connected layers, our kernels for the rest (kernels.cu). Every call is
// asynchronous on the stream except the copies to the host, the loss, and synchronize().
#include <nccl.h>

#include <cmath>
#include <memory>
#include <string>

#include "base/errors.hpp"
#include "base/registry.hpp"
#include "kernels/cuda/context.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/kernels.hpp"
#include "kernels/cuda/nvml.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn {
namespace {

using namespace cuda;

class EventTimer final : public Timer {
 public:
  explicit EventTimer(cudaStream_t s) : stream_(s) {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { check(cudaEventRecord(start_, stream_), "cudaEventRecord"); }
  void stop() override { check(cudaEventRecord(stop_, stream_), "cudaEventRecord"); }
  double seconds() override {
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

std::string cudnn_version() {
  const std::size_t v = cudnnGetVersion();  // 9.x: major*10000 + minor*100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() : device_(select_device()), info_(device_info(device_)) {}

  std::string name() const override { return "cuda"; }
  bool is_gpu() const override { return true; }

  void configure(const BackendSettings& s) override {
    if (s.conv_algorithm != "auto")
      throw SettingError("conv_algorithm", s.conv_algorithm, "backend 'cuda' chooses with cuDNN (--cudnn-benchmark)");
    if (s.gemm_columns != 0)
      throw SettingError("gemm_columns", std::to_string(s.gemm_columns), "backend 'cuda' runs no im2col GEMM");
    if (s.cudnn_api != "graph" && s.cudnn_api != "legacy")
      throw SettingError("cudnn_api", "'" + s.cudnn_api + "'", "not graph or legacy");
    if (s.layout != "auto" && s.layout != "nchw" && s.layout != "nhwc")
      throw SettingError("layout", "'" + s.layout + "'", "not auto, nchw or nhwc");
    if (s.precision == Precision::Int8)
      throw SettingError("precision", "int8", "backend 'cuda' computes in fp32, tf32 or bf16 (int8: the dnnl backend)");
    if (s.precision == Precision::Bf16 && info_.cc_major < 8)
      throw SettingError("precision", "bf16",
                         info_.name + " (compute capability " + std::to_string(info_.cc_major) + "." +
                             std::to_string(info_.cc_minor) + ") has no BF16 tensor cores");
    ctx_ = std::make_shared<Context>(s, device_);  // before any op exists
  }

  // ---- memory ----
  void allocate(Tensor& t) override {
    t.bytes = storage_bytes(t);
    t.storage = alloc_bytes(t.bytes);
    t.data = static_cast<float*>(t.storage.get());
  }
  std::size_t storage_bytes(const Tensor& t) const override {
    return t.shape.count() * elem_bytes(layout_of(t));
  }
  // cudaMalloc aligns to 256 bytes at least (the memory plan's offsets keep that alignment).
  std::shared_ptr<void> alloc_bytes(std::size_t bytes) override { return ctx()->alloc(bytes); }
  std::shared_ptr<float> alloc_floats(std::size_t count) override {
    DeviceBuffer b = ctx()->alloc(count * sizeof(float));
    return std::shared_ptr<float>(b, static_cast<float*>(b.get()));
  }
  std::shared_ptr<std::int32_t> alloc_ints(std::size_t count) override {
    DeviceBuffer b = ctx()->alloc(count * sizeof(std::int32_t));
    return std::shared_ptr<std::int32_t>(b, static_cast<std::int32_t*>(b.get()));
  }
  // Pageable sources are staged by the driver before the call returns; page-locked ones
  // (pin_host) are read by the DMA engine later in stream order, and their owners keep them alive.
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx()->stream), "cudaMemcpyAsync (to device)");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx()->stream), "cudaMemcpyAsync (to host)");
    check(cudaStreamSynchronize(ctx()->stream), "cudaStreamSynchronize");
  }
  void write_plain(Tensor& t, const float* host) override {
    const Layout l = layout_of(t);
    if (same_memory(t.shape, l, Layout{})) return copy_to_device(t.data, host, t.shape.count() * sizeof(float));
    void* staging = ctx()->scratch(3, t.shape.count() * sizeof(float));
    copy_to_device(staging, host, t.shape.count() * sizeof(float));
    store_as(*ctx(), staging, Layout{}, t);
  }
  void read_plain(const Tensor& t, float* host) override {
    const void* plain = as_layout(*ctx(), t, Layout{}, 3);
    copy_to_host(host, plain, t.shape.count() * sizeof(float));
  }
  void set_zero(Tensor& t) override {
    check(cudaMemsetAsync(t.data, 0, t.shape.count() * elem_bytes(layout_of(t)), ctx()->stream), "cudaMemsetAsync");
  }
  void accumulate(Tensor& dst, const Tensor& src) override {
    if (!(dst.shape == src.shape))
      throw std::logic_error("cuda accumulate: shapes " + dst.shape.str() + " and " + src.shape.str() + " differ");
    const Layout l = layout_of(dst);
    const void* s = as_layout(*ctx(), src, l, 3);
    cuda::accumulate(dst.data, s, dst.shape.count(), l.bf16, ctx()->stream);
  }

  // ---- operators ----
  std::unique_ptr<Op> make_op(const Node& node, std::span<const Tensor* const> src, Mode mode, Tensor& dst) override {
    switch (node.kind) {
      case OpKind::Conv: return make_conv(ctx(), node, src, mode, dst);
      case OpKind::BatchNorm: return make_batch_norm(ctx(), node, src, mode, dst);
      case OpKind::Relu:
      case OpKind::Tanh: return make_activation(ctx(), node, src, mode, dst);
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalAvgPool: return make_pooling(ctx(), node, src, mode, dst);
      case OpKind::Lrn: return make_lrn(ctx(), node, src, mode, dst);
      case OpKind::Dropout: return make_dropout(ctx(), node, src, mode, dst);
      case OpKind::FullyConnected: return make_fully_connected(ctx(), node, src, mode, dst);
      case OpKind::Add: return make_add(ctx(), node, src, mode, dst);
      case OpKind::Flatten: return make_flatten(ctx(), node, src, mode, dst);
      case OpKind::SoftmaxCrossEntropy: return make_softmax_xent(ctx(), node, src, mode, dst);
      case OpKind::Input: break;
    }
    throw std::runtime_error("cuda backend: no operator for node '" + node.name + "' (" + op_kind_name(node.kind) + ")");
  }

  // Every candidate fused. Inference: a convolution takes its folded batch norm and ReLU as one
  // bias(+ReLU) pass. Otherwise make_fused_relu: the ReLU's output is the op's, so a fused pair
  // holds one activation instead of two, and an Add+ReLU is one pass (add_relu).
  std::unique_ptr<Op> make_fused_op(const Node& node, const Epilogue& e, std::span<const Tensor* const> src,
                                    Mode mode, Tensor& dst) override {
    if (e.add) return nullptr;  // no residual epilogue here: the executor runs the Add itself
    if (node.kind == OpKind::Conv && mode == Mode::Infer) return make_conv(ctx(), node, src, mode, dst, e);
    if (e.batch_norm || !e.relu) return nullptr;
    std::unique_ptr<Op> inner;
    switch (node.kind) {
      case OpKind::Conv: inner = make_conv(ctx(), node, src, mode, dst); break;
      case OpKind::BatchNorm: return make_batch_norm(ctx(), node, src, mode, dst, true);
      case OpKind::FullyConnected: inner = make_fully_connected(ctx(), node, src, mode, dst); break;
      case OpKind::Add: inner = make_add(ctx(), node, src, mode, dst, true); break;
      default: return nullptr;
    }
    return make_fused_relu(ctx(), std::move(inner), dst, node.kind == OpKind::Add);
  }

  // ---- optimizer ----
  void sgd_step(float* w, const float* g, float* v, std::size_t n, const SgdParams& p) override {
    cuda::sgd_step(w, g, v, n, p.lr, p.momentum, p.weight_decay, ctx()->stream);
  }
  void adam_step(float* w, const float* g, float* m, float* v, std::size_t n, const AdamParams& p,
                 std::int64_t t) override {
    if (t < 1) throw std::logic_error("cuda adam_step: step t must be >= 1");
    const double bc1 = 1.0 - std::pow(double(p.beta1), double(t)), bc2 = 1.0 - std::pow(double(p.beta2), double(t));
    cuda::adam_step(w, g, m, v, n, p.lr, p.beta1, p.beta2, p.eps, p.weight_decay, float(bc1), float(bc2), ctx()->stream);
  }

  // ---- execution ----
  void scale(float* data, std::size_t n, float factor) override { cuda::scale(data, n, factor, ctx()->stream); }
  void synchronize() override {
    check(cudaStreamSynchronize(ctx()->stream), "cudaStreamSynchronize");
    check(cudaGetLastError(), "kernel launch");
  }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<EventTimer>(ctx()->stream); }
  void set_threads(int) override {}  // one host thread drives the GPU; there is nothing to set
  int threads() const override { return 1; }

  LibraryVersions versions() const override {
    int nccl = 0, cublas = 0;
    ncclGetVersion(&nccl);
    ctx()->blas.get_version(ctx()->cublas, &cublas);
    const BackendSettings& s = ctx()->settings;
    return {{"gpu", info_.name},
            {"gpu_compute_capability", std::to_string(info_.cc_major) + "." + std::to_string(info_.cc_minor)},
            {"gpu_memory_mib", std::to_string(info_.total_bytes >> 20)},
            {"cuda_driver", version_string(info_.driver_version)},
            {"cuda_runtime", version_string(info_.runtime_version)},
            {"cuDNN", cudnn_version()},
            {"cuBLAS", std::to_string(cublas)},
            {"NCCL", std::to_string(nccl / 10000) + "." + std::to_string((nccl % 10000) / 100) + "." +
                         std::to_string(nccl % 100)},
            {"cuda_precision", precision_name(s.precision)},
            {"cuda_layout", ctx()->act_nhwc ? "nhwc" : "nchw"},
            {"cudnn_algorithms", s.cudnn_benchmark ? "benchmark (fastest measured)" : "heuristics"},
            {"cudnn_conv_api", ctx()->graph_api ? "graph (engine heuristics mode A; legacy calls where no plan builds)"
                                               : "legacy (--cudnn-api legacy)"},
            {"cudnn_bn_activation", ctx()->bn_activation ? "BN+ReLU in cuDNN's kernels where it supports them"
                                                         : "off (--cudnn-bn-activation off)"},
            {"cudnn_workspace_limit_mib", std::to_string(ctx()->workspace_limit >> 20)}};
  }

  std::size_t peak_device_bytes() const override { return ctx()->usage->peak; }
  int device() const override { return device_; }
  void* stream() const override { return ctx()->stream; }
  void pin_host(void* p, std::size_t bytes) override {
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) cudaGetLastError();  // stays pageable
  }
  void unpin_host(void* p) override {
    if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
  }
  std::size_t device_used_bytes() const override {
    std::size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return 0;
    return total - free_b;
  }
  double device_energy_joules() const override { return gpu_energy_joules(info_.bus_id); }

 private:
  int device_;
  DeviceInfo info_;
  // Created by configure(), or with the default settings at first use: creating the cuDNN and
  // cuBLAS handles takes time, so it happens once.
  const ContextPtr& ctx() const {
    if (!ctx_) ctx_ = std::make_shared<Context>(BackendSettings{}, device_);
    return ctx_;
  }
  mutable ContextPtr ctx_;
};

}  // namespace

void register_cuda_backend(Registry<BackendInfo>& registry) {
  registry.add({"cuda", "NVIDIA GPU: cuDNN convolution and batch norm, cuBLAS, own kernels (one GPU per rank)",
                [] { return std::unique_ptr<Backend>(std::make_unique<CudaBackend>()); },
                ThreadLimit::none(),  // one host thread drives the GPU: --threads is ignored
                true, [] { return no_device_reason(); },
                [] {
                  const DeviceInfo info = device_info(select_device());
                  return GpuDevice{info.device, info.name, info.bus_id};
                }});
}

}  // namespace hpcnn
