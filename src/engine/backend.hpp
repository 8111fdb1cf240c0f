// The compute backend interface: memory, operators, optimizer kernels, timing and threads.
// Implemented by kernels/<name>/ (reference, dnnl, openblas, eigen, cuda) and registered by name;
// used by the executor (network.cpp) and the suites. A backend may be asynchronous (GPU): callers
// must synchronize() before reading host clocks, and use Timer for device-side intervals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph.hpp"
#include "engine/op.hpp"
#include "engine/tensor.hpp"
#include "engine/value_range.hpp"

namespace hpcnn {

struct SgdParams {
  float lr = 0.01f, momentum = 0.9f, weight_decay = 0.0f;
};
// PyTorch semantics: g += wd * w; v = momentum * v + g; w -= lr * v   (v starts at 0)

struct AdamParams {
  float lr = 0.001f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
};
// PyTorch semantics (L2 weight decay added to g), bias-corrected with step t >= 1.

// Measures an interval on the backend's timeline (CUDA events on a GPU, a steady clock on a CPU).
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double seconds() = 0;  // waits for stop() to complete on the device
};

using LibraryVersions = std::vector<std::pair<std::string, std::string>>;

// Numerics and algorithm settings of a backend (hpcnn-train/-infer options). CPU backends run fp32,
// and the precisions their registration names (BackendInfo::precision_problem) where the CPU can.
enum class Precision { Fp32, Tf32, Bf16, Int8 };
const char* precision_name(Precision p);  // "fp32", "tf32", "bf16", "int8"
struct BackendSettings {
  // fp32: plain FP32 arithmetic (no tensor-core TF32). tf32: FP32 storage, TF32 tensor-core math
  // in convolutions and matrix products. bf16: BF16 activations and math with FP32 master weights,
  // gradients and optimizer (no loss scaling needed: BF16 has FP32's exponent range). int8
  // (inference only): convolutions and fully connected layers on int8 inputs quantized with the
  // scales `calibration` gives (activations per tensor, weights per output channel), int32
  // accumulation, FP32 output; every other layer in FP32.
  Precision precision = Precision::Fp32;
  // GPU: time every cuDNN algorithm once per shape and keep the fastest (instead of heuristics).
  bool cudnn_benchmark = false;
  // GPU activation layout: "auto" (NHWC with tensor-core math, NCHW for strict fp32), "nchw", "nhwc".
  std::string layout = "auto";
  // dnnl: "auto" (Winograd for fp32 3x3 stride-1 convolutions where oneDNN's heuristics pick it)
  // or "direct" (every convolution direct, as PyTorch runs them).
  std::string conv_algorithm = "auto";
  // openblas, eigen: columns a convolution's im2col GEMM aims for (images grouped until N reaches
  // it); 0: the built-in target (kernels/gemm/conv_lowering.hpp).
  int gemm_columns = 0;
  // cuda: "graph" (cuDNN's graph API, legacy calls where no plan builds) or "legacy"; and whether a
  // batch norm's ReLU runs inside cuDNN's batch norm where it supports it.
  std::string cudnn_api = "graph";
  bool cudnn_bn_activation = true;
  // int8: the calibrated input range of every convolution and fully connected layer
  // (engine/calibration.hpp).
  std::shared_ptr<const ActivationRanges> calibration;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual bool is_gpu() const { return false; }

