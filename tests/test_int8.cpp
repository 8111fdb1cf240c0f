// int8 inference (--precision int8, dnnl backend) against the fp32 reference.
//
// A single convolution or fully connected layer is checked element by element within the bound
// its quantization allows: with the input quantized at scale s_x (its calibrated largest magnitude
// over 127, or over 255 where it never goes below zero) and the weights of output channel o at
// s_w[o] (their largest magnitude over 127), each factor is off by at most half its step, the
// int32 sums are exact, so |y_int8 - y| <= sum_k (|w_k| s_x/2 + |x_k| s_w[o]/2 + s_x s_w[o]/4),
// plus fp32's own rounding. A convolution with its batch norm folded, the residual add and the ReLU
// in the same int8 kernel is held to that bound for the folded weights. Whole networks are checked
// against fp32 within a stated fraction of the output's magnitude. Every check also asks for more
// difference than fp32's rounding (so int8 is what ran).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.hpp"
#include "engine/backend.hpp"
#include "engine/calibration.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/synthetic_data.hpp"
#include "kernels/registry.hpp"

namespace hpcnn {
namespace {

bool have_dnnl() { return backend_registry().find("dnnl") != nullptr; }

std::unique_ptr<Backend> fp32_backend(const std::string& name) {
  std::unique_ptr<Backend> b = make_backend(name);
  b->configure(BackendSettings{});
  return b;
}

std::unique_ptr<Backend> int8_backend(const ActivationRanges& ranges) {
  std::unique_ptr<Backend> b = make_backend("dnnl");
  BackendSettings s;
  s.precision = Precision::Int8;
  s.calibration = std::make_shared<const ActivationRanges>(ranges);
  b->configure(s);
  return b;
}

NetworkOptions infer_options(int batch, bool fuse = true) {
  NetworkOptions o;
  o.batch = batch;
  o.mode = Mode::Infer;
  o.seed = 3;
  o.fuse_relu = fuse;
  return o;
}

// Gaussian input; made non-negative (as after a ReLU) when `unsigned_input`.
std::vector<float> make_input(const Shape& sample, int batch, bool unsigned_input) {
  SyntheticData data(sample, 4, batch, 17, 1);
  std::vector<float> x(data.images(0), data.images(0) + sample.per_sample() * batch);
  if (unsigned_input)
    for (float& v : x) v = std::fabs(v);
  return x;
}

ActivationRanges calibrate_on(Backend& fp32, const Graph& g, const std::vector<float>& x, int batch) {
  Network net(fp32, g, calibration_options(batch, 3));
  return calibrate(net, 1, [&](Network& n, int) { n.set_input(x.data(), nullptr); });
}

std::vector<float> run(Backend& be, const Graph& g, const std::vector<float>& x, int batch,
                       const std::vector<float>& params = {}) {
  Network net(be, g, infer_options(batch));
  if (!params.empty()) net.set_params(params);
  net.set_input(x.data(), nullptr);
  net.forward();
  be.synchronize();
  return net.read_output(g.output());
}

float largest(const std::vector<float>& v, std::size_t from, std::size_t n) {
  float m = 0;
  for (std::size_t i = from; i < from + n; ++i) m = std::max(m, std::fabs(v[i]));
  return m;
}

// The per-output bound of a convolution (a fully connected layer: kernel = input size, no
// padding, 1x1 output) with stride 1.
struct ConvCase {
  const char* name;
  Shape in;  // per sample
  int out, kernel, pad;
  bool fc, unsigned_input;
};

class Int8Layer : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Int8Layer, WithinTheQuantizationBound) {
  if (!have_dnnl()) GTEST_SKIP() << "this build has no dnnl backend";
  const ConvCase c = GetParam();
  const int batch = 3;
  Graph g(c.in);
  if (c.fc) g.fully_connected(g.input(), c.out, true);
  else g.conv(g.input(), c.out, c.kernel, 1, c.pad, true);
  g.finalize();
  const std::vector<float> x = make_input(c.in, batch, c.unsigned_input);
  auto ref_be = fp32_backend("reference");
  const ActivationRanges ranges = calibrate_on(*ref_be, g, x, batch);
  auto q_be = int8_backend(ranges);
  // Biases as large as the outputs (initialization makes them small), so a bias scaled wrongly shows.
  Network params_net(*ref_be, g, infer_options(batch));
  std::vector<float> p = params_net.get_params();
  const std::size_t weights = p.size() - static_cast<std::size_t>(c.out);
  for (int o = 0; o < c.out; ++o) p[weights + o] = 0.5f + 0.25f * static_cast<float>(o % 5);
  const std::vector<float> ref = run(*ref_be, g, x, batch, p), got = run(*q_be, g, x, batch, p);
  EXPECT_EQ(q_be->precision_exceptions(), "") << "the layer did not run in int8";

