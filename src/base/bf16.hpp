// BF16 rounding on the host: the value a bf16 operand holds, kept as a float (hpcnn-blas checks a
// bf16 GEMM against the products of its rounded operands; the tests feed bf16 backends values
// bf16 represents exactly).
#pragma once

#include <cstdint>
#include <cstring>

namespace hpcnn {

// x rounded to the nearest bf16, ties to even (as oneDNN's and the CPUs' conversions round).
inline float round_to_bf16(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

}  // namespace hpcnn
