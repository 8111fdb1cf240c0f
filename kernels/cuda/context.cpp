#include "kernels/cuda/context.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "base/errors.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/kernels.hpp"

namespace hpcnn::cuda {

void check_cudnn(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  std::string msg = "cuDNN: ";
  msg.append(what).append(": ").append(cudnnGetErrorString(s));
  throw RuntimeError(msg);
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::string msg = "cuBLAS: ";
  msg.append(what).append(": ").append(cublas_library().status_string(s));
  throw RuntimeError(msg);
}

namespace {
const Layout kLayouts[4] = {{false, false}, {false, true}, {true, false}, {true, true}};
}

Layout layout_of(const Tensor& t) {
  return t.layout ? *static_cast<const Layout*>(t.layout.get()) : Layout{};
}

std::shared_ptr<const void> make_layout(const Shape& s, bool nhwc, bool bf16) {
  if (s.h == 1 && s.w == 1) nhwc = false;
  if (!nhwc && !bf16) return nullptr;  // plain
  // Static objects: a shared_ptr that owns nothing (aliasing constructor).
  return std::shared_ptr<const void>(std::shared_ptr<const void>(), &kLayouts[(nhwc ? 2 : 0) + (bf16 ? 1 : 0)]);
}

bool same_memory(const Shape& s, const Layout& a, const Layout& b) {
  if (a.bf16 != b.bf16) return false;
  return a.nhwc == b.nhwc || (s.h == 1 && s.w == 1) || s.c == 1;
}

Context::Context(const BackendSettings& s, int dev) : device(dev), settings(s) {
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cudnn(cudnnCreate(&cudnn), "cudnnCreate");
  check_cudnn(cudnnSetStream(cudnn, stream), "cudnnSetStream");
  check_cublas(blas.create(&cublas), "cublasCreate");
  check_cublas(blas.set_stream(cublas, stream), "cublasSetStream");
  const bool tensor_cores = s.precision != Precision::Fp32;
  act_bf16 = s.precision == Precision::Bf16;
  act_nhwc = s.layout == "nhwc" || (s.layout == "auto" && tensor_cores);
  conv_math = tensor_cores ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  gemm_compute = s.precision == Precision::Fp32 ? CUBLAS_COMPUTE_32F_PEDANTIC
                 : s.precision == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F;
  graph_api = s.cudnn_api != "legacy";
  bn_activation = s.cudnn_bn_activation;
  std::size_t free_b = 0, total = 0;
  check(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo");
  // A quarter of the free memory, at most 1 GiB: every algorithm cuDNN ranks first for ResNet
  // layers fits, and the peak-memory figure stays close to what the model itself needs.
  workspace_limit = std::min<std::size_t>(free_b / 4, std::size_t(1) << 30);
}

Context::~Context() {
  if (stream) cudaStreamSynchronize(stream);
  workspace_.reset();
  for (auto& b : scratch_) b.reset();
  if (cublas) blas.destroy(cublas);
  if (cudnn) cudnnDestroy(cudnn);
  if (stream) cudaStreamDestroy(stream);
}

DeviceBuffer Context::alloc(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 256);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw RuntimeError("cuda: out of device memory allocating " + std::to_string(bytes >> 20) + " MiB (" +
                       std::to_string(usage->allocated >> 20) + " MiB in use by hpcnn): " + cudaGetErrorString(e));
  }
  check(cudaMemsetAsync(p, 0, bytes, stream), "cudaMemsetAsync");
  usage->allocated += bytes;
  usage->peak = std::max(usage->peak, usage->allocated);
  // cudaFree waits for the device, so a buffer is never freed under a running kernel.
  return DeviceBuffer(p, [u = usage, bytes](void* q) {
    cudaFree(q);
    u->allocated -= bytes;
  });
}

void* Context::workspace(std::size_t bytes) {
  if (bytes > workspace_size_) {
    workspace_.reset();
    workspace_ = alloc(bytes);
    workspace_size_ = bytes;
  }
  return workspace_.get();
}

void* Context::scratch(int slot, std::size_t bytes) {
  if (bytes > scratch_size_[slot]) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // the old buffer may be in use
    scratch_[slot].reset();
    scratch_[slot] = alloc(bytes);
    scratch_size_[slot] = bytes;
  }
  return scratch_[slot].get();
}

const void* as_layout(Context& c, const Tensor& t, const Layout& want, int slot) {
  const Layout have = layout_of(t);
  if (same_memory(t.shape, have, want)) return t.data;
  void* out = c.scratch(slot, t.shape.count() * elem_bytes(want));
  convert(t.data, {have.nhwc, have.bf16}, out, {want.nhwc, want.bf16}, t.shape, c.stream);
  return out;
}

void store_as(Context& c, const void* src, const Layout& from, Tensor& dst) {
  const Layout to = layout_of(dst);
  if (same_memory(dst.shape, from, to)) {
    if (src != dst.data)
      check(cudaMemcpyAsync(dst.data, src, dst.shape.count() * elem_bytes(to), cudaMemcpyDeviceToDevice, c.stream),
            "cudaMemcpyAsync");
    return;
  }
  convert(src, {from.nhwc, from.bf16}, dst.data, {to.nhwc, to.bf16}, dst.shape, c.stream);
}

TensorDesc::TensorDesc(const Shape& s, const Layout& l) {
  check_cudnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
  check_cudnn(cudnnSetTensor4dDescriptor(d, l.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                         l.bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w),
              "cudnnSetTensor4dDescriptor");
}

TensorDesc::~TensorDesc() {
  if (d) cudnnDestroyTensorDescriptor(d);
}

}  // namespace hpcnn::cuda
