// The bf16 probe of the oneDNN backend (precision.hpp).
#include "kernels/dnnl/precision.hpp"

#include "kernels/dnnl/layout.hpp"

namespace hpcnn::dnnl_impl {
namespace {

std::string isa_text() { return compat::isa_name(dnnl::get_effective_cpu_isa()); }

Bf16Support probe() {
  Bf16Support s;
  const std::string isa = isa_text();
  s.native = isa.find("bf16") != std::string::npos || isa.find("amx") != std::string::npos;
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const memory::desc src({32, 64, 14, 14}, dt::bf16, tag::any), w({64, 64, 3, 3}, dt::bf16, tag::any),
        dst({32, 64, 14, 14}, dt::f32, tag::any);
    const auto pd = compat::conv_forward(engine, dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                         src, w, memory::desc(), dst, {1, 1}, {1, 1}, {1, 1}, dnnl::primitive_attr());
    s.kernel = pd.impl_info_str();
    if (is_reference_impl(pd)) s.problem = "oneDNN has no bf16 convolution kernel for this CPU";
  } catch (const dnnl::error&) {  // not even the reference implementation takes bf16 here
    s.problem = "oneDNN has no bf16 convolution kernel for this CPU";
  }
  if (!s.problem.empty())
    s.problem += " (its ISA: " + isa + "; bf16 needs AVX512_BF16 or AMX, or AVX-512 where oneDNN emulates it)";
  return s;
}

}  // namespace

const Bf16Support& bf16_support() {
  static const Bf16Support s = probe();
  return s;
}

std::string bf16_kernel_text(const Bf16Support& s) {
  return s.kernel + (s.native ? " (BF16 instructions, ISA " + isa_text() + ")"
                              : " (emulated: ISA " + isa_text() + " has no BF16 instructions)");
}

}  // namespace hpcnn::dnnl_impl
