// The eigen backend and SGEMM library: Eigen 3.4 tensor contractions on Eigen's own thread pool
// (Eigen::ThreadPool + Eigen::ThreadPoolDevice), as TensorFlow ran its CPU kernels. One thread
// runs on Eigen::DefaultDevice (the same contraction code without the pool's hand-offs).
// Threads: the pool size is the library's thread count and threads() reads it back from the
// pool. Eigen's thread pool has no default size of its own; `--threads default` sizes it as
// TensorFlow does, to the hardware threads (std::thread::hardware_concurrency). The pool accepts
// fewer than 2^16 threads (NonBlockingThreadPool's kMaxThreads).
#define EIGEN_USE_THREADS
// Eigen 3.4's headers warn under GCC 12 with -Wall -Wextra -std=c++20 (unused variables, implicit
// `this` capture, AVX-512 intrinsics); they are not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wdeprecated"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unsupported/Eigen/CXX11/Tensor>
#pragma GCC diagnostic pop

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "base/registry.hpp"
#include "engine/backend.hpp"
#include "kernels/gemm/gemm_backend.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn {

namespace {

constexpr int kMaxThreads = (1 << 16) - 1;

int default_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

std::string eigen_version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

class EigenSgemm final : public Sgemm {
 public:
  EigenSgemm() { resize(default_threads()); }

  std::string name() const override { return "eigen"; }

  void run(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, const float* b, float beta,
           float* c) override {
    using In = Eigen::TensorMap<const Eigen::Tensor<const float, 2, Eigen::RowMajor>>;
    using Out = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
    const In A(a, ta ? k : m, ta ? m : k), B(b, tb ? n : k, tb ? k : n);
    Out C(c, m, n);
    // Contract A's k dimension with B's: the remaining dimensions are A's m, then B's n.
    const Eigen::array<Eigen::IndexPair<int>, 1> dims = {Eigen::IndexPair<int>(ta ? 0 : 1, tb ? 1 : 0)};
    if (device_) assign(C, A, B, dims, alpha, beta, *device_);
    else assign(C, A, B, dims, alpha, beta, Eigen::DefaultDevice());
  }

  void set_threads(int n) override {
    if (n > kMaxThreads) throw_too_many_threads("eigen", n, kMaxThreads);
    if (n > 0) resize(n);
  }
  int threads() const override { return pool_ ? pool_->NumThreads() : 1; }
  int max_threads() const override { return kMaxThreads; }

  LibraryVersions versions() const override {
    return {{"Eigen", eigen_version()},
            {"Eigen_simd", Eigen::SimdInstructionSetsInUse()},
            {"Eigen_threading", "Eigen::ThreadPool + ThreadPoolDevice (1 thread: DefaultDevice)"},
            {"Eigen_default_threads", std::to_string(default_threads())}};
  }

 private:
  void resize(int n) {
    if (n == threads()) return;
    device_.reset();
    pool_.reset();
    if (n > 1) {
      pool_ = std::make_unique<Eigen::ThreadPool>(n);
      device_ = std::make_unique<Eigen::ThreadPoolDevice>(pool_.get(), n);
    }
  }

  template <class C, class A, class B, class D, class Device>
  static void assign(C& c, const A& a, const B& b, const D& dims, float alpha, float beta, const Device& dev) {
    if (alpha == 1.0f && beta == 0.0f) c.device(dev) = a.contract(b, dims);
    else if (alpha == 1.0f && beta == 1.0f) c.device(dev) += a.contract(b, dims);
    else if (beta == 0.0f) c.device(dev) = a.contract(b, dims) * alpha;
    else c.device(dev) = a.contract(b, dims) * alpha + c * beta;
  }

  std::unique_ptr<Eigen::ThreadPool> pool_;
  std::unique_ptr<Eigen::ThreadPoolDevice> device_;
};

}  // namespace

std::unique_ptr<Sgemm> make_eigen_sgemm() { return std::make_unique<EigenSgemm>(); }

std::unique_ptr<Backend> make_eigen_backend() {
  return std::make_unique<GemmCpuBackend>("eigen", make_eigen_sgemm());
}

void register_eigen_backend(Registry<BackendInfo>& registry) {
  BackendInfo info{"eigen", "Eigen " + eigen_version() + " tensor contractions on Eigen's thread pool (im2col), reference loops for other layers",
                   make_eigen_backend, ThreadLimit(kMaxThreads)};
  info.own_settings = {"gemm_columns"};
  registry.add(std::move(info));
}

void register_eigen_sgemm(Registry<SgemmInfo>& registry) {
  registry.add({"eigen", "Eigen " + eigen_version() + " tensor contraction (ThreadPoolDevice)", make_eigen_sgemm});
}

}  // namespace hpcnn