  const int C = c.in.c, H = c.in.h, W = c.in.w;
  const int kh = c.fc ? H : c.kernel, kw = c.fc ? W : c.kernel, pad = c.fc ? 0 : c.pad;
  const int OH = H + 2 * pad - kh + 1, OW = W + 2 * pad - kw + 1;
  const std::size_t per = static_cast<std::size_t>(C) * kh * kw;
  const ValueRange r = ranges.begin()->second;
  const double sx = r.min >= 0 ? r.max / 255.0 : r.abs_max() / 127.0;
  double worst = 0, scale = largest(ref, 0, ref.size());
  for (int n = 0; n < batch; ++n)
    for (int o = 0; o < c.out; ++o) {
      const double sw = largest(p, o * per, per) / 127.0;
      for (int oy = 0; oy < OH; ++oy)
        for (int ox = 0; ox < OW; ++ox) {
          double bound = 0, magnitude = std::fabs(p[c.out * per + o]);
          for (int ci = 0; ci < C; ++ci)
            for (int ky = 0; ky < kh; ++ky)
              for (int kx = 0; kx < kw; ++kx) {
                const int iy = oy + ky - pad, ix = ox + kx - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const double w = p[o * per + (ci * kh + ky) * kw + kx];
                const double v = x[((static_cast<std::size_t>(n) * C + ci) * H + iy) * W + ix];
                bound += std::fabs(w) * sx / 2 + std::fabs(v) * sw / 2 + sx * sw / 4;
                magnitude += std::fabs(w * v);
              }
          const std::size_t i = ((static_cast<std::size_t>(n) * c.out + o) * OH + oy) * OW + ox;
          const double err = std::fabs(got[i] - ref[i]);
          worst = std::max(worst, err);
          ASSERT_LE(err, bound + 1e-5 * magnitude)
              << c.name << ": output (" << n << "," << o << "," << oy << "," << ox << ") int8 " << got[i] << " fp32 "
              << ref[i] << ", beyond the quantization bound " << bound;
        }
    }
  std::printf("  %s: worst |int8 - fp32| %.3g of max|fp32| (input %s, scale %.3g)\n", c.name, worst / scale,
              r.min >= 0 ? "u8" : "s8", sx);
  EXPECT_GT(worst, 1e-4 * scale) << c.name << ": no int8 rounding visible: did it compute in fp32?";
}

INSTANTIATE_TEST_SUITE_P(
    ConvAndFc, Int8Layer,
    ::testing::Values(ConvCase{"conv3x3_s8", {1, 16, 9, 9}, 32, 3, 1, false, false},
                      ConvCase{"conv3x3_u8", {1, 16, 9, 9}, 32, 3, 1, false, true},
                      ConvCase{"conv5x5_3ch_s8", {1, 3, 12, 12}, 8, 5, 0, false, false},
                      ConvCase{"conv1x1_u8", {1, 64, 4, 4}, 24, 1, 0, false, true},
                      ConvCase{"fc_s8", {1, 20, 3, 3}, 10, 0, 0, true, false},
                      ConvCase{"fc_u8", {1, 256, 1, 1}, 64, 0, 0, true, true}),
    [](const ::testing::TestParamInfo<ConvCase>& i) { return std::string(i.param.name); });

// A convolution with its epilogue in one int8 kernel: the batch norm folded into its weights and
// bias, the residual add onto the shortcut and the ReLU, as in every ResNet block. The shortcut x
// comes from an int8 convolution (so it is in the format the int8 kernels write, as in a model),
// the convolution's input y from another, which writes it quantized for the convolution. The same
// prefix run alone and unfused gives x and y in FP32, and the expected output is computed in
// double from them: relu(conv(y, w') + b' + x) with w'[o] = w[o] s[o], b'[o] = shift[o] - mean[o]
// s[o], s = scale / sqrt(var + eps). The bound is the single layer's for the folded weights and
// their own steps, plus what saturating y at the calibrated range's top loses; x, which the
// convolution ca and the sum read, is stored in u8 (half a step of its range), and so is the sum
// over x's bytes (half a step of its own range, and what saturating at its top loses); the add
// and the ReLU (1-Lipschitz) add no error. Batch-norm parameters and statistics are set away from
// 1 and 0, so that a fold done wrongly shows.
TEST(Int8Epilogue, FoldedBatchNormResidualAndReluWithinTheBound) {
  if (!have_dnnl()) GTEST_SKIP() << "this build has no dnnl backend";
  const int C = 16, H = 8, W = 8, batch = 2;
  Graph g({1, C, H, W});
  const int x = g.relu(g.conv(g.input(), C, 1, 1, 0, true, "c1"), "x");
  const int y = g.relu(g.conv(x, C, 1, 1, 0, true, "ca"), "y");
  const int conv = g.conv(y, C, 3, 1, 1, false, "conv");
  const int bn = g.batch_norm(conv, "bn");
  g.relu(g.add(bn, x, "add"), "out");
  g.finalize();
  Graph prefix({1, C, H, W});
  const int px = prefix.relu(prefix.conv(prefix.input(), C, 1, 1, 0, true, "c1"), "x");
  const int py = prefix.relu(prefix.conv(px, C, 1, 1, 0, true, "ca"), "y");
  prefix.finalize();

  const std::vector<float> input = make_input(g.input_shape(), batch, false);
  auto fp32 = fp32_backend("dnnl");
  const ActivationRanges ranges = calibrate_on(*fp32, g, input, batch);
  Network init(*fp32, g, infer_options(batch));
  std::vector<float> p = init.get_params(), buffers = init.get_buffers();
  const Node& b = g.node(bn);
  float* bn_p = p.data() + b.param_offset;
  float* mean = buffers.data() + b.buffer_offset;
  float* var = mean + buffer_stride(C);
  for (int o = 0; o < C; ++o) {
    bn_p[o] = 0.5f + 0.07f * static_cast<float>(o);       // scale
    bn_p[C + o] = -0.4f + 0.05f * static_cast<float>(o);  // shift
    mean[o] = -0.2f + 0.025f * static_cast<float>(o);
    var[o] = 0.5f + 0.1f * static_cast<float>(o);
  }
  // The prefix's parameters: c1's and ca's, each from its place in g's buffer.
  std::vector<float> prefix_params(prefix.param_count());
  for (const char* name : {"c1", "ca"}) {
    const Node *from = nullptr, *to = nullptr;
    for (const Node& n : g.nodes()) from = n.name == name ? &n : from;
    for (const Node& n : prefix.nodes()) to = n.name == name ? &n : to;
    ASSERT_TRUE(from && to && from->param_count == to->param_count) << name;
    std::copy_n(p.begin() + static_cast<long>(from->param_offset), from->param_count,
                prefix_params.begin() + static_cast<long>(to->param_offset));
  }
  auto q = int8_backend(ranges);
  Network net(*q, g, infer_options(batch));
  net.set_params(p);
  net.set_buffers(buffers);
  net.set_input(input.data(), nullptr);
  net.forward();
  const std::vector<float> got = net.read_output(g.output());
  EXPECT_EQ(net.folded_batch_norms().size(), 1u) << "the batch norm was not folded into the convolution";
  EXPECT_EQ(net.fused_adds().size(), 1u) << "the residual add was not computed in the convolution";
  const double out_step = ranges.at(output_range_key("out")).max / 255.0;
  for (std::size_t i = 0; i < got.size(); ++i)  // the sum stored in u8 over x's bytes
    ASSERT_NEAR(got[i] / out_step, std::nearbyint(got[i] / out_step), 1e-3) << "output " << i << ": " << got[i];
  EXPECT_EQ(q->precision_exceptions(), "");
  // x and y in FP32 as the int8 convolutions write them: unfused, no ReLU is part of c1 or ca, so
  // neither writes its output quantized for the convolution after it.
  NetworkOptions keep_all = infer_options(batch, false);
  keep_all.memory_plan = false;  // x stays readable after the convolution that reads it
  Network first(*q, prefix, keep_all);
  first.set_params(prefix_params);
  first.set_input(input.data(), nullptr);
  first.forward();
  const std::vector<float> xs = first.read_output(px), ys = first.read_output(py);

  const float* w = p.data() + g.node(conv).param_offset;
  const std::size_t per = static_cast<std::size_t>(C) * 9;
  const ValueRange r = ranges.at("conv");
  ASSERT_GE(r.min, 0.0f) << "the input after a ReLU quantizes as u8";
  const double sx = r.max / 255.0;
  const double stored = (ranges.at(output_range_key("x")).max + ranges.at(output_range_key("out")).max) / 255.0 / 2;
  const double out_max = ranges.at(output_range_key("out")).max;
  double worst = 0, scale = 0;
  for (int o = 0; o < C; ++o) {
    const double so = bn_p[o] / std::sqrt(static_cast<double>(var[o]) + b.attr.eps);
    const double bias = bn_p[C + o] - mean[o] * so;
    double wmax = 0;
    for (std::size_t k = 0; k < per; ++k) wmax = std::max(wmax, std::fabs(w[o * per + k] * so));
    const double sw = wmax / 127.0;
    for (int n = 0; n < batch; ++n)
      for (int oy = 0; oy < H; ++oy)
        for (int ox = 0; ox < W; ++ox) {
          const std::size_t i = ((static_cast<std::size_t>(n) * C + o) * H + oy) * W + ox;
          double sum = bias + xs[i], bound = stored, magnitude = std::fabs(sum);
          for (int ci = 0; ci < C; ++ci)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                const int iy = oy + ky - 1, ix = ox + kx - 1;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const double wf = w[o * per + (ci * 3 + ky) * 3 + kx] * so;
                const double v = ys[((static_cast<std::size_t>(n) * C + ci) * H + iy) * W + ix];
                sum += wf * v;
                bound += std::fabs(wf) * (sx / 2 + std::max(0.0, v - 255 * sx)) + v * sw / 2 + sx * sw / 4;
                magnitude += std::fabs(wf * v);
              }
          const double want = std::max(0.0, sum), err = std::fabs(got[i] - want);
          worst = std::max(worst, err);
          scale = std::max(scale, want);
          bound += std::max(0.0, want - out_max);  // the sum saturates at its range's top
          ASSERT_LE(err, bound + 1e-5 * magnitude)
              << "output (" << n << "," << o << "," << oy << "," << ox << ") int8 " << got[i] << " expected " << want;
        }
  }
  std::printf("  conv+bn+add+relu: worst |int8 - exact| %.3g of max|exact|\n", worst / scale);
  EXPECT_GT(worst, 1e-4 * scale) << "no int8 rounding visible: did it compute in fp32?";
}

