// The openblas backend and SGEMM library: cblas_sgemm, with OpenBLAS's own thread control
// (openblas_set_num_threads / openblas_get_num_threads). Registered as backend "openblas" (a
// GemmCpuBackend: im2col + SGEMM convolutions, SGEMM fully connected, reference loops for the
// rest) and as SGEMM library "openblas" for hpcnn-blas --sweep gemm.
#include <cblas.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "base/registry.hpp"
#include "engine/backend.hpp"
#include "kernels/gemm/gemm_backend.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn {

namespace {

// What OpenBLAS chose at load time (OPENBLAS_NUM_THREADS, else the processors it found), read
// before anything in this process can change it: `--threads default` restores it.
const int kDefaultThreads = openblas_get_num_threads();

// The compile-time limit, which OpenBLAS silently clamps a larger request to. Read from
// "MAX_THREADS=N" in openblas_get_config(), because the other way to find it, asking for far
// more and reading back, makes a pthreads build start that many threads for good. Builds whose
// configuration string lacks it are probed that way once.
int library_max_threads() {
  static const int max = [] {
    const std::string config = openblas_get_config();
    const std::string key = "MAX_THREADS=";
    if (const auto at = config.find(key); at != std::string::npos) {
      const int n = std::atoi(config.c_str() + at + key.size());
      if (n > 0) return n;
    }
    const int before = openblas_get_num_threads();
    openblas_set_num_threads(1 << 20);
    const int m = openblas_get_num_threads();
    openblas_set_num_threads(before);
    return m;
  }();
  return max;
}

class OpenblasSgemm final : public Sgemm {
 public:
  // OpenBLAS's thread count is process-wide: a new instance starts from the library's default,
  // whatever an earlier one set.
  OpenblasSgemm() { openblas_set_num_threads(kDefaultThreads); }

  std::string name() const override { return "openblas"; }

  void run(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, const float* b, float beta,
           float* c) override {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha,
                a, ta ? m : k, b, tb ? k : n, beta, c, n);
  }

  void set_threads(int n) override {
    if (n > max_threads()) throw_too_many_threads("openblas", n, max_threads());
    if (n > 0) openblas_set_num_threads(n);
  }
  int threads() const override { return openblas_get_num_threads(); }
  int max_threads() const override { return library_max_threads(); }

  LibraryVersions versions() const override {
    std::string config = openblas_get_config();
    while (!config.empty() && config.back() == ' ') config.pop_back();
    return {{"OpenBLAS", config},
            {"OpenBLAS_core", openblas_get_corename()},
            {"OpenBLAS_parallel", openblas_get_parallel() == 0 ? "sequential"
                                  : openblas_get_parallel() == 1 ? "pthreads" : "OpenMP"},
            {"OpenBLAS_default_threads", std::to_string(kDefaultThreads)}};
  }
};

std::string description() {
  return std::string("im2col + cblas_sgemm (") + openblas_get_config() + "), reference loops for other layers";
}

}  // namespace

std::unique_ptr<Sgemm> make_openblas_sgemm() { return std::make_unique<OpenblasSgemm>(); }

std::unique_ptr<Backend> make_openblas_backend() {
  return std::make_unique<GemmCpuBackend>("openblas", make_openblas_sgemm());
}

void register_openblas_backend(Registry<BackendInfo>& registry) {
  BackendInfo info{"openblas", description(), make_openblas_backend, ThreadLimit(library_max_threads())};
  info.own_settings = {"gemm_columns"};
  registry.add(std::move(info));
}

void register_openblas_sgemm(Registry<SgemmInfo>& registry) {
  registry.add({"openblas", std::string("cblas_sgemm of ") + openblas_get_config(), make_openblas_sgemm});
}

}  // namespace hpcnn
