// A CPU backend whose convolutions (im2col + SGEMM, backward data through col2im, backward
// weights through SGEMM) and fully connected layers (SGEMM) run on one Sgemm library; every other
// layer runs the reference backend's plain loops. The openblas and eigen backends are this class
// with their library's Sgemm (kernels/openblas, kernels/eigen): threads and versions are the
// library's.
#pragma once

#include <memory>
#include <string>

#include "engine/cpu_backend.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn::gemm_ops {
class Scratch;
}

namespace hpcnn {

class GemmCpuBackend : public CpuBackend {
 public:
  GemmCpuBackend(std::string name, std::unique_ptr<Sgemm> sgemm);
  ~GemmCpuBackend() override;

  std::string name() const override { return name_; }
  // fp32, and --gemm-columns (the im2col GEMM's column target).
  void configure(const BackendSettings& s) override;
  std::unique_ptr<Op> make_op(const Node& node, std::span<const Tensor* const> src, Mode mode,
                              Tensor& dst) override;
  void set_threads(int n) override { sgemm_->set_threads(n); }
  int threads() const override { return sgemm_->threads(); }
  LibraryVersions versions() const override;
  Sgemm& sgemm() { return *sgemm_; }

 private:
  std::string name_;
  std::shared_ptr<Sgemm> sgemm_;       // shared with the ops this backend made
  std::unique_ptr<Backend> plain_;     // the reference backend, for the other layers
  std::shared_ptr<gemm_ops::Scratch> scratch_;  // column buffers, shared by this backend's ops
  int gemm_columns_ = 0;                        // BackendSettings::gemm_columns
};

}  // namespace hpcnn