// A graph's forward in fp32, in int8 with epilogue fusion (the tensors between layers may be
// int8) and in int8 unfused (every layer writes fp32), on the same parameters, with every tensor
// readable afterwards. The backends outlive the networks (members go in reverse order).
struct Int8Runs {
  ActivationRanges ranges;
  std::unique_ptr<Backend> fp32, fused_backend, apart_backend;
  std::unique_ptr<Network> ref, chained, apart;
};

// On Gaussian input; every layer runs in int8 (no exceptions).
Int8Runs run_three_ways(const Graph& g, int batch) {
  const std::vector<float> input = make_input(g.input_shape(), batch, false);
  Int8Runs r;
  r.fp32 = fp32_backend("dnnl");
  r.ranges = calibrate_on(*r.fp32, g, input, batch);
  Network init(*r.fp32, g, infer_options(batch));
  const std::vector<float> p = init.get_params(), buffers = init.get_buffers();
  auto forward = [&](Backend& be, bool fuse) {
    NetworkOptions o = infer_options(batch, fuse);
    o.memory_plan = false;  // every tensor readable after the forward pass
    auto net = std::make_unique<Network>(be, g, o);
    net->set_params(p);
    net->set_buffers(buffers);
    net->set_input(input.data(), nullptr);
    net->forward();
    be.synchronize();
    return net;
  };
  r.fused_backend = int8_backend(r.ranges);
  r.apart_backend = int8_backend(r.ranges);
  r.ref = forward(*r.fp32, true);
  r.chained = forward(*r.fused_backend, true);
  r.apart = forward(*r.apart_backend, false);
  EXPECT_EQ(r.fused_backend->precision_exceptions(), "");
  return r;
}

