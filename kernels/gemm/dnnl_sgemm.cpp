// oneDNN's dnnl_sgemm as an SGEMM library for hpcnn-blas --sweep gemm (built only with oneDNN;
// the dnnl backend itself uses oneDNN's convolution primitives, not this). oneDNN's CPU runtime
// here is OpenMP: its threads are OpenMP's (omp_set_num_threads / omp_get_max_threads).
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "base/registry.hpp"
#include "kernels/dnnl/dnnl_backend.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn {

namespace {

const int kDefaultThreads = omp_get_max_threads();  // OMP_NUM_THREADS or the processors, at load time

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

class DnnlSgemm final : public Sgemm {
 public:
  DnnlSgemm() { omp_set_num_threads(kDefaultThreads); }  // OpenMP's setting is process-wide
  std::string name() const override { return "dnnl"; }
  void run(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, const float* b, float beta,
           float* c) override {
    const dnnl_status_t s = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, ta ? m : k, b,
                                       tb ? k : n, beta, c, n);
    if (s != dnnl_success) throw std::runtime_error("dnnl_sgemm failed (status " + std::to_string(s) + ")");
  }
  void set_threads(int n) override {
    if (n > max_threads()) throw_too_many_threads("dnnl", n, max_threads());
    if (n > 0) omp_set_num_threads(n);
  }
  int threads() const override { return omp_get_max_threads(); }
  int max_threads() const override { return omp_get_thread_limit(); }
  LibraryVersions versions() const override { return {{"oneDNN", version()}, {"oneDNN_runtime", "OpenMP"}}; }
};

}  // namespace

void register_dnnl_sgemm(Registry<SgemmInfo>& registry) {
  registry.add({"dnnl", "dnnl_sgemm of oneDNN " + version() + " (bf16: a matmul, where the CPU has a kernel)",
                [] { return std::make_unique<DnnlSgemm>(); }, make_dnnl_bf16_gemm, dnnl_bf16_gemm_problem});
}

}  // namespace hpcnn
