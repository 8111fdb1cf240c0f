// The SGEMM library registry; configure's HAVE_* decide which libraries this build registers
// (each defines its register_*_sgemm() in its own folder).
#include <mutex>
#include <utility>

#include "config.h"
#include "engine/errors.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn {

#ifdef HAVE_OPENBLAS_BACKEND
void register_openblas_sgemm();
#endif
#ifdef HAVE_EIGEN_BACKEND
void register_eigen_sgemm();
#endif
#ifdef HAVE_DNNL
void register_dnnl_sgemm();
#endif

namespace {

std::vector<SgemmInfo>& registry() {
  static std::vector<SgemmInfo> libs;
  return libs;
}

void register_builtin_sgemms() {
#ifdef HAVE_OPENBLAS_BACKEND
  register_openblas_sgemm();
#endif
#ifdef HAVE_EIGEN_BACKEND
  register_eigen_sgemm();
#endif
#ifdef HAVE_DNNL
  register_dnnl_sgemm();
#endif
}

}  // namespace

void register_sgemm(SgemmInfo info) {
  for (SgemmInfo& have : registry())
    if (have.name == info.name) {
      have = std::move(info);
      return;
    }
  registry().push_back(std::move(info));
}

const std::vector<SgemmInfo>& sgemm_libraries() {
  static std::once_flag once;
  std::call_once(once, register_builtin_sgemms);
  return registry();
}

std::unique_ptr<Sgemm> make_sgemm(const std::string& name) {
  std::string available;
  for (const SgemmInfo& info : sgemm_libraries()) {
    if (info.name == name) return info.create();
    available.append(available.empty() ? "" : ", ").append(info.name);
  }
  throw UsageError("unknown library '" + name + "' (available: " + available + ")");
}

void throw_too_many_threads(const std::string& library, int requested, int max) {
  throw UsageError(library + ": " + std::to_string(requested) + " threads is above what the library allows (at most " +
                   std::to_string(max) + ")");
}

}  // namespace hpcnn
