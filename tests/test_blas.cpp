// The CPU compute libraries: every registered SGEMM library against a double-precision
// loop (all transposes, alpha/beta cases, odd sizes), thread counts read back from the libraries
// themselves (1 and 2, the default, and a count above the library's limit), the im2col / col2im
// pair (col2im must be im2col's adjoint, which is what backward-data needs), and hpcnn-blas's
// size parser. The backends' layer-by-layer and whole-model checks are in test_backends.cpp and
// test_network.cpp (parametrized over every registered backend).
//
// Error rule for SGEMM: |c - ref| <= 1e-5 * sum_l |alpha a_il b_lj| + |beta c0| (float accumulation of
// at most 70 terms is far inside this).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "kernels/registry.hpp"
#include "base/errors.hpp"
#include "base/rng.hpp"
#include "suites/blas_suite.hpp"
#include "kernels/gemm/conv_lowering.hpp"
#include "engine/sgemm.hpp"

namespace hpcnn {
namespace {

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

std::vector<std::string> library_names() {
  std::vector<std::string> names;
  for (const SgemmInfo& s : sgemm_libraries()) names.push_back(s.name);
  return names;
}

class SgemmLibrary : public ::testing::TestWithParam<std::string> {};

TEST_P(SgemmLibrary, MatchesDoubleLoop) {
  auto lib = make_sgemm(GetParam());
  struct Dims { int m, n, k; };
  for (const Dims d : {Dims{7, 13, 5}, Dims{33, 17, 65}, Dims{1, 9, 70}, Dims{64, 1, 3}})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{1.0f, 1.0f}, std::pair{0.5f, -2.0f}}) {
          const auto a = random_vector(std::size_t(d.m) * d.k, 1), b = random_vector(std::size_t(d.k) * d.n, 2);
          const auto c0 = random_vector(std::size_t(d.m) * d.n, 3);
          std::vector<float> c = c0;
          lib->run(ta, tb, d.m, d.n, d.k, alpha, a.data(), b.data(), beta, c.data());
          double worst = 0;
          bool ok = true;
          for (int i = 0; i < d.m; ++i)
            for (int j = 0; j < d.n; ++j) {
              double ref = 0, mag = 0;
              for (int l = 0; l < d.k; ++l) {
                const double av = ta ? a[std::size_t(l) * d.m + i] : a[std::size_t(i) * d.k + l];
                const double bv = tb ? b[std::size_t(j) * d.k + l] : b[std::size_t(l) * d.n + j];
                ref += alpha * av * bv;
                mag += std::fabs(alpha * av * bv);
              }
              const double c_in = c0[std::size_t(i) * d.n + j];
              ref += beta * c_in;
              mag += std::fabs(beta * c_in);
              const double err = std::fabs(c[std::size_t(i) * d.n + j] - ref);
              worst = std::max(worst, err / (mag > 0 ? mag : 1));
              ok = ok && err <= 1e-5 * mag + 1e-30;
            }
          EXPECT_TRUE(ok) << GetParam() << " m=" << d.m << " n=" << d.n << " k=" << d.k << " ta=" << ta
                          << " tb=" << tb << " alpha=" << alpha << " beta=" << beta << " worst=" << worst;
        }
}