// The network output's largest gaps, fused int8 against unfused int8 and against fp32, as
// fractions of fp32's largest magnitude.
std::pair<double, double> output_gaps(const Int8Runs& r, const Graph& g) {
  const std::vector<float> out = r.chained->read_output(g.output()), apart = r.apart->read_output(g.output()),
                           ref = r.ref->read_output(g.output());
  const double scale = largest(ref, 0, ref.size());
  double from_apart = 0, from_ref = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    from_apart = std::max(from_apart, static_cast<double>(std::fabs(out[i] - apart[i])));
    from_ref = std::max(from_ref, static_cast<double>(std::fabs(out[i] - ref[i])));
  }
  return {from_apart / scale, from_ref / scale};
}

// Layers in a chain pass int8 between them: a convolution whose only reader is another int8 layer
// writes that reader's quantized input itself (u8 after a ReLU, s8 after a folded batch norm, at
// the reader's calibrated scale), so the tensor between them takes a quarter of the bytes. Its
// values read back as FP32 (read_output dequantizes them) within half a quantization step of what
// the same int8 convolution writes in FP32 when the next node runs as an op of its own (unfused:
// no reader to quantize for); a rounding tie may go the other way, and a value one step off moves
// the layers after it, so a few elements may be off by up to a step more. The chain's output
// agrees with the unfused int8 chain and with fp32.
struct ChainCase {
  const char* name;
  enum { ReluConvs, BatchNormConv, ReluFc } kind;
};

