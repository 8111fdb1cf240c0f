// BF16 rounding on the host: the value a bf16 operand holds, kept as a float (hpcnn-blas checks a
// bf16 GEMM against the products of its rounded operands; the tests feed bf16 backends values
// bf16 represents exactly), and bf16 values as 16-bit patterns (the bf16 gradient exchange).
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

// The bf16 bit pattern of x (rounded to nearest, ties to even), and the float a pattern holds: the
// gradient exchange in bf16 (hpcnn-scale --exchange-precision bf16) packs and sums with these.
inline std::uint16_t bf16_bits(float x) {
  std::uint32_t bits;
  x = round_to_bf16(x);
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float bf16_value(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

}  // namespace hpcnn