  // ---- memory (device pointers; host memory on CPU backends) ----
  // Allocate t.bytes for t.shape in t.layout (the backend computes bytes) and set data/storage.
  virtual void allocate(Tensor& t) = 0;
  // The bytes allocate() would give t (its shape in its layout), without allocating: the
  // executor's memory plan (memory_plan.hpp) sizes its arena with it.
  virtual std::size_t storage_bytes(const Tensor& t) const = 0;
  // One zeroed block of device memory, aligned as allocate() aligns (64 bytes on the host, 256 on
  // a GPU): the memory plan's arena, cut into tensors at offsets that are multiples of 256.
  virtual std::shared_ptr<void> alloc_bytes(std::size_t bytes) = 0;
  // Plain zero-initialized float buffer (parameters, gradients, optimizer state), 64-byte aligned.
  virtual std::shared_ptr<float> alloc_floats(std::size_t count) = 0;
  virtual std::shared_ptr<std::int32_t> alloc_ints(std::size_t count) = 0;
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  // Convert between host plain NCHW and the tensor's layout.
  virtual void write_plain(Tensor& t, const float* host_nchw) = 0;
  virtual void read_plain(const Tensor& t, float* host_nchw) = 0;
  virtual void set_zero(Tensor& t) = 0;
  // dst += src; both tensors have the same shape and layout.
  virtual void accumulate(Tensor& dst, const Tensor& src) = 0;

  // ---- operators ----
  // Create the operator for `node` with these (shaped, laid-out, possibly unallocated) inputs and
  // batch size src[0]->shape.n. Sets dst.shape and dst.layout; the caller allocates dst.
  // Throws std::runtime_error if the backend cannot run this node.
  virtual std::unique_ptr<Op> make_op(const Node& node, std::span<const Tensor* const> src,
                                      Mode mode, Tensor& dst) = 0;
  // Epilogue fusion: one op for `node` and the nodes after it that `e` names (network.cpp asks
  // for a Conv, BatchNorm, FullyConnected or Add followed by the ReLU that is its only consumer,
  // and in inference for a Conv followed by its BatchNorm [and ReLU], and for a Conv [-> BatchNorm]
  // whose result goes into an Add [-> ReLU] (Epilogue::add: dst is then the Add's other input's
  // tensor, whose bytes the op writes over: dst.layout must come out as that tensor's layout, or
  // as one of the same size that the backend tells apart, such as an int8 sum at a scale of its
  // own); nullptr where this backend does not fuse that combination (the default: the executor
  // runs the nodes one by one). The op writes only the last node's output, into dst (the shape of node's output). With
  // a ReLU its backward gets diff_dst with respect to the ReLU's output and applies the ReLU's
  // derivative itself (dst > 0), see OpContext::diff_dst_writable.
  virtual std::unique_ptr<Op> make_fused_op(const Node& /*node*/, const Epilogue& /*e*/,
                                            std::span<const Tensor* const> /*src*/, Mode /*mode*/,
                                            Tensor& /*dst*/) {
    return nullptr;
  }

  // ---- kernels over plain buffers of n floats ----
  // data *= factor where the backend keeps its buffers (the exchanges' averaging of summed
  // gradients). The default is the host loop of the CPU backends.
  virtual void scale(float* data, std::size_t n, float factor) {
    for (std::size_t i = 0; i < n; ++i) data[i] *= factor;
  }
  virtual void sgd_step(float* w, const float* g, float* velocity, std::size_t n,
                        const SgdParams& p) = 0;
  virtual void adam_step(float* w, const float* g, float* m, float* v, std::size_t n,
                         const AdamParams& p, std::int64_t t) = 0;

  // ---- execution ----
  virtual void synchronize() {}
  virtual std::unique_ptr<Timer> make_timer() = 0;
  // n <= 0 leaves the library's default. threads() reads back what the library will use.
  virtual void set_threads(int n) = 0;
  virtual int threads() const = 0;
  virtual LibraryVersions versions() const = 0;
  // Layers of the networks made so far that do not compute in the configured precision, and why
  // (e.g. int8 layers that run in fp32 where the library has no optimized int8 kernel); empty: none.
  virtual std::string precision_exceptions() const { return {}; }
  // High-water mark of device memory in bytes (0 on CPU backends, whose memory is the RSS).
  virtual std::size_t peak_device_bytes() const { return 0; }

