// The hand-written CUDA kernels of the cuda backend (see kernels.hpp). Plain grid-stride kernels:
// all of these are memory-bound, so the work is in reading each byte once, coalesced (threads walk
// the buffer in its storage order and compute logical coordinates from it).
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "base/rng.hpp"
#include "kernels/cuda/kernels.hpp"

namespace hpcnn::cuda {

namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256;

int blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535u * 16u ? (b ? b : 1) : 65535u * 16u);
}

template <bool BF>
__device__ __forceinline__ float ld(const void* p, std::size_t i) {
  if constexpr (BF) return __bfloat162float(static_cast<const bf16*>(p)[i]);
  else return static_cast<const float*>(p)[i];
}
template <bool BF>
__device__ __forceinline__ void st(void* p, std::size_t i, float v) {
  if constexpr (BF) static_cast<bf16*>(p)[i] = __float2bfloat16(v);
  else static_cast<float*>(p)[i] = v;
}

struct Dims {
  int n, c, h, w;
};
__host__ Dims dims(const Shape& s) { return {s.n, s.c, s.h, s.w}; }

// Storage offset of logical (n, c, y, x).
__device__ __forceinline__ std::size_t offset(const Dims& d, bool nhwc, int n, int c, int y, int x) {
  return nhwc ? ((std::size_t(n) * d.h + y) * d.w + x) * d.c + c : ((std::size_t(n) * d.c + c) * d.h + y) * d.w + x;
}
// Logical coordinates of storage index i.
__device__ __forceinline__ void coords(const Dims& d, bool nhwc, std::size_t i, int& n, int& c, int& y, int& x) {
  if (nhwc) {
    c = int(i % d.c); i /= d.c;
    x = int(i % d.w); i /= d.w;
    y = int(i % d.h); n = int(i / d.h);
  } else {
    x = int(i % d.w); i /= d.w;
    y = int(i % d.h); i /= d.h;
    c = int(i % d.c); n = int(i / d.c);
  }
}

#define GRID_LOOP(i, n) \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); i += std::size_t(blockDim.x) * gridDim.x)

// Dispatch a kernel template on one or two bf16 flags.
#define DISPATCH1(flag, K, ...) ((flag) ? K<true> __VA_ARGS__ : K<false> __VA_ARGS__)

// ---------------------------------------------------------------- conversion and arithmetic
template <bool SB, bool DB>
__global__ void convert_k(const void* src, bool snhwc, void* dst, bool dnhwc, Dims d, std::size_t count) {
  GRID_LOOP(i, count) {
    int n, c, y, x;
    coords(d, dnhwc, i, n, c, y, x);
    st<DB>(dst, i, ld<SB>(src, offset(d, snhwc, n, c, y, x)));
  }
}

template <bool BF, bool RELU>
__global__ void add_k(const void* a, const void* b, void* y, std::size_t n) {
  GRID_LOOP(i, n) {
    const float v = ld<BF>(a, i) + ld<BF>(b, i);
    st<BF>(y, i, RELU ? fmaxf(v, 0.0f) : v);
  }
}

// Vectorized forms of add and ReLU for the common case (16-byte aligned buffers, n a multiple of
// the vector width): 16-byte loads and stores reach close to the memory bandwidth, scalar ones do
// not. A vector holds 4 floats or 8 BF16 values.
template <bool BF>
struct Vec {
  static constexpr int width = BF ? 8 : 4;
};

template <bool BF>
__device__ __forceinline__ void unpack(const uint4& v, float* f) {
  if constexpr (BF) {
    const bf16* h = reinterpret_cast<const bf16*>(&v);
    for (int k = 0; k < 8; ++k) f[k] = __bfloat162float(h[k]);
  } else {
    const float* p = reinterpret_cast<const float*>(&v);
    for (int k = 0; k < 4; ++k) f[k] = p[k];
  }
}
template <bool BF>
__device__ __forceinline__ uint4 pack(const float* f) {
  uint4 v;
  if constexpr (BF) {
    bf16* h = reinterpret_cast<bf16*>(&v);
    for (int k = 0; k < 8; ++k) h[k] = __float2bfloat16(f[k]);
  } else {
    float* p = reinterpret_cast<float*>(&v);
    for (int k = 0; k < 4; ++k) p[k] = f[k];
  }
  return v;
}

