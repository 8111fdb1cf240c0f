#include "kernels/cuda/cublas_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "base/errors.hpp"

namespace hpcnn::cuda {

namespace {

// Found where the executable's run path (configure's -Wl,-rpath to the CUDA libraries) or
// LD_LIBRARY_PATH says, as a linked library would be.
const std::string kSoname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);

template <typename F>
void resolve(void* lib, const char* symbol, F& entry) {
  entry = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!entry) throw RuntimeError("cuBLAS: " + kSoname + " has no " + symbol);
}

CublasLibrary load() {
  void* lib = dlopen(kSoname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw RuntimeError("cuBLAS: cannot load " + kSoname + ": " + (why ? why : "unknown reason"));
  }
  // Never closed: handles and plans made from it live until the process ends.
  CublasLibrary l;
  resolve(lib, "cublasCreate_v2", l.create);
  resolve(lib, "cublasDestroy_v2", l.destroy);
  resolve(lib, "cublasSetStream_v2", l.set_stream);
  resolve(lib, "cublasGetVersion_v2", l.get_version);
  resolve(lib, "cublasGetStatusString", l.status_string);
  resolve(lib, "cublasGemmEx", l.gemm_ex);
  // CublasGemmEx checked against cuBLAS's declaration: if it changes, this no longer compiles.
  [[maybe_unused]] const CublasGemmEx declared = &cublasGemmEx;
  return l;
}

}  // namespace

const CublasLibrary& cublas_library() {
  // A failed load is retried by the next caller (call_once runs again after an exception), and
  // every caller gets the same error.
  static CublasLibrary library;
  static std::once_flag once;
  std::call_once(once, [] { library = load(); });
  return library;
}

}  // namespace hpcnn::cuda