class Int8Chain : public ::testing::TestWithParam<ChainCase> {};

TEST_P(Int8Chain, LayersPassInt8BetweenThem) {
  if (!have_dnnl()) GTEST_SKIP() << "this build has no dnnl backend";
  const ChainCase k = GetParam();
  const int C = 16, H = 8, W = 8, batch = 2;
  Graph g({1, C, H, W});
  std::vector<std::pair<int, std::string>> between;  // {node, its reader}
  const int c1 = g.conv(g.input(), C, 3, 1, 1, k.kind != ChainCase::BatchNormConv, "c1");
  if (k.kind == ChainCase::ReluConvs) {
    const int a = g.relu(c1, "a");
    const int b = g.relu(g.conv(a, C, 1, 1, 0, true, "c2"), "b");
    g.conv(b, C, 3, 1, 1, true, "c3");
    between = {{a, "c2"}, {b, "c3"}};
  } else if (k.kind == ChainCase::BatchNormConv) {
    const int a = g.batch_norm(c1, "a");
    g.conv(a, C, 3, 1, 1, true, "c2");
    between = {{a, "c2"}};
  } else {
    const int a = g.relu(c1, "a");
    g.fully_connected(a, 10, true, "fc");
    between = {{a, "fc"}};
  }
  g.finalize();
  const Int8Runs runs = run_three_ways(g, batch);
  const ActivationRanges& ranges = runs.ranges;
  const auto &ref = runs.ref, &chained = runs.chained, &apart = runs.apart;
  ASSERT_EQ(chained->fused_relus().size() + chained->folded_batch_norms().size(), between.size())
      << "the node after each layer was not computed in it";

  // Bytes: the tensors between the layers, 4 bytes an element in fp32, 1 in int8.
  const std::size_t elements = between.size() * static_cast<std::size_t>(batch) * C * H * W;
  const std::size_t f32_bytes = ref->activation_memory().unplanned_bytes,
                    int8_bytes = chained->activation_memory().unplanned_bytes;
  EXPECT_LE(int8_bytes + 3 * elements - between.size() * 256, f32_bytes)
      << "the tensors between int8 layers are not stored as int8 (" << int8_bytes << " bytes against fp32's "
      << f32_bytes << ")";

  for (const auto& [node, reader] : between) {
    const std::vector<float> got = chained->read_output(node), want = apart->read_output(node);
    const ValueRange r = ranges.at(reader);
    const bool u8 = r.min >= 0.0f;
    ASSERT_EQ(u8, k.kind != ChainCase::BatchNormConv) << reader << "'s input range " << r.min << " to " << r.max;
    const double levels = u8 ? 255.0 : 127.0, step = r.abs_max() / levels;
    double worst = 0;
    std::size_t beyond_half = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double err = std::fabs(got[i] - want[i]);
      const double allowed = step / 2 + std::max(0.0, std::fabs(want[i]) - levels * step) + 1e-6 * std::fabs(want[i]);
      ASSERT_LE(err, allowed + step) << "tensor before " << reader << " element " << i << ": read back " << got[i]
                                     << ", the int8 layer wrote " << want[i];
      beyond_half += err > allowed;
      worst = std::max(worst, err);
    }
    EXPECT_LE(beyond_half, got.size() / 100) << "tensor before " << reader << ": elements beyond half a step";
    EXPECT_GT(worst, step / 100) << "tensor before " << reader << ": no quantization visible";
  }
  // The output: the same int8 arithmetic but for rounding ties, and close to fp32.
  const auto [from_apart, from_ref] = output_gaps(runs, g);
  std::printf("  %s: int8 between layers, |chained - apart| %.3g, |chained - fp32| %.3g of max|fp32|\n", k.name,
              from_apart, from_ref);
  EXPECT_LE(from_apart, 0.01);
  EXPECT_LE(from_ref, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Chains, Int8Chain,
                         ::testing::Values(ChainCase{"relu_conv_relu_conv", ChainCase::ReluConvs},
                                           ChainCase{"batch_norm_conv_s8", ChainCase::BatchNormConv},
                                           ChainCase{"relu_fc", ChainCase::ReluFc}),
                         [](const ::testing::TestParamInfo<ChainCase>& i) { return std::string(i.param.name); });

