// int8 inference of convolutions and fully connected layers (int8.hpp).
#include "kernels/dnnl/int8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace hpcnn::dnnl_impl {

ActivationQuantization activation_quantization(const ValueRange& r) {
  const bool unsigned_range = !r.empty() && r.min >= 0.0f;
  const float levels = unsigned_range ? 255.0f : 127.0f;
  const float largest = r.abs_max();
  return {unsigned_range ? dt::u8 : dt::s8, largest > 0.0f ? largest / levels : 1.0f};
}

namespace {

using namespace dnnl;

const ValueRange& calibrated_range(const Context& c, const std::string& name) {
  if (!c.ranges) throw std::logic_error("dnnl int8: no calibration ranges in the context");
  const auto it = c.ranges->find(name);
  if (it == c.ranges->end() || it->second.empty())
    throw std::logic_error("dnnl int8: no calibration range for layer '" + name + "'");
  return it->second;
}

// FP32 activations (in whatever format they arrive) into the primitive's int8 src format, divided
// by the activation scale, rounded to nearest and saturated. The reorder for a source format is
// made on first use.
class ActivationQuantizer {
 public:
  ActivationQuantizer() = default;
  ActivationQuantizer(ContextPtr c, const memory::desc& want, float scale)
      : ctx_(std::move(c)), want_(want), scale_(scale) {}

  const void* get(const Tensor& t) {
    const memory::desc have = desc_of(t);
    if (!prim_ || !(have_ == have)) {
      primitive_attr attr;
      compat::set_quantize_scale(attr, scale_);
      prim_ = reorder(reorder::primitive_desc(ctx_->engine, have, ctx_->engine, want_, attr));
      have_ = have;
      src_ = Mem(*ctx_, have);
      dst_ = Mem(*ctx_, want_);
    }
    void* out = buf_.reserve(want_.get_size());
    std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, src_.bind(t.data)}, {DNNL_ARG_TO, dst_.bind(out)}};
    compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_DST, &scale_, 1);
    execute(*ctx_, prim_, args);
    return out;
  }

 private:
  ContextPtr ctx_;
  memory::desc want_, have_;
  float scale_ = 1.0f;
  reorder prim_;
  Mem src_, dst_;
  Buffer buf_;
};