// op 0: y = a + b; op 1: y = relu(a); op 2: y = a > 0 ? b : 0 (ReLU backward from the output a);
// op 3: y = relu(a + b) (an Add with its ReLU fused: one pass instead of two).
template <bool BF>
__global__ void vec_k(int op, const uint4* a, const uint4* b, uint4* y, std::size_t nvec) {
  constexpr int W = Vec<BF>::width;
  GRID_LOOP(i, nvec) {
    float fa[W], fb[W], out[W];
    unpack<BF>(a[i], fa);
    if (op != 1) unpack<BF>(b[i], fb);
    for (int k = 0; k < W; ++k)
      out[k] = op == 0   ? fa[k] + fb[k]
               : op == 1 ? fmaxf(fa[k], 0.0f)
               : op == 2 ? (fa[k] > 0.0f ? fb[k] : 0.0f)
                         : fmaxf(fa[k] + fb[k], 0.0f);
    y[i] = pack<BF>(out);
  }
}

bool vectorizable(std::size_t n, bool bf, std::initializer_list<const void*> ptrs) {
  if (n % (bf ? 8 : 4) != 0) return false;
  for (const void* p : ptrs)
    if (p && reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  return true;
}

template <bool BF>
__global__ void act_fwd_k(int kind, const void* x, void* y, std::size_t n) {
  GRID_LOOP(i, n) {
    const float v = ld<BF>(x, i);
    st<BF>(y, i, kind == 0 ? fmaxf(v, 0.0f) : tanhf(v));
  }
}

template <bool BF>
__global__ void act_bwd_k(int kind, const void* y, const void* dy, void* dx, std::size_t n) {
  GRID_LOOP(i, n) {
    const float v = ld<BF>(y, i), g = ld<BF>(dy, i);
    st<BF>(dx, i, kind == 0 ? (v > 0.0f ? g : 0.0f) : g * (1.0f - v * v));
  }
}

// ---------------------------------------------------------------- pooling
struct PoolK {
  Dims in, out;
  int kh, kw, sh, sw, ph, pw;
};
__host__ PoolK pool_k(const PoolShape& p) { return {dims(p.in), dims(p.out), p.kh, p.kw, p.sh, p.sw, p.ph, p.pw}; }

template <bool BF>
__global__ void max_fwd_k(PoolK p, bool nhwc, const void* x, void* y, std::int32_t* argmax, std::size_t count) {
  GRID_LOOP(i, count) {
    int n, c, oy, ox;
    coords(p.out, nhwc, i, n, c, oy, ox);
    float best = -INFINITY;
    std::int32_t where = -1;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int iy = oy * p.sh - p.ph + ky;
      if (iy < 0 || iy >= p.in.h) continue;
      for (int kx = 0; kx < p.kw; ++kx) {
        const int ix = ox * p.sw - p.pw + kx;
        if (ix < 0 || ix >= p.in.w) continue;
        const std::size_t o = offset(p.in, nhwc, n, c, iy, ix);
        const float v = ld<BF>(x, o);
        if (v > best || where < 0) {  // the first maximum in window order, as the reference
          best = v;
          where = static_cast<std::int32_t>(o - offset(p.in, nhwc, n, c, 0, 0));
        }
      }
    }
    st<BF>(y, i, where < 0 ? 0.0f : best);
    if (argmax) argmax[i] = where;
  }
}

// Range of outputs whose window covers input coordinate v (gather form of the backward pass).
__device__ __forceinline__ void covering(int v, int pad, int k, int s, int out, int& lo, int& hi) {
  const int t = v + pad;
  lo = t < k ? 0 : (t - k) / s + 1;
  hi = min(t / s, out - 1);
}