// Residual blocks in int8 from end to end: a block's output, read by the next block's convolutions
// and its residual sum, is stored quantized at the scale of its calibrated range; the residual
// convolution reads its shortcut so and writes its sum so, in the shortcut's bytes (an identity
// block: u8 onto u8; a downsampling block: u8 onto the s8 of the other branch's folded batch
// norm). Every buffer but the input's and the head's then takes a byte an element. A block's
// output reads back within half a step of its own scale, plus half a step of the shortcut's
// (which the unfused int8 network adds in FP32), of the unfused int8 network's; ties aside.
TEST(Int8Residual, BlocksPassInt8ThroughTheirSums) {
  if (!have_dnnl()) GTEST_SKIP() << "this build has no dnnl backend";
  const int C = 16, H = 8, W = 8, batch = 2;
  Graph g({1, C, H, W});
  auto conv_bn = [&](int x, int out, int k, int stride, const std::string& name) {
    return g.batch_norm(g.conv(x, out, k, stride, k / 2, false, name), name + ".bn");
  };
  const int x0 = g.relu(conv_bn(g.input(), C, 3, 1, "stem"), "stem.relu");
  int y = g.relu(conv_bn(x0, C, 3, 1, "b1.conv1"), "b1.relu1");
  y = conv_bn(y, C, 3, 1, "b1.conv2");
  const int x1 = g.relu(g.add(y, x0, "b1.add"), "b1.relu2");
  y = g.relu(conv_bn(x1, 2 * C, 3, 1, "b2.conv1"), "b2.relu1");
  const int y2 = conv_bn(y, 2 * C, 3, 2, "b2.conv2");
  const int down = conv_bn(x1, 2 * C, 1, 2, "b2.downsample");
  const int x2 = g.relu(g.add(y2, down, "b2.add"), "b2.relu2");
  g.fully_connected(g.global_avg_pool(x2, "pool"), 10, true, "fc");
  g.finalize();
  const Int8Runs runs = run_three_ways(g, batch);
  const ActivationRanges& ranges = runs.ranges;
  const auto &ref = runs.ref, &chained = runs.chained, &apart = runs.apart;
  ASSERT_EQ(chained->fused_adds().size(), 2u) << "a residual sum was not fused into its convolution";

  // Bytes: the buffers of x0 (then x1 over it), b1.relu1, b2.relu1 (2C channels at HxW) and
  // b2.conv2's (2C at H/2 x W/2; then x2 over it).
  const std::size_t full = static_cast<std::size_t>(batch) * C * H * W;
  const std::size_t int8_elements = full + full + 2 * full + full / 2;
  const std::size_t f32_bytes = ref->activation_memory().unplanned_bytes,
                    int8_bytes = chained->activation_memory().unplanned_bytes;
  EXPECT_LE(int8_bytes + 3 * int8_elements - 4 * 256, f32_bytes)
      << "the blocks' tensors are not stored as int8 (" << int8_bytes << " bytes against fp32's " << f32_bytes << ")";

  auto step = [&](int node) {
    const ValueRange r = ranges.at(output_range_key(g.node(node).name));
    return r.abs_max() / (r.min >= 0.0f ? 255.0 : 127.0);
  };
  for (const int node : {x1, x2}) {
    const std::string name = g.node(node).name;
    const std::vector<float> got = chained->read_output(node), want = apart->read_output(node);
    // Stored at the scale of its own range: every value a whole number of steps.
    const double own = step(node);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i] / own, std::nearbyint(got[i] / own), 1e-3) << name << " element " << i << ": " << got[i];
    double worst = 0;
    std::size_t beyond = 0;
    const double allowed = own / 2 + step(node == x1 ? x0 : y2) / 2;  // its own and its shortcut's
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double err = std::fabs(got[i] - want[i]);
      worst = std::max(worst, err);
      beyond += err > allowed + 1e-6 * std::fabs(want[i]);
    }
    std::printf("  %s: |int8 sums - unfused| %.3g, half a step of it and its shortcut %.3g\n", name.c_str(), worst,
                allowed);
    EXPECT_GT(worst, own / 100) << name << ": no quantization visible";
    // x1's inputs are the same integers in both networks; x2's convolutions read x1, which the
    // two round apart, so there the sums may differ by more (bounded by the output check below).
    if (node == x1) {
      EXPECT_LE(beyond, got.size() / 100) << name << ": elements beyond half a step of each scale";
    }
  }
  const auto [from_apart, from_ref] = output_gaps(runs, g);
  std::printf("  output: |int8 sums - unfused int8| %.3g, |int8 sums - fp32| %.3g of max|fp32|\n", from_apart,
              from_ref);
  EXPECT_LE(from_apart, 0.02);
  EXPECT_LE(from_ref, 0.05);
}