// Symmetric per-output-channel s8 weights: scale[o] = max |w[o]| / 127, q = round(w / scale).
void quantize_weights(const float* w, std::size_t oc, std::size_t per, std::int8_t* q, std::vector<float>& scales) {
  scales.assign(oc, 1.0f);
  for (std::size_t o = 0; o < oc; ++o) {
    const float* row = w + o * per;
    float largest = 0.0f;
    for (std::size_t k = 0; k < per; ++k) largest = std::max(largest, std::fabs(row[k]));
    if (largest > 0.0f) scales[o] = largest / 127.0f;
    for (std::size_t k = 0; k < per; ++k) {
      const float v = std::nearbyint(row[k] / scales[o]);
      q[o * per + k] = static_cast<std::int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  }
}

primitive_attr layer_attr(const Int8Layer& l, float src_scale, const std::vector<float>& weight_scales) {
  primitive_attr attr;
  post_ops ops;
  if (l.sum) ops.append_sum(1.0f);
  if (l.relu) compat::append_relu(ops);
  attr.set_post_ops(ops);
  compat::set_int8_scales(attr, src_scale, weight_scales);
  return attr;
}

class Int8Op final : public Op {
 public:
  Int8Op(const ContextPtr& c, Int8Layer layer)
      : ctx_(c), l_(std::move(layer)), q_(activation_quantization(calibrated_range(*c, l_.name))) {
    oc_ = static_cast<std::size_t>(l_.weights.at(0));
    weight_count_ = 1;
    for (memory::dim d : l_.weights) weight_count_ *= static_cast<std::size_t>(d);
    w_scales_.assign(oc_, 1.0f);
    bias_desc_ = l_.bias ? memory::desc({static_cast<memory::dim>(oc_)}, dt::f32, tag::x) : memory::desc();
    pd_ = make_pd(l_.dst);
    prim_ = primitive(pd_);
    src_in_ = ActivationQuantizer(c, pd_.src_desc(), q_.scale);
    w_plain_ = memory::desc(l_.weights, dt::s8, l_.weights.size() == 4 ? tag::oihw : tag::oi);
    w_reorder_ = reorder(reorder::primitive_desc(c->engine, w_plain_, c->engine, pd_.weights_desc()));
    src_m_ = Mem(*c, pd_.src_desc());
    w_m_ = Mem(*c, pd_.weights_desc());
    dst_m_ = Mem(*c, pd_.dst_desc());
    if (l_.bias) b_m_ = Mem(*c, bias_desc_);
  }

  const dnnl::primitive_desc& pd() const { return pd_; }

  void forward(const OpContext& x) override {
    if (x.params_version == 0 || x.params_version != version_) set_weights(x);
    const void* src = src_in_.get(*x.src[0]);
    // The sum post-op adds onto dst: it must hold the shortcut first (see conv.cpp).
    if (l_.sum && x.dst->data != x.src.back()->data)
      std::memcpy(x.dst->data, x.src.back()->data, pd_.dst_desc().get_size());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_.bind(src)},
                                            {DNNL_ARG_WEIGHTS, w_m_.bind(weights_.data())},
                                            {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}};
    if (l_.bias) args[DNNL_ARG_BIAS] = b_m_.bind(bias_.data());
    compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_SRC, &q_.scale, 1);
    compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_WEIGHTS, w_scales_.data(), oc_);
    execute(*ctx_, prim_, args);
  }

  BackwardReads backward_reads() const override { return {false, false}; }
  void backward(const OpContext&) override { throw std::logic_error("dnnl int8: layers are inference only"); }

 private:
  dnnl::primitive_desc make_pd(const memory::desc& dst) const {
    const memory::desc src(dims_of(l_.src), q_.type, tag::any), w(l_.weights, dt::s8, tag::any);
    return l_.make(src, w, bias_desc_, dst, layer_attr(l_, q_.scale, w_scales_));
  }

  // The weights (a folded batch norm's included) quantized per output channel and brought into the
  // primitive's format; the bias in FP32 (divided by the scales where oneDNN adds it before
  // scaling). oneDNN 2.x holds the scales in the primitive: it is made again with the new ones
  // (same formats: the scales' values do not change the kernel).
  void set_weights(const OpContext& x) {
    const float* w = x.weights;
    if (l_.batch_norm) {
      fold_batch_norm(x, weight_count_, oc_, l_.layer_bias, l_.batch_norm->attr.eps, folded_.reserve((weight_count_ + oc_) * sizeof(float)));
      w = folded_.data();
    }
    std::vector<std::int8_t> q(weight_count_);
    quantize_weights(w, oc_, weight_count_ / oc_, q.data(), w_scales_);
    weights_.resize(pd_.weights_desc().get_size());
    Mem from(*ctx_, w_plain_), to(*ctx_, pd_.weights_desc());
    execute(*ctx_, w_reorder_, {{DNNL_ARG_FROM, from.bind(q.data())}, {DNNL_ARG_TO, to.bind(weights_.data())}});
    if (l_.bias) {
      bias_.assign(oc_, 0.0f);
      const bool has = l_.batch_norm || l_.layer_bias;
      for (std::size_t o = 0; has && o < oc_; ++o) {
        const float b = w[weight_count_ + o];
        bias_[o] = compat::kInt8BiasScaled ? b / (q_.scale * w_scales_[o]) : b;
      }
    }
    if (!compat::kV3) {
      const dnnl::primitive_desc again = make_pd(pd_.dst_desc());
      if (!(again.src_desc() == pd_.src_desc()) || !(again.weights_desc() == pd_.weights_desc()))
        throw std::logic_error("dnnl int8: layer '" + l_.name + "' changed its formats with its scales");
      prim_ = primitive(again);
    }
    version_ = x.params_version;
  }

  ContextPtr ctx_;
  Int8Layer l_;
  ActivationQuantization q_;
  std::size_t oc_ = 0, weight_count_ = 0;
  std::vector<float> w_scales_, bias_;
  std::vector<std::int8_t> weights_;  // in the primitive's format (compensation included)
  Buffer folded_;
  std::uint64_t version_ = 0;
  memory::desc bias_desc_, w_plain_;
  dnnl::primitive_desc pd_;
  primitive prim_;
  reorder w_reorder_;
  ActivationQuantizer src_in_;
  Mem src_m_, w_m_, b_m_, dst_m_;
};

}  // namespace

std::unique_ptr<Op> make_int8_layer(const ContextPtr& c, Int8Layer layer, Tensor& dst) {
  auto op = std::make_unique<Int8Op>(c, std::move(layer));
  if (is_reference_impl(op->pd())) return nullptr;
  const memory::desc d = op->pd().dst_desc();
  dst.layout = compat::dims_of(d).size() == 4 ? make_layout(d, dst.shape) : nullptr;  // {n, o}: plain
  return op;
}

std::string int8_kernel_text() {
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const memory::desc src({32, 64, 14, 14}, dt::u8, tag::any), w({64, 64, 3, 3}, dt::s8, tag::any),
        dst({32, 64, 14, 14}, dt::f32, tag::any);
    primitive_attr attr;
    compat::set_int8_scales(attr, 1.0f, std::vector<float>(64, 1.0f));
    const auto pd = compat::conv_forward(engine, prop_kind::forward_inference, algorithm::convolution_direct, src, w,
                                         memory::desc(), dst, {1, 1}, {1, 1}, {1, 1}, attr);
    return std::string(pd.impl_info_str()) + " (ISA " + compat::isa_name(dnnl::get_effective_cpu_isa()) + ")";
  } catch (const dnnl::error& e) {
    return std::string("none: ") + e.what();
  }
}

}  // namespace hpcnn::dnnl_impl
