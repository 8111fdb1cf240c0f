// oneDNN backend internals (kernels/dnnl/ only): whether this CPU can compute convolutions and
// inner products in bf16, and with which kernel.
#pragma once

#include <string>

namespace hpcnn::dnnl_impl {

struct Bf16Support {
  std::string problem;  // why bf16 cannot run here (names what the CPU lacks); empty: it can
  std::string kernel;   // the implementation oneDNN dispatches for a bf16 convolution ("brg_conv_fwd:avx512_core_bf16")
  bool native = false;  // the CPU has BF16 instructions (AVX512_BF16 or AMX); else oneDNN emulates them
};

// Probed once: a 3x3 convolution of 64 channels at 14x14 on bf16 inputs with f32 output, as the
// backend would create it. oneDNN's reference implementation means no kernel for this CPU.
const Bf16Support& bf16_support();

// For the record: "jit_bf16:avx512_core_bf16 (BF16 instructions)" or "... (emulated in fp32: ...)".
std::string bf16_kernel_text(const Bf16Support& s);

}  // namespace hpcnn::dnnl_impl