// Whole models: batch norms folded, residual adds and ReLUs fused into int8 convolutions. Each
// layer adds about 2^-8 of its output's magnitude in rounding; over a model's depth the logits
// stay within a few percent of fp32's largest logit (5% allowed), and the predicted class
// agrees for most images.
TEST(Int8Model, CloseToFp32) {
  if (!have_dnnl()) GTEST_SKIP() << "this build has no dnnl backend";
  for (const char* model : {"lenet5", "resnet18-cifar", "alexnet"}) {
    ModelConfig mc;
    mc.input = {1, 3, 32, 32};
    if (std::string(model) == "alexnet") mc.input = {1, 3, 64, 64};
    mc.classes = 10;
    mc.loss = false;
    const Graph g = build_model(model, mc);
    const int batch = 16;
    SyntheticData data(mc.input, 10, batch, 5, 3);
    auto fp32 = fp32_backend("dnnl");
    Network cal(*fp32, g, calibration_options(batch, 3));
    const ActivationRanges ranges =
        calibrate(cal, 2, [&](Network& n, int k) { n.set_input(data.images(k + 1), data.labels(k + 1)); });
    auto q = int8_backend(ranges);
    const std::vector<float> x(data.images(0), data.images(0) + mc.input.per_sample() * batch);
    const std::vector<float> ref = run(*fp32, g, x, batch), got = run(*q, g, x, batch);
    EXPECT_EQ(q->precision_exceptions(), "") << model;
    const double scale = largest(ref, 0, ref.size());
    double worst = 0;
    int agree = 0;
    for (int n = 0; n < batch; ++n) {
      const auto* r = ref.data() + n * 10;
      const auto* o = got.data() + n * 10;
      agree += std::max_element(r, r + 10) - r == std::max_element(o, o + 10) - o;
      for (int k = 0; k < 10; ++k) worst = std::max(worst, static_cast<double>(std::fabs(r[k] - o[k])));
    }
    std::printf("  %s: worst |int8 - fp32| logit %.3g of max|fp32|, top-1 agrees on %d of %d\n", model, worst / scale,
                agree, batch);
    EXPECT_LE(worst, 0.05 * scale) << model;
    EXPECT_GT(worst, 1e-4 * scale) << model << ": no int8 rounding visible";
    EXPECT_GE(agree, batch * 3 / 4) << model;
  }
}

