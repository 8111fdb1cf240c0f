// Single-precision GEMM of one CPU library (OpenBLAS, Eigen, oneDNN) behind one interface, with
// the library's own thread control. Used by the GEMM-lowered backends (gemm_backend.hpp) and by
// hpcnn-blas --sweep gemm, so the sweep measures exactly the call the backends make.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"

namespace hpcnn {

class Sgemm {
 public:
  virtual ~Sgemm() = default;
  virtual std::string name() const = 0;
  // C = alpha * op(A) * op(B) + beta * C, row-major and densely packed: op(A) is m x k (A is
  // stored k x m when trans_a), op(B) is k x n (stored n x k when trans_b), C is m x n.
  virtual void run(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                   const float* b, float beta, float* c) = 0;
  // A new instance starts at the library's default thread count (also for libraries whose
  // setting is process-wide); set_threads(n <= 0) leaves the setting alone (Backend's contract).
  // Throws UsageError when n > max_threads().
  virtual void set_threads(int n) = 0;
  virtual int threads() const = 0;      // as the library reports it
  virtual int max_threads() const = 0;  // the most the library accepts
  virtual LibraryVersions versions() const = 0;
};

struct SgemmInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Sgemm>()> create;
};

// Every SGEMM library this build has (kernels/registry.cpp registers the built-in ones on first use).
const std::vector<SgemmInfo>& sgemm_libraries();
// Throws UsageError("unknown library 'X' (available: a, b)").
std::unique_ptr<Sgemm> make_sgemm(const std::string& name);

// The UsageError a library throws for a thread count above its limit (one wording for all).
[[noreturn]] void throw_too_many_threads(const std::string& library, int requested, int max);

}  // namespace hpcnn
