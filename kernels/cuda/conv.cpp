// Convolution through cuDNN: forward, backward data and backward filter, algorithms chosen by
// cuDNN's heuristics (the first that fits the workspace limit) or, with --cudnn-benchmark, by
// timing every algorithm on the real buffers at the first call. The activations are in the
// backend's layout; weights are converted from the canonical FP32 OIHW to OHWI and/or BF16 once
// per parameter version when the layout asks for it. In inference a folded batch norm (weights
// scaled and a bias per output channel, kernels.cu fold_batch_norm, redone per parameter version)
// and a ReLU run as the bias pass after the convolution (one pass instead of the batch norm's and
// the ReLU's).
#include <array>
#include <string>

#include "base/errors.hpp"
#include "kernels/cuda/conv_graph.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/kernels.hpp"
#include "kernels/cuda/ops.hpp"

namespace hpcnn::cuda {

const void* WeightCopy::update(Context& c, const float* canonical, std::uint64_t version,
                               void (*convert)(Context&, const float*, void*, const void*), const void* arg,
                               std::size_t bytes) {
  if (!buf_) buf_ = c.alloc(bytes);
  if (version == 0 || version != version_ || canonical != source_) {
    convert(c, canonical, buf_.get(), arg);
    version_ = version;
    source_ = canonical;
  }
  return buf_.get();
}

namespace {

struct FilterDesc {
  FilterDesc(const Layout& l, int o, int i, int kh, int kw) {
    check_cudnn(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor");
    check_cudnn(cudnnSetFilter4dDescriptor(d, l.bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT,
                                           l.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, o, i, kh, kw),
                "cudnnSetFilter4dDescriptor");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  cudnnFilterDescriptor_t d = nullptr;
};

struct ConvDesc {
  ConvDesc(const OpAttr& a, cudnnMathType_t math) {
    check_cudnn(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
    check_cudnn(cudnnSetConvolution2dDescriptor(d, a.ph, a.pw, a.sh, a.sw, 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT),
                "cudnnSetConvolution2dDescriptor");
    check_cudnn(cudnnSetConvolutionMathType(d, math), "cudnnSetConvolutionMathType");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  cudnnConvolutionDescriptor_t d = nullptr;
};

// The first usable entry of a perf list (sorted fastest first by cuDNN), within the workspace limit.
template <typename Perf>
Perf pick(const Perf* perf, int count, std::size_t limit, const std::string& what) {
  for (int k = 0; k < count; ++k)
    if (perf[k].status == CUDNN_STATUS_SUCCESS && perf[k].memory <= limit) return perf[k];
  throw RuntimeError("cuDNN: no " + what + " algorithm fits " + std::to_string(limit >> 20) + " MiB of workspace");
}

struct WeightArgs {
  Layout l;
  int o, i, kh, kw;
};

void convert_weights(Context& c, const float* src, void* dst, const void* arg) {
  const auto* a = static_cast<const WeightArgs*>(arg);
  weights_to(src, dst, {a->l.nhwc, a->l.bf16}, a->o, a->i, a->kh, a->kw, c.stream);
}

class ConvOp final : public Op {
 public:
  ConvOp(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst, const Epilogue& e)
      : c_(c), name_(node.name), attr_(node.attr), fold_(e.batch_norm != nullptr), relu_(e.relu),
        bn_eps_(e.batch_norm ? e.batch_norm->attr.eps : 0.0f), in_(src[0]->shape),
        out_{in_.n, node.out.c, node.out.h, node.out.w},
        l_{c->act_nhwc, c->act_bf16},
        wargs_{l_, node.out.c, in_.c, node.attr.kh, node.attr.kw},
        x_desc_(in_, l_), y_desc_(out_, l_), w_desc_(l_, wargs_.o, wargs_.i, wargs_.kh, wargs_.kw),
        fwd_(attr_, c->conv_math), bwd_data_(attr_, c->conv_math), bwd_filter_(attr_, c->conv_math) {
    if ((fold_ || relu_) && mode == Mode::Train)
      throw std::logic_error("cuda conv: a batch norm or ReLU is folded into a convolution only in inference");
    dst.shape = out_;
    dst.layout = make_layout(out_, l_.nhwc, l_.bf16);
    weight_count_ = std::size_t(wargs_.o) * wargs_.i * wargs_.kh * wargs_.kw;
    converted_ = l_.nhwc || l_.bf16;
    if (c->graph_api) {  // preferred; the legacy calls stay as the fallback of each direction
      const Shape wshape{wargs_.o, wargs_.i, wargs_.kh, wargs_.kw};
      const bool tc = c->settings.precision != Precision::Fp32;
      auto make = [&](ConvKind k) {
        auto g = std::make_unique<GraphConv>(*c, k, in_, wshape, out_, attr_, l_, tc);
        return g->ok() ? std::move(g) : nullptr;
      };
      g_fwd_ = make(ConvKind::Forward);
      if (mode == Mode::Train) {
        g_bwd_data_ = make(ConvKind::BackwardData);
        g_bwd_filter_ = make(ConvKind::BackwardFilter);
      }
    }
    // Legacy algorithms only where a direction has no graph plan (with --cudnn-benchmark they are
    // timed at the first call instead).
    const bool legacy_needed = !g_fwd_ || (mode == Mode::Train && (!g_bwd_data_ || !g_bwd_filter_));
    if (legacy_needed && !c->settings.cudnn_benchmark) choose_by_heuristics(mode);
  }

  void forward(const OpContext& ctx) override {
    Context& c = *c_;
    const void* x = as_layout(c, *ctx.src[0], l_, 0);
    const float* canonical = fold_ ? folded(ctx) : ctx.weights;  // weights, then the bias if any
    const void* w = weights(canonical, ctx.params_version);
    if (g_fwd_) {
      if (!tuned_fwd_ && c.settings.cudnn_benchmark) g_fwd_->autotune(const_cast<void*>(x), const_cast<void*>(w), ctx.dst->data);
      tuned_fwd_ = true;
      g_fwd_->run(const_cast<void*>(x), const_cast<void*>(w), ctx.dst->data);
    } else {
      forward_legacy(x, w, ctx.dst->data);
    }
    if (attr_.bias || fold_)
      bias_forward(out_, {l_.nhwc, l_.bf16}, ctx.dst->data, canonical + weight_count_, relu_, c.stream);
    else if (relu_)
      act_forward(Act::Relu, ctx.dst->data, ctx.dst->data, out_.count(), l_.bf16, c.stream);
  }

  void forward_legacy(const void* x, const void* w, void* y) {
    Context& c = *c_;
    if (!chosen_fwd_) benchmark_forward(x, w, y);
    static const float one = 1.0f, zero = 0.0f;
    check_cudnn(cudnnConvolutionForward(c.cudnn, &one, x_desc_.d, x, w_desc_.d, w, fwd_.d, fwd_algo_,
                                        c.workspace(fwd_ws_), fwd_ws_, &zero, y_desc_.d, y),
                "cudnnConvolutionForward");
  }

  void backward(const OpContext& ctx) override {
    Context& c = *c_;
    static const float one = 1.0f, zero = 0.0f;
    const void* dy = as_layout(c, *ctx.diff_dst, l_, 1);
    const void* x = as_layout(c, *ctx.src[0], l_, 0);
    const void* w = copied_ ? wcopy_.get() : ctx.weights;
    Tensor* dx_t = ctx.diff_src.empty() ? nullptr : ctx.diff_src[0];
    const bool dw_copy = converted_ || !aligned(ctx.diff_weights);
    void* dw = dw_copy ? dw_buf() : ctx.diff_weights;
    void* dx = nullptr;
    if (dx_t) dx = same_memory(in_, l_, layout_of(*dx_t)) ? dx_t->data : c.scratch(2, in_.count() * elem_bytes(l_));
    const bool tune = !tuned_bwd_ && c.settings.cudnn_benchmark;
    tuned_bwd_ = true;
    if ((!g_bwd_filter_ || (dx_t && !g_bwd_data_)) && !chosen_bwd_) benchmark_backward(x, dy, w, dw, dx);
    void* xm = const_cast<void*>(x);
    void* dym = const_cast<void*>(dy);
    void* wm = const_cast<void*>(w);
    if (g_bwd_filter_) {
      if (tune) g_bwd_filter_->autotune(xm, dw, dym);
      g_bwd_filter_->run(xm, dw, dym);
    } else {
      check_cudnn(cudnnConvolutionBackwardFilter(c.cudnn, &one, x_desc_.d, x, y_desc_.d, dy, bwd_filter_.d,
                                               bwd_filter_algo_, c.workspace(bwd_filter_ws_), bwd_filter_ws_, &zero,
                                               w_desc_.d, dw),
                "cudnnConvolutionBackwardFilter");
    }
    if (dw_copy)
      weights_from(dw, {l_.nhwc, l_.bf16}, ctx.diff_weights, wargs_.o, wargs_.i, wargs_.kh, wargs_.kw, c.stream);
    if (attr_.bias) bias_backward(out_, {l_.nhwc, l_.bf16}, dy, ctx.diff_weights + weight_count_, c.stream);
    if (!dx_t) return;
    if (g_bwd_data_) {
      if (tune) g_bwd_data_->autotune(dx, wm, dym);
      g_bwd_data_->run(dx, wm, dym);
    } else {
      check_cudnn(cudnnConvolutionBackwardData(c.cudnn, &one, w_desc_.d, w, y_desc_.d, dy, bwd_data_.d, bwd_data_algo_,
                                               c.workspace(bwd_data_ws_), bwd_data_ws_, &zero, x_desc_.d, dx),
                  "cudnnConvolutionBackwardData");
    }
    if (dx != dx_t->data) store_as(c, dx, l_, *dx_t);
  }

 private:
  const void* weights(const float* canonical, std::uint64_t version) {
    copied_ = converted_ || !aligned(canonical);
    if (!copied_) return canonical;
    return wcopy_.update(*c_, canonical, version, convert_weights, &wargs_, weight_count_ * elem_bytes(l_));
  }
  // The folded batch norm's weights and bias (fp32 OIHW, then O), redone per parameter version.
  const float* folded(const OpContext& ctx) {
    if (!ctx.bn_weights || !ctx.bn_mean || !ctx.bn_var)
      throw std::logic_error("cuda conv " + name_ + ": folded batch norm without its parameters in the context");
    if (!folded_) folded_ = c_->alloc((weight_count_ + std::size_t(wargs_.o)) * sizeof(float));
    auto* out = static_cast<float*>(folded_.get());
    if (folded_version_ == 0 || ctx.params_version != folded_version_) {
      fold_batch_norm(ctx.weights, attr_.bias ? ctx.weights + weight_count_ : nullptr, wargs_.o,
                      weight_count_ / std::size_t(wargs_.o), ctx.bn_weights, ctx.bn_mean, ctx.bn_var, bn_eps_, out,
                      out + weight_count_, c_->stream);
      folded_version_ = ctx.params_version;
    }
    return out;
  }
  void* dw_buf() {
    if (!dw_) dw_ = c_->alloc(weight_count_ * elem_bytes(l_));
    return dw_.get();
  }

  void choose_by_heuristics(Mode mode) {
    Context& c = *c_;
    constexpr int kMax = 16;
    int n = 0;
    std::array<cudnnConvolutionFwdAlgoPerf_t, kMax> f{};
    check_cudnn(cudnnGetConvolutionForwardAlgorithm_v7(c.cudnn, x_desc_.d, w_desc_.d, fwd_.d, y_desc_.d, kMax, &n, f.data()),
                "cudnnGetConvolutionForwardAlgorithm_v7");
    set_forward(pick(f.data(), n, c.workspace_limit, "forward convolution (" + name_ + ")"));
    chosen_fwd_ = true;
    if (mode != Mode::Train) return;
    std::array<cudnnConvolutionBwdDataAlgoPerf_t, kMax> d{};
    check_cudnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(c.cudnn, w_desc_.d, y_desc_.d, bwd_data_.d, x_desc_.d, kMax,
                                                            &n, d.data()),
                "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    set_backward_data(pick(d.data(), n, c.workspace_limit, "backward-data convolution (" + name_ + ")"));
    std::array<cudnnConvolutionBwdFilterAlgoPerf_t, kMax> w{};
    check_cudnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(c.cudnn, x_desc_.d, y_desc_.d, bwd_filter_.d, w_desc_.d,
                                                              kMax, &n, w.data()),
                "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    set_backward_filter(pick(w.data(), n, c.workspace_limit, "backward-filter convolution (" + name_ + ")"));
    chosen_bwd_ = true;
  }

  void set_forward(const cudnnConvolutionFwdAlgoPerf_t& p) {
    fwd_algo_ = p.algo;
    fwd_ws_ = p.memory;
    check_cudnn(cudnnSetConvolutionMathType(fwd_.d, p.mathType), "cudnnSetConvolutionMathType");
  }
  void set_backward_data(const cudnnConvolutionBwdDataAlgoPerf_t& p) {
    bwd_data_algo_ = p.algo;
    bwd_data_ws_ = p.memory;
    check_cudnn(cudnnSetConvolutionMathType(bwd_data_.d, p.mathType), "cudnnSetConvolutionMathType");
  }
  void set_backward_filter(const cudnnConvolutionBwdFilterAlgoPerf_t& p) {
    bwd_filter_algo_ = p.algo;
    bwd_filter_ws_ = p.memory;
    check_cudnn(cudnnSetConvolutionMathType(bwd_filter_.d, p.mathType), "cudnnSetConvolutionMathType");
  }

  // --cudnn-benchmark: time every algorithm once on the real buffers (outputs are overwritten by
  // the real call that follows).
  void benchmark_forward(const void* x, const void* w, void* y) {
    Context& c = *c_;
    constexpr int kMax = 16;
    int n = 0;
    std::array<cudnnConvolutionFwdAlgoPerf_t, kMax> f{};
    const std::size_t ws = c.workspace_limit;
    check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(c.cudnn, x_desc_.d, x, w_desc_.d, w, fwd_.d, y_desc_.d, y, kMax,
                                                       &n, f.data(), c.workspace(ws), ws),
                "cudnnFindConvolutionForwardAlgorithmEx");
    set_forward(pick(f.data(), n, ws, "forward convolution (" + name_ + ")"));
    chosen_fwd_ = true;
  }
  void benchmark_backward(const void* x, const void* dy, const void* w, void* dw, void* dx) {
    Context& c = *c_;
    constexpr int kMax = 16;
    int n = 0;
    const std::size_t ws = c.workspace_limit;
    std::array<cudnnConvolutionBwdFilterAlgoPerf_t, kMax> f{};
    check_cudnn(cudnnFindConvolutionBackwardFilterAlgorithmEx(c.cudnn, x_desc_.d, x, y_desc_.d, dy, bwd_filter_.d,
                                                              w_desc_.d, dw, kMax, &n, f.data(), c.workspace(ws), ws),
                "cudnnFindConvolutionBackwardFilterAlgorithmEx");
    set_backward_filter(pick(f.data(), n, ws, "backward-filter convolution (" + name_ + ")"));
    std::array<cudnnConvolutionBwdDataAlgoPerf_t, kMax> d{};
    void* dx_probe = dx ? dx : c.scratch(2, in_.count() * elem_bytes(l_));
    check_cudnn(cudnnFindConvolutionBackwardDataAlgorithmEx(c.cudnn, w_desc_.d, w, y_desc_.d, dy, bwd_data_.d,
                                                            x_desc_.d, dx_probe, kMax, &n, d.data(), c.workspace(ws), ws),
                "cudnnFindConvolutionBackwardDataAlgorithmEx");
    set_backward_data(pick(d.data(), n, ws, "backward-data convolution (" + name_ + ")"));
    chosen_bwd_ = true;
  }

  ContextPtr c_;
  std::string name_;
  OpAttr attr_;
  bool fold_, relu_;  // inference epilogue: folded batch norm, ReLU
  float bn_eps_;
  DeviceBuffer folded_;
  std::uint64_t folded_version_ = 0;
  Shape in_, out_;
  Layout l_;
  WeightArgs wargs_;
  TensorDesc x_desc_, y_desc_;
  FilterDesc w_desc_;
  ConvDesc fwd_, bwd_data_, bwd_filter_;
  std::size_t weight_count_ = 0;
  bool converted_ = false;  // the layout needs other weights than the canonical ones
  bool copied_ = false;     // this step's forward used wcopy_ (converted, or for alignment)
  WeightCopy wcopy_;
  DeviceBuffer dw_;
  bool chosen_fwd_ = false, chosen_bwd_ = false;
  std::unique_ptr<GraphConv> g_fwd_, g_bwd_data_, g_bwd_filter_;  // null: legacy calls
  bool tuned_fwd_ = false, tuned_bwd_ = false;
  cudnnConvolutionFwdAlgo_t fwd_algo_{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_algo_{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo_{};
  std::size_t fwd_ws_ = 0, bwd_data_ws_ = 0, bwd_filter_ws_ = 0;
};

}  // namespace

std::unique_ptr<Op> make_conv(const ContextPtr& c, const Node& node, Inputs src, Mode mode, Tensor& dst,
                              const Epilogue& e) {
  return std::make_unique<ConvOp>(c, node, src, mode, dst, e);
}

}  // namespace hpcnn::cuda