  // ---- settings and GPU specifics ----
  // Called once, before any make_op. The default accepts only the defaults (CPU backends).
  virtual void configure(const BackendSettings& settings);
  // GPU backends: the device this backend runs on (-1 on a CPU) and its stream (a cudaStream_t),
  // so that an exchange can order its communication after the kernels that produce gradients.
  virtual int device() const { return -1; }
  virtual void* stream() const { return nullptr; }
  // Page-locks host memory that is copied to the device every iteration (the synthetic batches),
  // so the copy runs at full bus speed; no-op on CPU backends. unpin_host before freeing it.
  virtual void pin_host(void* /*p*/, std::size_t /*bytes*/) {}
  virtual void unpin_host(void* /*p*/) {}
  // Device memory in use now by anyone (cudaMemGetInfo: total - free), 0 on CPU backends.
  virtual std::size_t device_used_bytes() const { return 0; }
  // Energy the device has used since some fixed point, in joules (NVML), or < 0 when unknown.
  virtual double device_energy_joules() const { return -1.0; }
};

// ---- registry ----
// The most threads a backend's library accepts for --threads. The suites check every --threads
// value against it before any work, so that a count the library cannot honour is a usage error
// (exit 2) instead of a failed point; it lives in the registry because checking it must not need
// the backend itself (a GPU backend cannot be created without a device). A required constructor
// argument of its own type, so that every registration states it and no bool slips into it.
struct ThreadLimit {
  explicit ThreadLimit(int at_most_threads) : at_most(at_most_threads > 0 ? at_most_threads : 0) {}
  // Any count: the backend has no thread setting of its own (GPU backends) or only records it.
  static ThreadLimit none() { return ThreadLimit(0); }
  bool allows(int threads) const { return at_most == 0 || threads <= at_most; }
  int at_most;  // 0: no limit
};

// The device a GPU backend binds this rank to (hpcnn-scale --preflight shows it).
struct GpuDevice {
  int index = -1;
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string bus_id;  // "0000:18:00.0"
};

struct BackendInfo {
  BackendInfo(std::string n, std::string d, std::function<std::unique_ptr<Backend>()> c, ThreadLimit t,
              bool g = false, std::function<std::string()> u = {}, std::function<GpuDevice()> s = {})
      : name(std::move(n)), description(std::move(d)), create(std::move(c)), max_threads(t), gpu(g),
        unavailable(std::move(u)), select_device(std::move(s)) {}
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Backend>()> create;
  ThreadLimit max_threads;
  bool gpu = false;  // needs a GPU at run time (tests select these with --gpu)
  // Why create() would fail on this machine ("no CUDA device ..."), or empty; never throws.
  std::function<std::string()> unavailable;
  // GPU backends: binds this rank to its GPU (as create() would) and describes it; throws when
  // there is none.
  std::function<GpuDevice()> select_device;
  // CPU backends that compute in more than fp32: why this machine cannot run precision p (names
  // what the CPU lacks), empty where it can. Unset: fp32 only.
  std::function<std::string(Precision)> precision_problem;
  // The CPU backend's own settings of BackendSettings it accepts beyond the defaults
  // ("conv_algorithm" for dnnl, "gemm_columns" for the GEMM-lowered backends).
  std::vector<std::string> own_settings;
};

// (The list of backends a build has is kernels/registry.hpp's: the kernels own it.)

// Throws SettingError("threads", "N", "backend 'X' accepts at most M threads") when backend X
// does not allow n threads (n <= 0, the library's default, is always allowed).
void check_thread_limit(const BackendInfo& backend, int n);
// The settings a CPU backend accepts: the defaults (fp32, heuristics, auto layout), and the
// precisions `backend` says this machine can run; throws SettingError naming the first other one.
void check_cpu_settings(const BackendInfo& backend, const BackendSettings& settings);
// The same for a backend object (Backend::configure's default: fp32 only, the defaults but for
// the settings it names in `own`).
void check_cpu_settings(const std::string& backend, const BackendSettings& settings,
                        const std::vector<std::string>& own = {});

}  // namespace hpcnn
