// The contract of a CPU library's single-precision GEMM (OpenBLAS, Eigen, oneDNN), with the
// library's own thread control. The GEMM-lowered backends (kernels/gemm/) call it, and
// hpcnn-blas --sweep gemm times it, so the sweep measures exactly the call the backends make.
// The libraries this build has are kernels/registry.hpp's sgemm_libraries().
#pragma once

#include <functional>
#include <memory>
#include <string>

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

// A library's GEMM on bf16 operands (hpcnn-blas --sweep gemm --precision bf16): C (fp32, m x n) =
// A (m x k) * B (k x n), row-major, products accumulated in fp32. prepare() converts A and B from
// fp32 once, outside the timed calls; run() is the timed call. Threads: the library's Sgemm's.
class Bf16Gemm {
 public:
  virtual ~Bf16Gemm() = default;
  virtual void prepare(int m, int n, int k, const float* a, const float* b) = 0;
  virtual void run(float* c) = 0;
  virtual std::string kernel() const = 0;  // the implementation the library dispatched, for the record
};

struct SgemmInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Sgemm>()> create;
  // Libraries with a bf16 GEMM: its maker, and why this CPU cannot run it (names what the CPU
  // lacks; empty: it can). Unset: fp32 only.
  std::function<std::unique_ptr<Bf16Gemm>()> create_bf16 = {};
  std::function<std::string()> bf16_problem = {};
};

}  // namespace hpcnn
