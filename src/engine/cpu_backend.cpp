// Shared base for host-memory backends: aligned memory, plain-layout conversions, optimizer loops
// and a steady-clock timer (see cpu_backend.hpp).
#include "engine/cpu_backend.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

// `omp simd` only where OpenMP is on (configure adds -fopenmp), so plain builds stay warning-free.
#ifdef _OPENMP
#define HPCNN_OMP_SIMD _Pragma("omp simd")
#else
#define HPCNN_OMP_SIMD
#endif

namespace hpcnn {

namespace {

constexpr std::size_t kAlign = 64;

void require_plain(const Tensor& t, const char* what) {
  if (t.layout)
    throw std::logic_error(std::string("CpuBackend::") + what +
                           ": non-plain layout reached the plain base class (the backend must override)");
}

class SteadyTimer final : public Timer {
 public:
  void start() override { t0_ = Clock::now(); }
  void stop() override { t1_ = Clock::now(); }
  double seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point t0_{}, t1_{};
};

}  // namespace

std::shared_ptr<void> aligned_host_alloc(std::size_t bytes) {
  // aligned_alloc needs a size that is a multiple of the alignment (and we never return null).
  const std::size_t size = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, size);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, size);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

void CpuBackend::allocate(Tensor& t) {
  t.bytes = storage_bytes(t);
  t.storage = alloc_bytes(t.bytes);
  t.data = static_cast<float*>(t.storage.get());
}

std::size_t CpuBackend::storage_bytes(const Tensor& t) const {
  require_plain(t, "storage_bytes");
  return t.shape.count() * sizeof(float);
}

std::shared_ptr<void> CpuBackend::alloc_bytes(std::size_t bytes) { return aligned_host_alloc(bytes); }

std::shared_ptr<float> CpuBackend::alloc_floats(std::size_t count) {
  std::shared_ptr<void> base = aligned_host_alloc(count * sizeof(float));
  return std::shared_ptr<float>(base, static_cast<float*>(base.get()));
}

std::shared_ptr<std::int32_t> CpuBackend::alloc_ints(std::size_t count) {
  std::shared_ptr<void> base = aligned_host_alloc(count * sizeof(std::int32_t));
  return std::shared_ptr<std::int32_t>(base, static_cast<std::int32_t*>(base.get()));
}

void CpuBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, host_src, bytes);
}

void CpuBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(host_dst, src, bytes);
}

void CpuBackend::write_plain(Tensor& t, const float* host_nchw) {
  require_plain(t, "write_plain");
  const std::size_t n = t.shape.count();
  if (n) std::memcpy(t.data, host_nchw, n * sizeof(float));
}

void CpuBackend::read_plain(const Tensor& t, float* host_nchw) {
  require_plain(t, "read_plain");
  const std::size_t n = t.shape.count();
  if (n) std::memcpy(host_nchw, t.data, n * sizeof(float));
}

void CpuBackend::set_zero(Tensor& t) {
  require_plain(t, "set_zero");
  const std::size_t n = t.shape.count();
  if (n) std::memset(t.data, 0, n * sizeof(float));
}

void CpuBackend::accumulate(Tensor& dst, const Tensor& src) {
  require_plain(dst, "accumulate");
  require_plain(src, "accumulate");
  if (!(dst.shape == src.shape))
    throw std::logic_error("CpuBackend::accumulate: shapes " + dst.shape.str() + " and " +
                           src.shape.str() + " differ");
  float* __restrict d = dst.data;
  const float* __restrict s = src.data;
  const std::size_t n = dst.shape.count();
HPCNN_OMP_SIMD
  for (std::size_t i = 0; i < n; ++i) d[i] += s[i];
}

// PyTorch SGD (dampening 0, no Nesterov): g += wd * w; v = momentum * v + g; w -= lr * v.
// With v starting at 0 the first step gives v = g, as PyTorch's buffer initialization.
void CpuBackend::sgd_step(float* w, const float* g, float* velocity, std::size_t n,
                          const SgdParams& p) {
  const float lr = p.lr, mom = p.momentum, wd = p.weight_decay;
HPCNN_OMP_SIMD
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * w[i];
    const float vi = mom * velocity[i] + gi;
    velocity[i] = vi;
    w[i] -= lr * vi;
  }
}

// PyTorch Adam (L2 weight decay, no amsgrad):
//   g += wd * w; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
//   w -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
void CpuBackend::adam_step(float* w, const float* g, float* m, float* v, std::size_t n,
                           const AdamParams& p, std::int64_t t) {
  if (t < 1) throw std::logic_error("CpuBackend::adam_step: step t must be >= 1");
  const double bc1 = 1.0 - std::pow(static_cast<double>(p.beta1), static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(static_cast<double>(p.beta2), static_cast<double>(t));
  const float step_size = static_cast<float>(p.lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float b1 = p.beta1, b2 = p.beta2, eps = p.eps, wd = p.weight_decay;
HPCNN_OMP_SIMD
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * w[i];
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] -= step_size * mi / (std::sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}

std::unique_ptr<Timer> CpuBackend::make_timer() { return std::make_unique<SteadyTimer>(); }

}  // namespace hpcnn
