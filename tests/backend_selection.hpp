// Which backends a backend-parametrized test binary runs (test_backends, test_network), with the
// tolerance factor of each. Such a binary links tests/backend_selection.cpp, which has its main():
//   (no flag)  every CPU backend, as registered
//   --gpu      every GPU backend in each precision variant: fp32 NCHW, fp32 NHWC, tf32, bf16;
//              without a usable GPU it prints "SKIPPED: ..." and exits 77 (CTest: skipped).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"

namespace hpcnn::test {

struct BackendVariant {
  std::string name;     // test-name part: "dnnl", "cuda", "cuda_nhwc", "cuda_tf32", "cuda_bf16"
  std::string backend;  // registry name
  BackendSettings settings;
  // Tolerances of a test are max(the test's fp32 tolerance, this floor) for single layers, and the
  // fp32 tolerance times `model_factor` for whole networks. Stated per precision (rounding unit
  // 2^-24 fp32, 2^-11 tf32, 2^-9 bf16, times the depth the error travels).
  double layer_tol_floor = 0.0;
  double model_factor = 1.0;
};

bool gpu_mode();
// Non-reference backends under test (the reference too when include_reference).
std::vector<BackendVariant> variants_under_test(bool include_reference = false);
std::unique_ptr<Backend> make_variant(const BackendVariant& v);
const BackendVariant& find_variant(const std::string& name);

}  // namespace hpcnn::test