template <bool BF>
__global__ void max_bwd_k(PoolK p, bool nhwc, const void* dy, const std::int32_t* argmax, void* dx, std::size_t count) {
  GRID_LOOP(i, count) {
    int n, c, iy, ix;
    coords(p.in, nhwc, i, n, c, iy, ix);
    const std::int32_t me = static_cast<std::int32_t>(offset(p.in, nhwc, n, c, iy, ix) - offset(p.in, nhwc, n, c, 0, 0));
    int ylo, yhi, xlo, xhi;
    covering(iy, p.ph, p.kh, p.sh, p.out.h, ylo, yhi);
    covering(ix, p.pw, p.kw, p.sw, p.out.w, xlo, xhi);
    float g = 0.0f;
    for (int oy = ylo; oy <= yhi; ++oy)
      for (int ox = xlo; ox <= xhi; ++ox) {
        const std::size_t o = offset(p.out, nhwc, n, c, oy, ox);
        if (argmax[o] == me) g += ld<BF>(dy, o);
      }
    st<BF>(dx, i, g);
  }
}

template <bool BF>
__global__ void avg_fwd_k(PoolK p, bool nhwc, const void* x, void* y, std::size_t count) {
  const float inv = 1.0f / float(p.kh * p.kw);
  GRID_LOOP(i, count) {
    int n, c, oy, ox;
    coords(p.out, nhwc, i, n, c, oy, ox);
    float sum = 0.0f;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int iy = oy * p.sh - p.ph + ky;
      if (iy < 0 || iy >= p.in.h) continue;
      for (int kx = 0; kx < p.kw; ++kx) {
        const int ix = ox * p.sw - p.pw + kx;
        if (ix >= 0 && ix < p.in.w) sum += ld<BF>(x, offset(p.in, nhwc, n, c, iy, ix));
      }
    }
    st<BF>(y, i, sum * inv);
  }
}

template <bool BF>
__global__ void avg_bwd_k(PoolK p, bool nhwc, const void* dy, void* dx, std::size_t count) {
  const float inv = 1.0f / float(p.kh * p.kw);
  GRID_LOOP(i, count) {
    int n, c, iy, ix;
    coords(p.in, nhwc, i, n, c, iy, ix);
    int ylo, yhi, xlo, xhi;
    covering(iy, p.ph, p.kh, p.sh, p.out.h, ylo, yhi);
    covering(ix, p.pw, p.kw, p.sw, p.out.w, xlo, xhi);
    float g = 0.0f;
    for (int oy = ylo; oy <= yhi; ++oy)
      for (int ox = xlo; ox <= xhi; ++ox) g += ld<BF>(dy, offset(p.out, nhwc, n, c, oy, ox));
    st<BF>(dx, i, g * inv);
  }
}

// ---------------------------------------------------------------- LRN
template <bool BF>
__global__ void lrn_fwd_k(LrnParams l, Dims d, bool nhwc, const void* x, void* y, float* scale, std::size_t count) {
  const int half = l.size / 2;
  GRID_LOOP(i, count) {
    int n, c, yy, xx;
    coords(d, nhwc, i, n, c, yy, xx);
    float sum = 0.0f;
    for (int k = max(0, c - half); k <= min(d.c - 1, c + half); ++k) {
      const float v = ld<BF>(x, offset(d, nhwc, n, k, yy, xx));
      sum += v * v;
    }
    const float s = l.k + l.alpha / float(l.size) * sum;
    scale[i] = s;
    st<BF>(y, i, ld<BF>(x, i) * powf(s, -l.beta));
  }
}

template <bool BF>
__global__ void lrn_bwd_k(LrnParams l, Dims d, bool nhwc, const void* x, const void* dy, const float* scale,
                          void* dx, std::size_t count) {
  const int half = l.size / 2;
  const float f = 2.0f * l.alpha * l.beta / float(l.size);
  GRID_LOOP(i, count) {
    int n, c, yy, xx;
    coords(d, nhwc, i, n, c, yy, xx);
    float acc = 0.0f;
    for (int k = max(0, c - half); k <= min(d.c - 1, c + half); ++k) {
      const std::size_t o = offset(d, nhwc, n, k, yy, xx);
      acc += ld<BF>(dy, o) * ld<BF>(x, o) * powf(scale[o], -l.beta - 1.0f);
    }
    st<BF>(dx, i, ld<BF>(dy, i) * powf(scale[i], -l.beta) - f * ld<BF>(x, i) * acc);
  }
}

