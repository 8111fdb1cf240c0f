// The one place that knows which backends this build has: configure's HAVE_* decide.
// Each backend folder defines its register_*_backend() in its own translation unit.
#include "config.h"

namespace hpcnn {

void register_reference_backend();
#ifdef HAVE_DNNL
void register_dnnl_backend();
#endif
#ifdef HAVE_OPENBLAS_BACKEND
void register_openblas_backend();
#endif
#ifdef HAVE_EIGEN_BACKEND
void register_eigen_backend();
#endif
#ifdef HAVE_CUDA_BACKEND
void register_cuda_backend();
#endif

void register_builtin_backends() {
  register_reference_backend();
#ifdef HAVE_DNNL
  register_dnnl_backend();
#endif
#ifdef HAVE_OPENBLAS_BACKEND
  register_openblas_backend();
#endif
#ifdef HAVE_EIGEN_BACKEND
  register_eigen_backend();
#endif
#ifdef HAVE_CUDA_BACKEND
  register_cuda_backend();
#endif
}

}  // namespace hpcnn
