// oneDNN's matmul on bf16 A and B with an fp32 C, as the bf16 GEMM of hpcnn-blas (Bf16Gemm in
// engine/sgemm.hpp). Plain row-major operands, as an SGEMM call has them; the matmul picks its
// kernel (brgemm with AVX512_BF16 or AMX instructions, an emulation on plain AVX-512).
#include <memory>
#include <string>

#include "kernels/dnnl/layout.hpp"
#include "kernels/dnnl/dnnl_backend.hpp"

namespace hpcnn {
namespace {

using namespace dnnl_impl;

dnnl::matmul::primitive_desc matmul_pd(const dnnl::engine& e, int m, int n, int k) {
  const memory::desc a({m, k}, dt::bf16, tag::ab), b({k, n}, dt::bf16, tag::ab), c({m, n}, dt::f32, tag::ab);
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(e, a, b, c);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), e);
#endif
}

class DnnlBf16Gemm final : public Bf16Gemm {
 public:
  void prepare(int m, int n, int k, const float* a, const float* b) override {
    pd_ = matmul_pd(ctx_.engine, m, n, k);
    mm_ = dnnl::matmul(pd_);
    a_ = to_bf16(a, {m, k}, a_buf_);
    b_ = to_bf16(b, {k, n}, b_buf_);
    c_ = memory(pd_.dst_desc(), ctx_.engine, DNNL_MEMORY_NONE);
  }

  void run(float* c) override {
    c_.set_data_handle(c);
    mm_.execute(ctx_.stream, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    ctx_.stream.wait();
  }

  std::string kernel() const override { return pd_.impl_info_str(); }

 private:
  memory to_bf16(const float* x, const memory::dims& dims, Buffer& buf) {
    const memory::desc from(dims, dt::f32, tag::ab), to(dims, dt::bf16, tag::ab);
    memory src(from, ctx_.engine, const_cast<float*>(x)), dst(to, ctx_.engine, buf.reserve(to.get_size()));
    dnnl::reorder(src, dst).execute(ctx_.stream, src, dst);
    ctx_.stream.wait();
    return dst;
  }

  Context ctx_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul mm_;
  Buffer a_buf_, b_buf_;
  memory a_, b_, c_;
};

}  // namespace

std::unique_ptr<Bf16Gemm> make_dnnl_bf16_gemm() { return std::make_unique<DnnlBf16Gemm>(); }

std::string dnnl_bf16_gemm_problem() {
  static const std::string why = [] {
    const dnnl::engine e(dnnl::engine::kind::cpu, 0);
    try {
      if (!is_reference_impl(matmul_pd(e, 256, 256, 256))) return std::string();
    } catch (const dnnl::error&) {
    }
    return std::string("oneDNN has no bf16 matmul kernel for this CPU (its ISA: ") +
           compat::isa_name(dnnl::get_effective_cpu_isa()) + "; bf16 needs AVX512_BF16 or AMX, or AVX-512 where oneDNN emulates it)";
  }();
  return why;
}

}  // namespace hpcnn
