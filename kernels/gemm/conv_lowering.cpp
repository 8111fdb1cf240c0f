// im2col / col2im for the GEMM-lowered convolution (conv_lowering.hpp). For each kernel tap the
// valid output columns form one contiguous range, so the inner loops are plain copies (memcpy for
// stride 1) without a bounds test per element.
#include "kernels/gemm/conv_lowering.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hpcnn::gemm_conv {

namespace {

constexpr std::size_t kMaxColumnFloats = std::size_t(8) << 20;  // 32 MiB of floats
constexpr int kTargetColumns = 1024;

// Output columns [lo, hi) whose input index o * stride - pad + tap lies in [0, size).
void valid_range(int tap, int stride, int pad, int size, int outs, int& lo, int& hi) {
  const int first = pad - tap;  // smallest o * stride that is in range
  lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  const int end = size + pad - tap;  // o * stride must stay below this
  hi = end <= 0 ? 0 : std::min(outs, (end + stride - 1) / stride);
  lo = std::min(lo, outs);
  hi = std::max(hi, lo);
}

}  // namespace

Geometry Geometry::of(const OpAttr& a, const Shape& in, const Shape& out) {
  Geometry g;
  g.c = in.c;
  g.h = in.h;
  g.w = in.w;
  g.o = out.c;
  g.oh = out.h;
  g.ow = out.w;
  g.kh = a.kh;
  g.kw = a.kw;
  g.sh = a.sh;
  g.sw = a.sw;
  g.ph = a.ph;
  g.pw = a.pw;
  return g;
}

// (--gemm-columns overrides kTargetColumns: measurements of the grouping, docs/PERFORMANCE.md.)
int images_per_gemm(const Geometry& g, int batch, int columns) {
  const int p = std::max(1, g.positions());
  int images = ((columns > 0 ? columns : kTargetColumns) + p - 1) / p;
  const std::size_t per_image = std::size_t(g.rows()) * p;
  images = static_cast<int>(std::min<std::size_t>(images, std::max<std::size_t>(1, kMaxColumnFloats / per_image)));
  return std::clamp(images, 1, std::max(1, batch));
}

std::string forward_gemm_shape(const Geometry& g, int batch) {
  return std::to_string(g.o) + "x" + std::to_string(images_per_gemm(g, batch) * g.positions()) + "x" +
         std::to_string(g.rows());
}

void im2col(const float* image, const Geometry& g, float* col, std::size_t ld) {
  for (int c = 0; c < g.c; ++c)
    for (int ky = 0; ky < g.kh; ++ky)
      for (int kx = 0; kx < g.kw; ++kx) {
        float* row = col + std::size_t((c * g.kh + ky) * g.kw + kx) * ld;
        int lo = 0, hi = 0;
        valid_range(kx, g.sw, g.pw, g.w, g.ow, lo, hi);
        for (int oy = 0; oy < g.oh; ++oy) {
          float* d = row + std::size_t(oy) * g.ow;
          const int iy = oy * g.sh - g.ph + ky;
          if (iy < 0 || iy >= g.h) {
            std::memset(d, 0, sizeof(float) * g.ow);
            continue;
          }
          const float* s = image + (std::size_t(c) * g.h + iy) * g.w;  // input row iy
          const int shift = kx - g.pw;  // input x = ox * sw + shift, >= 0 for ox >= lo
          std::fill(d, d + lo, 0.0f);
          if (g.sw == 1) {
            if (hi > lo) std::memcpy(d + lo, s + lo + shift, sizeof(float) * (hi - lo));
          } else {
            for (int ox = lo; ox < hi; ++ox) d[ox] = s[ox * g.sw + shift];
          }
          std::fill(d + hi, d + g.ow, 0.0f);
        }
      }
}

void col2im_add(const float* col, std::size_t ld, const Geometry& g, float* image) {
  for (int c = 0; c < g.c; ++c)
    for (int ky = 0; ky < g.kh; ++ky)
      for (int kx = 0; kx < g.kw; ++kx) {
        const float* row = col + std::size_t((c * g.kh + ky) * g.kw + kx) * ld;
        int lo = 0, hi = 0;
        valid_range(kx, g.sw, g.pw, g.w, g.ow, lo, hi);
        for (int oy = 0; oy < g.oh; ++oy) {
          const int iy = oy * g.sh - g.ph + ky;
          if (iy < 0 || iy >= g.h) continue;
          const float* s = row + std::size_t(oy) * g.ow;
          float* d = image + (std::size_t(c) * g.h + iy) * g.w;
          const int shift = kx - g.pw;
          for (int ox = lo; ox < hi; ++ox) d[ox * g.sw + shift] += s[ox];
        }
      }
}

}  // namespace hpcnn::gemm_conv
