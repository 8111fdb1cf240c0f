// The CUDA libraries a CPU-only run must not pay for: cuBLAS is loaded by the first cuda backend
// (kernels/cuda/cublas_library.cpp), not when the process starts, and every entry point the
// backend calls resolves. Needs the CUDA toolkit's libraries, not a GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "kernels/cuda/cublas_library.hpp"

namespace {

bool cublas_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("libcublas") != std::string::npos) return true;
  return false;
}

TEST(CublasLibrary, IsLoadedWhenFirstAskedForNotAtStart) {
  EXPECT_FALSE(cublas_mapped()) << "libcublas is mapped before any cuda backend asked for it: linked, not loaded";
  const hpcnn::cuda::CublasLibrary& blas = hpcnn::cuda::cublas_library();
  EXPECT_TRUE(cublas_mapped());
  EXPECT_NE(blas.create, nullptr);
  EXPECT_NE(blas.destroy, nullptr);
  EXPECT_NE(blas.set_stream, nullptr);
  EXPECT_NE(blas.get_version, nullptr);
  EXPECT_NE(blas.gemm_ex, nullptr);
  ASSERT_NE(blas.status_string, nullptr);
  // A call that needs no GPU: the library's own words for a status.
  EXPECT_NE(std::string(blas.status_string(CUBLAS_STATUS_NOT_INITIALIZED)).find("not initialized"), std::string::npos)
      << blas.status_string(CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(&hpcnn::cuda::cublas_library(), &blas) << "loaded once";
}

}  // namespace