// ---------------------------------------------------------------- dropout and bias
template <bool BF>
__global__ void dropout_k(Dims d, bool nhwc, const void* x, void* y, float p, std::uint64_t seed, int node,
                          std::uint64_t step, std::size_t count) {
  const float scale = 1.0f / (1.0f - p);
  GRID_LOOP(i, count) {
    int n, c, yy, xx;
    coords(d, nhwc, i, n, c, yy, xx);
    const std::uint64_t logical = ((std::uint64_t(n) * d.c + c) * d.h + yy) * d.w + xx;
    st<BF>(y, i, dropout_keep(seed, node, step, logical, p) ? ld<BF>(x, i) * scale : 0.0f);
  }
}

// The channel of storage index i is (i / inner) % c: inner = 1 in NHWC, H*W in NCHW (one division
// pair per element instead of coords()'s four: this pass runs after every biased or folded conv).
template <bool BF>
__global__ void bias_fwd_k(std::size_t inner, int c, void* y, const float* b, bool relu, std::size_t count) {
  GRID_LOOP(i, count) {
    const float v = ld<BF>(y, i) + b[(i / inner) % std::size_t(c)];
    st<BF>(y, i, relu ? fmaxf(v, 0.0f) : v);
  }
}

// Vectorized form (16-byte vectors; a vector never straddles two channels' blocks: NHWC needs c,
// NCHW inner a multiple of the vector width).
template <bool BF>
__global__ void bias_vec_k(uint4* y, const float* b, std::size_t inner, int c, bool nhwc, bool relu, std::size_t nvec) {
  constexpr int W = Vec<BF>::width;
  GRID_LOOP(v, nvec) {
    float f[W];
    unpack<BF>(y[v], f);
    const std::size_t base = v * W;
    if (nhwc) {
      const int c0 = int(base % std::size_t(c));
      for (int k = 0; k < W; ++k) f[k] += b[c0 + k];
    } else {
      const float bc = b[(base / inner) % std::size_t(c)];
      for (int k = 0; k < W; ++k) f[k] += bc;
    }
    if (relu)
      for (int k = 0; k < W; ++k) f[k] = fmaxf(f[k], 0.0f);
    y[v] = pack<BF>(f);
  }
}

__global__ void fold_bn_k(const float* w, const float* b, int o, std::size_t per, const float* bn, const float* mean,
                          const float* var, float eps, float* w_out, float* b_out) {
  GRID_LOOP(i, std::size_t(o) * per) {
    const int c = static_cast<int>(i / per);
    const float s = bn[c] * rsqrtf(var[c] + eps);
    w_out[i] = w[i] * s;
    if (i % per == 0) b_out[c] = bn[o + c] + ((b ? b[c] : 0.0f) - mean[c]) * s;
  }
}

// One block per channel; threads stride over the channel's n*h*w values.
template <bool BF>
__global__ void bias_bwd_k(Dims d, bool nhwc, const void* dy, float* db) {
  const int c = blockIdx.x;
  const std::size_t hw = std::size_t(d.h) * d.w, m = hw * d.n;
  float sum = 0.0f;
  for (std::size_t k = threadIdx.x; k < m; k += blockDim.x) {
    const int n = int(k / hw);
    const std::size_t r = k % hw;
    sum += ld<BF>(dy, offset(d, nhwc, n, c, int(r / d.w), int(r % d.w)));
  }
  __shared__ float part[kThreads];
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[c] = part[0];
}

// ---------------------------------------------------------------- loss
// One block per sample: arg-max (first), log-sum-exp, probabilities, loss.
template <bool BF>
__global__ void xent_fwd_k(const void* logits, const std::int32_t* labels, int classes, float* prob, double* result) {
  const int n = blockIdx.x;
  const std::size_t row = std::size_t(n) * classes;
  __shared__ float sval[kThreads];
  __shared__ int sidx[kThreads];
  __shared__ double ssum[kThreads];
  float best = -INFINITY;
  int arg = classes;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) {
    const float v = ld<BF>(logits, row + c);
    if (v > best || (v == best && c < arg)) {
      best = v;
      arg = c;
    }
  }
  sval[threadIdx.x] = best;
  sidx[threadIdx.x] = arg;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      const float o = sval[threadIdx.x + s];
      const int oi = sidx[threadIdx.x + s];
      if (o > sval[threadIdx.x] || (o == sval[threadIdx.x] && oi < sidx[threadIdx.x])) {
        sval[threadIdx.x] = o;
        sidx[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  const float zmax = sval[0];
  const int amax = sidx[0];
  double sum = 0.0;
  for (int c = threadIdx.x; c < classes; c += blockDim.x) sum += exp(double(ld<BF>(logits, row + c)) - zmax);
  ssum[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) ssum[threadIdx.x] += ssum[threadIdx.x + s];
    __syncthreads();
  }
  const double lse = zmax + log(ssum[0]);
  for (int c = threadIdx.x; c < classes; c += blockDim.x)
    prob[row + c] = float(exp(double(ld<BF>(logits, row + c)) - lse));
  if (threadIdx.x == 0) {
    const int label = labels[n];
    if (label < 0 || label >= classes) {
      atomicAdd(&result[2], 1.0);
    } else {
      atomicAdd(&result[0], lse - double(ld<BF>(logits, row + label)));
      if (amax == label) atomicAdd(&result[1], 1.0);
    }
  }
}

