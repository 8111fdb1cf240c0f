// Convolution lowered to GEMM (im2col), as Caffe, Torch and Theano ran it on CPUs: the geometry,
// how many images one GEMM covers, and the im2col / col2im copies. Shared by the GEMM-lowered
// backends (gemm_backend.cpp) and by hpcnn-blas, which sweeps the GEMM shapes this produces.
#pragma once

#include <cstddef>
#include <string>

#include "engine/graph.hpp"
#include "engine/tensor.hpp"

namespace hpcnn::gemm_conv {

struct Geometry {
  int c = 1, h = 1, w = 1;  // input per image
  int o = 1, oh = 1, ow = 1;  // output per image
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;

  static Geometry of(const OpAttr& a, const Shape& in, const Shape& out);
  int rows() const { return c * kh * kw; }  // K of every GEMM
  int positions() const { return oh * ow; }  // output pixels per image
  // 1x1, stride 1, no padding: the input image already is its column matrix.
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

// Images per GEMM: enough that N = images * positions reaches a few hundred columns (small
// feature maps otherwise give the library a skinny, slow GEMM), but a column buffer of at most
// about 32 MiB. At least 1, at most `batch`. columns: the target N (--gemm-columns); 0: the
// built-in one.
int images_per_gemm(const Geometry& g, int batch, int columns = 0);

// "MxNxK" of the forward GEMM the backends run for this layer and batch (N covers
// images_per_gemm images).
std::string forward_gemm_shape(const Geometry& g, int batch);

// col[r][j * P + p] for row r = (c * kh + ky) * kw + kx and output pixel p of image j, where the
// column matrix has `ld` floats per row; padding gives zeros.
void im2col(const float* image, const Geometry& g, float* col, std::size_t ld);
// image[c][y][x] += every col entry that im2col would have read from there.
void col2im_add(const float* col, std::size_t ld, const Geometry& g, float* image);

}  // namespace hpcnn::gemm_conv
