// The one place that knows which backends and SGEMM libraries this build has: configure's HAVE_*
// decide. Each backend folder defines its register_*() in its own translation unit.
#include "kernels/registry.hpp"

#include "base/errors.hpp"
#include "config.h"

namespace hpcnn {

void register_reference_backend(Registry<BackendInfo>& registry);
#ifdef HAVE_DNNL_BACKEND
void register_dnnl_backend(Registry<BackendInfo>& registry);
void register_dnnl_sgemm(Registry<SgemmInfo>& registry);
#endif
#ifdef HAVE_OPENBLAS_BACKEND
void register_openblas_backend(Registry<BackendInfo>& registry);
void register_openblas_sgemm(Registry<SgemmInfo>& registry);
#endif
#ifdef HAVE_EIGEN_BACKEND
void register_eigen_backend(Registry<BackendInfo>& registry);
void register_eigen_sgemm(Registry<SgemmInfo>& registry);
#endif
#ifdef HAVE_CUDA_BACKEND
void register_cuda_backend(Registry<BackendInfo>& registry);
#endif

namespace {

void builtin_backends(Registry<BackendInfo>& registry) {
  register_reference_backend(registry);
#ifdef HAVE_DNNL_BACKEND
  register_dnnl_backend(registry);
#endif
#ifdef HAVE_OPENBLAS_BACKEND
  register_openblas_backend(registry);
#endif
#ifdef HAVE_EIGEN_BACKEND
  register_eigen_backend(registry);
#endif
#ifdef HAVE_CUDA_BACKEND
  register_cuda_backend(registry);
#endif
}

void builtin_sgemms([[maybe_unused]] Registry<SgemmInfo>& registry) {
#ifdef HAVE_OPENBLAS_BACKEND
  register_openblas_sgemm(registry);
#endif
#ifdef HAVE_EIGEN_BACKEND
  register_eigen_sgemm(registry);
#endif
#ifdef HAVE_DNNL_BACKEND
  register_dnnl_sgemm(registry);
#endif
}

Registry<SgemmInfo>& sgemm_registry() {
  static Registry<SgemmInfo> registry("SGEMM library", builtin_sgemms);
  return registry;
}

}  // namespace

Registry<BackendInfo>& backend_registry() {
  static Registry<BackendInfo> registry("backend", builtin_backends);
  return registry;
}

const std::vector<BackendInfo>& backends() { return backend_registry().all(); }

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (const BackendInfo* b = backend_registry().find(name)) return b->create();
  throw UsageError("unknown backend '" + name + "' (available: " + backend_registry().names() + ")");
}

const BackendInfo* gpu_backend() {
  for (const BackendInfo& b : backends())
    if (b.gpu) return &b;
  return nullptr;
}

const std::vector<SgemmInfo>& sgemm_libraries() { return sgemm_registry().all(); }

const SgemmInfo* find_sgemm(const std::string& name) { return sgemm_registry().find(name); }

std::unique_ptr<Sgemm> make_sgemm(const std::string& name) {
  if (const SgemmInfo* s = sgemm_registry().find(name)) return s->create();
  throw UsageError("unknown library '" + name + "' (available: " + sgemm_registry().names() + ")");
}

}  // namespace hpcnn