template <bool BF>
__global__ void xent_bwd_k(const float* prob, const std::int32_t* labels, int n, int classes, void* dx) {
  const std::size_t count = std::size_t(n) * classes;
  GRID_LOOP(i, count) {
    const int s = int(i / classes), c = int(i % classes);
    st<BF>(dx, i, (prob[i] - (c == labels[s] ? 1.0f : 0.0f)) / float(n));
  }
}

// ---------------------------------------------------------------- optimizers
__global__ void scale_k(float* data, std::size_t n, float factor) {
  GRID_LOOP(i, n) data[i] *= factor;
}

__global__ void sgd_k(float* w, const float* g, float* v, std::size_t n, float lr, float mom, float wd) {
  GRID_LOOP(i, n) {
    const float gi = g[i] + wd * w[i];
    const float vi = mom * v[i] + gi;
    v[i] = vi;
    w[i] -= lr * vi;
  }
}

__global__ void adam_k(float* w, const float* g, float* m, float* v, std::size_t n, float step_size,
                       float b1, float b2, float eps, float wd, float inv_sqrt_bc2) {
  GRID_LOOP(i, n) {
    const float gi = g[i] + wd * w[i];
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] -= step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
  }
}

// ---------------------------------------------------------------- weights
// Filters are 4-D tensors too: O as n, I as c, KH x KW as h x w (OHWI is their NHWC).
template <bool DB>
__global__ void weights_to_k(const float* src, void* dst, bool nhwc, Dims d, std::size_t count) {
  GRID_LOOP(i, count) {
    int o, c, y, x;
    coords(d, nhwc, i, o, c, y, x);
    st<DB>(dst, i, src[offset(d, false, o, c, y, x)]);
  }
}
template <bool SB>
__global__ void weights_from_k(const void* src, bool nhwc, float* dst, Dims d, std::size_t count) {
  GRID_LOOP(i, count) {
    int o, c, y, x;
    coords(d, false, i, o, c, y, x);
    dst[i] = ld<SB>(src, offset(d, nhwc, o, c, y, x));
  }
}

__global__ void to_bf16_k(const float* x, bf16* y, std::size_t n) {
  GRID_LOOP(i, n) y[i] = __float2bfloat16(x[i]);
}
__global__ void from_bf16_k(const bf16* x, float* y, std::size_t n) {
  GRID_LOOP(i, n) y[i] = __bfloat162float(x[i]);
}

}  // namespace

#define LAUNCH(count) <<<blocks_for(count), kThreads, 0, st>>>

void convert(const void* src, Fmt from, void* dst, Fmt to, const Shape& s, cudaStream_t st) {
  const std::size_t n = s.count();
  const Dims d = dims(s);
  if (from.bf16) {
    if (to.bf16) convert_k<true, true> LAUNCH(n)(src, from.nhwc, dst, to.nhwc, d, n);
    else convert_k<true, false> LAUNCH(n)(src, from.nhwc, dst, to.nhwc, d, n);
  } else {
    if (to.bf16) convert_k<false, true> LAUNCH(n)(src, from.nhwc, dst, to.nhwc, d, n);
    else convert_k<false, false> LAUNCH(n)(src, from.nhwc, dst, to.nhwc, d, n);
  }
}

