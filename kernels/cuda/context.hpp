// State shared by the cuda backend and its operators: the stream, the cuDNN and cuBLAS handles, the
// precision settings, the tracked device allocator and a shared workspace. Plus the activation
// layouts (NCHW/NHWC x FP32/BF16) that Tensor::layout points at, and helpers every op uses to take
// an input in the layout it wants and to give a gradient back in its producer's layout.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/backend.hpp"
#include "engine/tensor.hpp"
#include "kernels/cuda/cublas_library.hpp"

namespace hpcnn::cuda {

// Throws RuntimeError naming the call (cuDNN / cuBLAS status strings).
void check_cudnn(cudnnStatus_t s, const char* what);
void check_cublas(cublasStatus_t s, const char* what);

// An activation layout. nullptr in Tensor::layout means {nhwc = false, bf16 = false}.
struct Layout {
  bool nhwc = false;
  bool bf16 = false;
};
Layout layout_of(const Tensor& t);
// The shared, canonical Layout object for these flags (compared by value, kept by pointer).
// A tensor with h = w = 1 is stored NCHW whatever is asked: both orders are the same bytes.
std::shared_ptr<const void> make_layout(const Shape& s, bool nhwc, bool bf16);
inline std::size_t elem_bytes(const Layout& l) { return l.bf16 ? 2 : 4; }
// True when tensors of shape s in layouts a and b hold the same bytes.
bool same_memory(const Shape& s, const Layout& a, const Layout& b);

// Device memory, freed when the last reference goes; counted by the allocator of the Context.
using DeviceBuffer = std::shared_ptr<void>;

struct Context {
  Context(const BackendSettings& settings, int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device = 0;
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  // cuBLAS's entry points, loaded once by the first Context and kept here so that an operator's
  // call does not look them up.
  const CublasLibrary& blas = cublas_library();
  cublasHandle_t cublas = nullptr;
  BackendSettings settings;
  // What activations are stored as (chosen from settings), and the math the libraries may use.
  bool act_nhwc = false, act_bf16 = false;
  cudnnMathType_t conv_math = CUDNN_FMA_MATH;
  cublasComputeType_t gemm_compute = CUBLAS_COMPUTE_32F_PEDANTIC;
  // Convolutions through cuDNN's graph API (default), or the legacy cudnnConvolution* calls
  // (--cudnn-api legacy; also each convolution's fallback when no graph plan builds).
  bool graph_api = true;
  // A training batch norm with a fused ReLU asks cuDNN for CUDNN_BATCHNORM_OPS_BN_ACTIVATION (the
  // ReLU inside its kernels, forward and backward) and falls back to our ReLU kernels where cuDNN
  // does not support it; --cudnn-bn-activation off always uses our kernels.
  bool bn_activation = true;

  // ---- tracked allocator ----
  DeviceBuffer alloc(std::size_t bytes);  // zeroed; throws RuntimeError naming the size when out of memory
  struct Usage {
    std::size_t allocated = 0, peak = 0;
  };
  // Shared with every buffer's deleter, so a buffer may outlive the Context safely.
  std::shared_ptr<Usage> usage = std::make_shared<Usage>();

  // ---- workspace shared by all ops (they run one at a time on one stream) ----
  void* workspace(std::size_t bytes);
  std::size_t workspace_bytes() const { return workspace_size_; }
  // Upper bound an algorithm's workspace may have (a quarter of the free memory at start-up).
  std::size_t workspace_limit = 0;

  // ---- scratch for layout conversions: `slot` separates buffers alive at the same time ----
  void* scratch(int slot, std::size_t bytes);

  // Native layout of an activation this backend produces.
  std::shared_ptr<const void> native(const Shape& s) const { return make_layout(s, act_nhwc, act_bf16); }
  cudnnDataType_t act_type() const { return act_bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT; }

 private:
  DeviceBuffer workspace_;
  std::size_t workspace_size_ = 0;
  DeviceBuffer scratch_[4];
  std::size_t scratch_size_[4] = {};
};
using ContextPtr = std::shared_ptr<Context>;

// cuDNN's vectorized kernels fault ("misaligned address") on parameter pointers that are not
// aligned: a node's parameters sit at arbitrary float offsets in the network's buffer.
inline bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 256 == 0; }

// ---- layout helpers used by the ops ----
// Pointer to t's data in layout `want`: t itself when the bytes match, else a converted copy in
// scratch slot `slot` (valid until the slot is reused).
const void* as_layout(Context& c, const Tensor& t, const Layout& want, int slot);
// Writes `src` (shape s, layout `from`) into tensor dst (same shape, dst's own layout).
void store_as(Context& c, const void* src, const Layout& from, Tensor& dst);
// A 4-D cuDNN descriptor for shape s in layout l.
struct TensorDesc {
  TensorDesc(const Shape& s, const Layout& l);
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t d = nullptr;
};

}  // namespace hpcnn::cuda
