// Which compute backends and SGEMM libraries this build has. The kernels own these lists: each
// backend folder registers its own entries, and kernels/registry.cpp is the one file that knows
// which folders configure built. Suites, tests and benchmarks look backends up here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/registry.hpp"
#include "engine/backend.hpp"
#include "engine/sgemm.hpp"

namespace hpcnn {

Registry<BackendInfo>& backend_registry();
// Every backend this build has, in registration order.
const std::vector<BackendInfo>& backends();
// Throws UsageError("unknown backend 'X' (available: a, b)") when X is not built in.
std::unique_ptr<Backend> make_backend(const std::string& name);
// The GPU backend of this build, or nullptr (a build without CUDA).
const BackendInfo* gpu_backend();

// Every SGEMM library this build has, in registration order.
const std::vector<SgemmInfo>& sgemm_libraries();
// Throws UsageError("unknown library 'X' (available: a, b)").
std::unique_ptr<Sgemm> make_sgemm(const std::string& name);
// The library's entry (its bf16 GEMM among others), or nullptr.
const SgemmInfo* find_sgemm(const std::string& name);

}  // namespace hpcnn