// Launches vec_k when the buffers allow it; returns false otherwise.
bool vec_launch(int op, const void* a, const void* b, void* y, std::size_t n, bool bf, cudaStream_t st) {
  if (!vectorizable(n, bf, {a, b, y})) return false;
  const std::size_t nvec = n / (bf ? 8 : 4);
  const auto* va = static_cast<const uint4*>(a);
  const auto* vb = static_cast<const uint4*>(b);
  auto* vy = static_cast<uint4*>(y);
  DISPATCH1(bf, vec_k, LAUNCH(nvec)(op, va, vb, vy, nvec));
  return true;
}

void add(const void* a, const void* b, void* y, std::size_t n, bool bf, cudaStream_t st) {
  if (vec_launch(0, a, b, y, n, bf, st)) return;
  if (bf) add_k<true, false> LAUNCH(n)(a, b, y, n);
  else add_k<false, false> LAUNCH(n)(a, b, y, n);
}

void add_relu(const void* a, const void* b, void* y, std::size_t n, bool bf, cudaStream_t st) {
  if (vec_launch(3, a, b, y, n, bf, st)) return;
  if (bf) add_k<true, true> LAUNCH(n)(a, b, y, n);
  else add_k<false, true> LAUNCH(n)(a, b, y, n);
}

void accumulate(void* y, const void* x, std::size_t n, bool bf, cudaStream_t st) { add(y, x, y, n, bf, st); }

void act_forward(Act a, const void* x, void* y, std::size_t n, bool bf, cudaStream_t st) {
  if (a == Act::Relu && vec_launch(1, x, nullptr, y, n, bf, st)) return;
  DISPATCH1(bf, act_fwd_k, LAUNCH(n)(a == Act::Relu ? 0 : 1, x, y, n));
}
void act_backward(Act a, const void* y, const void* dy, void* dx, std::size_t n, bool bf, cudaStream_t st) {
  if (a == Act::Relu && vec_launch(2, y, dy, dx, n, bf, st)) return;
  DISPATCH1(bf, act_bwd_k, LAUNCH(n)(a == Act::Relu ? 0 : 1, y, dy, dx, n));
}

void max_pool_forward(const PoolShape& p, Fmt f, const void* x, void* y, std::int32_t* argmax, cudaStream_t st) {
  const std::size_t n = p.out.count();
  DISPATCH1(f.bf16, max_fwd_k, LAUNCH(n)(pool_k(p), f.nhwc, x, y, argmax, n));
}
void max_pool_backward(const PoolShape& p, Fmt f, const void* dy, const std::int32_t* argmax, void* dx, cudaStream_t st) {
  const std::size_t n = p.in.count();
  DISPATCH1(f.bf16, max_bwd_k, LAUNCH(n)(pool_k(p), f.nhwc, dy, argmax, dx, n));
}
void avg_pool_forward(const PoolShape& p, Fmt f, const void* x, void* y, cudaStream_t st) {
  const std::size_t n = p.out.count();
  DISPATCH1(f.bf16, avg_fwd_k, LAUNCH(n)(pool_k(p), f.nhwc, x, y, n));
}
void avg_pool_backward(const PoolShape& p, Fmt f, const void* dy, void* dx, cudaStream_t st) {
  const std::size_t n = p.in.count();
  DISPATCH1(f.bf16, avg_bwd_k, LAUNCH(n)(pool_k(p), f.nhwc, dy, dx, n));
}

void lrn_forward(const LrnParams& l, const Shape& s, Fmt f, const void* x, void* y, float* scale, cudaStream_t st) {
  const std::size_t n = s.count();
  DISPATCH1(f.bf16, lrn_fwd_k, LAUNCH(n)(l, dims(s), f.nhwc, x, y, scale, n));
}
void lrn_backward(const LrnParams& l, const Shape& s, Fmt f, const void* x, const void* dy, const float* scale,
                  void* dx, cudaStream_t st) {
  const std::size_t n = s.count();
  DISPATCH1(f.bf16, lrn_bwd_k, LAUNCH(n)(l, dims(s), f.nhwc, x, dy, scale, dx, n));
}