TEST_P(SgemmLibrary, ThreadsReadBack) {
  auto lib = make_sgemm(GetParam());
  const int initial = lib->threads();
  EXPECT_GE(initial, 1);
  for (int n : {1, 2, 1}) {
    lib->set_threads(n);
    EXPECT_EQ(lib->threads(), n) << GetParam();
  }
  lib->set_threads(0);  // leaves the setting alone
  EXPECT_EQ(lib->threads(), 1);
  // A new instance starts at the library's default again, even where the setting is process-wide.
  auto fresh = make_sgemm(GetParam());
  EXPECT_EQ(fresh->threads(), initial) << GetParam();
  // Above the limit: a usage error naming the count, and the setting unchanged.
  if (lib->max_threads() < (1 << 20)) {
    lib->set_threads(1);
    try {
      lib->set_threads(lib->max_threads() + 1);
      ADD_FAILURE() << GetParam() << ": no error for " << lib->max_threads() + 1 << " threads";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(lib->max_threads() + 1)), std::string::npos) << e.what();
    }
    EXPECT_EQ(lib->threads(), 1);
  }
  for (const auto& [name, version] : lib->versions()) {
    EXPECT_FALSE(name.empty());
    EXPECT_FALSE(version.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(AllLibraries, SgemmLibrary, ::testing::ValuesIn(library_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SgemmLibrary);

// The backends ask their library, and the library itself agrees (OpenBLAS: its own getter).
TEST(BlasBackends, ThreadsAsTheLibraryReports) {
  int tested = 0;
  for (const char* name : {"openblas", "eigen"}) {
    bool registered = false;
    for (const BackendInfo& b : backends()) registered = registered || b.name == name;
    if (!registered) continue;
    ++tested;
    auto be = make_backend(name);
    for (int n : {1, 2}) {
      be->set_threads(n);
      EXPECT_EQ(be->threads(), n) << name;  // OpenBLAS's own getter agrees: tests/test_openblas.cpp
    }
  }
  if (tested == 0) GTEST_SKIP() << "neither openblas nor eigen is built";
}

// <im2col(x), c> == <x, col2im(c)> for random x and c: col2im_add is the adjoint of im2col.
TEST(ConvLowering, Col2imIsTheAdjointOfIm2col) {
  struct G { int c, h, w, k, s, p; };
  for (const G t : {G{3, 7, 6, 3, 1, 1}, G{2, 9, 9, 3, 2, 1}, G{4, 5, 5, 1, 1, 0}, G{1, 8, 7, 5, 3, 2}, G{2, 3, 3, 3, 1, 2}}) {
    gemm_conv::Geometry g;
    g.c = t.c; g.h = t.h; g.w = t.w;
    g.kh = g.kw = t.k; g.sh = g.sw = t.s; g.ph = g.pw = t.p;
    g.oh = (t.h + 2 * t.p - t.k) / t.s + 1;
    g.ow = (t.w + 2 * t.p - t.k) / t.s + 1;
    const std::size_t ld = g.positions() + 3;  // a wider row checks that ld is honoured
    const auto x = random_vector(std::size_t(g.c) * g.h * g.w, 5);
    const auto c = random_vector(std::size_t(g.rows()) * ld, 6);
    std::vector<float> col(std::size_t(g.rows()) * ld, 0.0f), back(x.size(), 0.0f);
    gemm_conv::im2col(x.data(), g, col.data(), ld);
    gemm_conv::col2im_add(c.data(), ld, g, back.data());
    double lhs = 0, rhs = 0;
    for (int r = 0; r < g.rows(); ++r)
      for (int q = 0; q < g.positions(); ++q) lhs += double(col[r * ld + q]) * c[r * ld + q];
    for (std::size_t i = 0; i < x.size(); ++i) rhs += double(x[i]) * back[i];
    EXPECT_NEAR(lhs, rhs, 1e-4 * (std::fabs(lhs) + 1)) << "c=" << t.c << " k=" << t.k << " s=" << t.s << " p=" << t.p;
    // And im2col itself: the entry for (channel 0, tap 0, output 0) is the padded input.
    const int iy = -g.ph, ix = -g.pw;
    const float want = (iy >= 0 && ix >= 0) ? x[std::size_t(iy) * g.w + ix] : 0.0f;
    EXPECT_EQ(col[0], want);
  }
}

TEST(ConvLowering, ImagesPerGemmStayInBounds) {
  gemm_conv::Geometry g;
  g.c = 512; g.kh = g.kw = 3; g.oh = g.ow = 4; g.o = 512;
  const int images = gemm_conv::images_per_gemm(g, 64);
  EXPECT_GE(images, 1);
  EXPECT_LE(images, 64);
  EXPECT_GE(images * g.positions(), 512);  // small feature maps are grouped into wide GEMMs
  EXPECT_EQ(gemm_conv::images_per_gemm(g, 1), 1);
  EXPECT_EQ(gemm_conv::forward_gemm_shape(g, 1), "512x16x4608");
}

TEST(BlasSuite, ParsesSizes) {
  int m = 0, n = 0, k = 0;
  parse_gemm_size("1024", m, n, k);
  EXPECT_EQ(m, 1024);
  EXPECT_EQ(n, 1024);
  EXPECT_EQ(k, 1024);
  parse_gemm_size("64x1024x576", m, n, k);
  EXPECT_EQ(m, 64);
  EXPECT_EQ(n, 1024);
  EXPECT_EQ(k, 576);
  for (const char* bad : {"0", "1x0x3", "abc", "1x2", "", "-5", "1x2x3x4", "12345678", "4x4x"}) {
    EXPECT_THROW(parse_gemm_size(bad, m, n, k), UsageError) << bad;
    try {
      parse_gemm_size(bad, m, n, k);
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hpcnn
