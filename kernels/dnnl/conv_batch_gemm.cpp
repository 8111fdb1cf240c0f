// A convolution's weight gradient as one GEMM over the whole batch (see conv_batch_gemm.hpp).
#include "kernels/dnnl/conv_batch_gemm.hpp"

#include <oneapi/dnnl/dnnl.h>

#include <stdexcept>
#include <string>

namespace hpcnn::dnnl_impl {

namespace {

// C x N x H x W: every channel's values for the whole batch contiguous, i.e. one GEMM row.
memory::desc cnhw_desc(const Shape& s) { return memory::desc(dims_of(s), dt::f32, tag::bacd); }

}  // namespace

bool is_gemm_fallback(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).find("gemm") != std::string::npos &&
         std::string(pd.impl_info_str()).find("brg") == std::string::npos;
}

BatchGemmWeights::BatchGemmWeights(const ContextPtr& c, const OpAttr& a, const Shape& in, const Shape& out,
                                   bool bias)
    : a_(a), in_(in), out_(out), bias_(bias), src_cnhw_(c, cnhw_desc(in)), diff_dst_cnhw_(c, cnhw_desc(out)) {}

// col[(ic*KH + ki)*KW + kj][(n*OH + oy)*OW + ox] = X[ic][n][oy*SH - PH + ki][ox*SW - PW + kj], 0 outside.
void BatchGemmWeights::im2col(const float* src, float* col) const {
  const long rows = static_cast<long>(in_.c) * a_.kh * a_.kw;
  const long cols = static_cast<long>(out_.n) * out_.h * out_.w;
#pragma omp parallel for
  for (long r = 0; r < rows; ++r) {
    const int kj = static_cast<int>(r % a_.kw), ki = static_cast<int>(r / a_.kw % a_.kh);
    const long ic = r / (a_.kw * a_.kh);
    float* row = col + r * cols;
    for (int n = 0; n < out_.n; ++n) {
      const float* plane = src + (ic * in_.n + n) * in_.h * in_.w;
      for (int oy = 0; oy < out_.h; ++oy) {
        const int y = oy * a_.sh - a_.ph + ki;
        for (int ox = 0; ox < out_.w; ++ox) {
          const int x = ox * a_.sw - a_.pw + kj;
          *row++ = y >= 0 && y < in_.h && x >= 0 && x < in_.w ? plane[y * in_.w + x] : 0.0f;
        }
      }
    }
  }
}

void BatchGemmWeights::run(const Tensor& src, const Tensor& diff_dst, float* diff_weights) {
  const long k_rows = static_cast<long>(in_.c) * a_.kh * a_.kw;
  const long cols = static_cast<long>(out_.n) * out_.h * out_.w;
  const float* x = src_cnhw_.get(src);
  const float* dy = diff_dst_cnhw_.get(diff_dst);
  float* col = col_.reserve(static_cast<std::size_t>(k_rows * cols) * sizeof(float));
  im2col(x, col);
  // dW (OC x K) = dY (OC x cols) x col^T (cols x K), row-major.
  const dnnl_status_t s = dnnl_sgemm('N', 'T', out_.c, k_rows, cols, 1.0f, dy, cols, col, cols, 0.0f,
                                     diff_weights, k_rows);
  if (s != dnnl_success) throw std::runtime_error("dnnl_sgemm failed (status " + std::to_string(s) + ")");
  if (!bias_) return;
  float* db = diff_weights + static_cast<long>(out_.c) * k_rows;
  for (int o = 0; o < out_.c; ++o) {
    double sum = 0;
    for (long j = 0; j < cols; ++j) sum += dy[o * cols + j];
    db[o] = static_cast<float>(sum);
  }
}

}  // namespace hpcnn::dnnl_impl