void dropout(const Shape& s, Fmt f, const void* x, void* y, float p, std::uint64_t seed, int node,
             std::uint64_t step, cudaStream_t st) {
  const std::size_t n = s.count();
  DISPATCH1(f.bf16, dropout_k, LAUNCH(n)(dims(s), f.nhwc, x, y, p, seed, node, step, n));
}

void bias_forward(const Shape& s, Fmt f, void* y, const float* b, bool relu, cudaStream_t st) {
  const std::size_t n = s.count();
  const std::size_t inner = f.nhwc ? 1 : std::size_t(s.h) * s.w;
  const std::size_t width = f.bf16 ? 8 : 4;
  if (vectorizable(n, f.bf16, {y}) && (f.nhwc ? std::size_t(s.c) % width == 0 : inner % width == 0)) {
    const std::size_t nvec = n / width;
    DISPATCH1(f.bf16, bias_vec_k, LAUNCH(nvec)(static_cast<uint4*>(y), b, inner, s.c, f.nhwc, relu, nvec));
    return;
  }
  DISPATCH1(f.bf16, bias_fwd_k, LAUNCH(n)(inner, s.c, y, b, relu, n));
}

void fold_batch_norm(const float* w, const float* b, int o, std::size_t per, const float* bn, const float* mean,
                     const float* var, float eps, float* w_out, float* b_out, cudaStream_t st) {
  const std::size_t n = std::size_t(o) * per;
  fold_bn_k LAUNCH(n)(w, b, o, per, bn, mean, var, eps, w_out, b_out);
}
void bias_backward(const Shape& s, Fmt f, const void* dy, float* db, cudaStream_t st) {
  DISPATCH1(f.bf16, bias_bwd_k, <<<s.c, kThreads, 0, st>>>(dims(s), f.nhwc, dy, db));
}

void softmax_xent_forward(const void* logits, bool bf, const std::int32_t* labels, int n, int classes,
                          float* prob, double* result, cudaStream_t st) {
  cudaMemsetAsync(result, 0, 3 * sizeof(double), st);
  DISPATCH1(bf, xent_fwd_k, <<<n, kThreads, 0, st>>>(logits, labels, classes, prob, result));
}
void softmax_xent_backward(const float* prob, const std::int32_t* labels, int n, int classes, void* dx,
                           bool bf, cudaStream_t st) {
  const std::size_t count = std::size_t(n) * classes;
  DISPATCH1(bf, xent_bwd_k, LAUNCH(count)(prob, labels, n, classes, dx));
}

void scale(float* data, std::size_t n, float factor, cudaStream_t st) {
  if (n > 0) scale_k LAUNCH(n)(data, n, factor);
}

void sgd_step(float* w, const float* g, float* v, std::size_t n, float lr, float momentum, float wd,
              cudaStream_t st) {
  sgd_k LAUNCH(n)(w, g, v, n, lr, momentum, wd);
}
void adam_step(float* w, const float* g, float* m, float* v, std::size_t n, float lr, float b1, float b2,
               float eps, float wd, float bias1, float bias2, cudaStream_t st) {
  adam_k LAUNCH(n)(w, g, m, v, n, lr / bias1, b1, b2, eps, wd, 1.0f / std::sqrt(bias2));
}

void weights_to(const float* oihw, void* dst, Fmt to, int o, int i, int kh, int kw, cudaStream_t st) {
  const Dims d{o, i, kh, kw};
  const std::size_t n = std::size_t(o) * i * kh * kw;
  DISPATCH1(to.bf16, weights_to_k, LAUNCH(n)(oihw, dst, to.nhwc, d, n));
}
void weights_from(const void* src, Fmt from, float* oihw, int o, int i, int kh, int kw, cudaStream_t st) {
  const Dims d{o, i, kh, kw};
  const std::size_t n = std::size_t(o) * i * kh * kw;
  DISPATCH1(from.bf16, weights_from_k, LAUNCH(n)(src, from.nhwc, oihw, d, n));
}
void to_bf16(const float* x, void* y, std::size_t n, cudaStream_t st) {
  to_bf16_k LAUNCH(n)(x, static_cast<bf16*>(y), n);
}
void from_bf16(const void* x, float* y, std::size_t n, cudaStream_t st) {
  from_bf16_k LAUNCH(n)(static_cast<const bf16*>(x), y, n);
}

}  // namespace hpcnn::cuda