// Bad settings: int8 without calibration ranges, or on a backend without int8, is refused.
TEST(Int8Settings, RefusedWithoutCalibrationOrSupport) {
  if (!have_dnnl()) GTEST_SKIP() << "this build has no dnnl backend";
  BackendSettings s;
  s.precision = Precision::Int8;
  EXPECT_THROW(make_backend("dnnl")->configure(s), SettingError);
  const BackendInfo* ref = backend_registry().find("reference");
  ASSERT_NE(ref, nullptr);
  EXPECT_THROW(check_cpu_settings(*ref, s), SettingError);
}

// The calibration pass records each conv/fc input's exact range, and the range of every output
// that a conv, fc or Add reads and of every residual sum (an Add, the ReLU after one), under
// output_range_key.
TEST(Calibration, RangesOfEveryLayerInput) {
  Graph g({1, 2, 4, 4});
  const int c1 = g.conv(g.input(), 3, 3, 1, 1, true, "c1");
  const int r = g.relu(c1, "r");
  g.fully_connected(g.add(r, c1, "s"), 5, true, "fc");
  g.finalize();
  auto be = fp32_backend("reference");
  Network net(*be, g, calibration_options(2, 1));
  std::vector<float> a(64), b(64);
  for (int i = 0; i < 64; ++i) {
    a[i] = static_cast<float>(i) * 0.1f - 1.0f;  // -1 .. 5.3
    b[i] = static_cast<float>(i) * -0.2f;          // -12.6 .. 0
  }
  const ActivationRanges got = calibrate(net, 2, [&](Network& n, int k) { n.set_input((k ? b : a).data(), nullptr); });
  ASSERT_EQ(got.size(), 6u);  // c1, fc; the outputs of the input, c1, r and s
  EXPECT_FLOAT_EQ(got.at("c1").min, -12.6f);
  EXPECT_FLOAT_EQ(got.at("c1").max, 5.3f);
  const std::string in = output_range_key(g.node(g.input()).name);
  EXPECT_FLOAT_EQ(got.at(in).min, -12.6f);
  EXPECT_FLOAT_EQ(got.at(in).max, 5.3f);
  const ValueRange conv = got.at(output_range_key("c1")), relu = got.at(output_range_key("r")),
                   sum = got.at(output_range_key("s"));
  EXPECT_LT(conv.min, 0.0f);
  EXPECT_FLOAT_EQ(relu.min, 0.0f);  // after the ReLU
  EXPECT_FLOAT_EQ(relu.max, conv.max);
  EXPECT_FLOAT_EQ(sum.max, 2 * conv.max);
  EXPECT_FLOAT_EQ(got.at("fc").min, sum.min);
  EXPECT_FLOAT_EQ(got.at("fc").max, sum.max);
}

}  // namespace
}  // namespace hpcnn
