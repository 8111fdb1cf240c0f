// Small CUDA kernels for what neither cuDNN nor cuBLAS covers (kernels.cu): layout/precision
// conversion, elementwise arithmetic, activations, pooling, LRN, dropout, bias, the softmax
// cross-entropy loss and the optimizer updates. All asynchronous on the given stream; `bf16`
// flags say whether a buffer holds __nv_bfloat16 instead of float. Shapes are logical NCHW.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/tensor.hpp"

namespace hpcnn::cuda {

struct Fmt {  // how a buffer stores a logical NCHW tensor
  bool nhwc = false;
  bool bf16 = false;
};

// dst = src, reordered / converted between formats.
void convert(const void* src, Fmt from, void* dst, Fmt to, const Shape& s, cudaStream_t st);
// y = a + b (same format), n elements.
void add(const void* a, const void* b, void* y, std::size_t n, bool bf16, cudaStream_t st);
// y = max(a + b, 0) (same format), n elements: an Add with its ReLU fused.
void add_relu(const void* a, const void* b, void* y, std::size_t n, bool bf16, cudaStream_t st);
// y += x (same format), n elements.
void accumulate(void* y, const void* x, std::size_t n, bool bf16, cudaStream_t st);

// Activations (elementwise, any format). Backward: dx = dy * f'(.) from y.
enum class Act { Relu, Tanh };
void act_forward(Act a, const void* x, void* y, std::size_t n, bool bf16, cudaStream_t st);
void act_backward(Act a, const void* y, const void* dy, void* dx, std::size_t n, bool bf16, cudaStream_t st);

// Pooling on one format f (input and output). Max records the arg-max (input offset) per output.
struct PoolShape {
  Shape in, out;
  int kh, kw, sh, sw, ph, pw;
};
void max_pool_forward(const PoolShape& p, Fmt f, const void* x, void* y, std::int32_t* argmax, cudaStream_t st);
void max_pool_backward(const PoolShape& p, Fmt f, const void* dy, const std::int32_t* argmax, void* dx, cudaStream_t st);
// Average including padding (divides by kh*kw).
void avg_pool_forward(const PoolShape& p, Fmt f, const void* x, void* y, cudaStream_t st);
void avg_pool_backward(const PoolShape& p, Fmt f, const void* dy, void* dx, cudaStream_t st);

// LRN across channels (graph.hpp's formula). `scale` keeps k + alpha/size * sum x^2 for backward.
struct LrnParams {
  int size;
  float alpha, beta, k;
};
void lrn_forward(const LrnParams& l, const Shape& s, Fmt f, const void* x, void* y, float* scale, cudaStream_t st);
void lrn_backward(const LrnParams& l, const Shape& s, Fmt f, const void* x, const void* dy, const float* scale,
                  void* dx, cudaStream_t st);

// Dropout with the engine's counter-based mask (rng.hpp), indexed by the logical NCHW position.
void dropout(const Shape& s, Fmt f, const void* x, void* y, float p, std::uint64_t seed, int node,
             std::uint64_t step, cudaStream_t st);

// Per-channel bias: y[n,c,h,w] += b[c] (b fp32), then max(., 0) with relu; db[c] = sum over
// n,h,w of dy (fp32 out).
void bias_forward(const Shape& s, Fmt f, void* y, const float* b, bool relu, cudaStream_t st);
void bias_backward(const Shape& s, Fmt f, const void* dy, float* db, cudaStream_t st);

// Softmax cross-entropy over logits [n][classes] (format: plain rows, fp32 or bf16).
// Forward writes probabilities (fp32) and result[0] = sum loss, result[1] = correct count,
// result[2] = number of labels out of range. Backward: dx = (p - onehot) / n in dx's dtype.
void softmax_xent_forward(const void* logits, bool bf16, const std::int32_t* labels, int n, int classes,
                          float* prob, double* result, cudaStream_t st);
void softmax_xent_backward(const float* prob, const std::int32_t* labels, int n, int classes, void* dx,
                           bool bf16, cudaStream_t st);

// Optimizers over n fp32 values (backend.hpp's semantics).
// data *= factor: the exchanges' averaging of summed gradients (Backend::scale).
void scale(float* data, std::size_t n, float factor, cudaStream_t st);
void sgd_step(float* w, const float* g, float* v, std::size_t n, float lr, float momentum, float wd,
              cudaStream_t st);
void adam_step(float* w, const float* g, float* m, float* v, std::size_t n, float lr, float b1, float b2,
               float eps, float wd, float bias1, float bias2, cudaStream_t st);

// A batch norm folded into the convolution before it (inference), fp32: for each of o output
// channels with `per` weights, s = bn[c] / sqrt(var[c] + eps) (bn: scale[o] then shift[o]),
// w_out = w * s, b_out = shift + (b - mean) * s (b: the conv's bias, or nullptr for none).
void fold_batch_norm(const float* w, const float* b, int o, std::size_t per, const float* bn, const float* mean,
                     const float* var, float eps, float* w_out, float* b_out, cudaStream_t st);

// Weight reorder for convolutions: canonical fp32 OIHW <-> OHWI (nhwc) and/or bf16.
void weights_to(const float* oihw, void* dst, Fmt to, int o, int i, int kh, int kw, cudaStream_t st);
void weights_from(const void* src, Fmt from, float* oihw, int o, int i, int kh, int kw, cudaStream_t st);
// fp32 -> bf16 copy of n values, and back.
void to_bf16(const float* x, void* y, std::size_t n, cudaStream_t st);
void from_bf16(const void* x, float* y, std::size_t n, cudaStream_t st);

}  // namespace hpcnn::cuda
