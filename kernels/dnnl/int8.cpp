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

std::optional<ActivationQuantization> activation_quantization(const ValueRange& r, memory::data_type type) {
  const ActivationQuantization natural = activation_quantization(r);
  if (type == natural.type) return natural;
  if (type != dt::s8) return std::nullopt;  // u8 for a range below zero
  const float largest = r.abs_max();
  return ActivationQuantization{dt::s8, largest > 0.0f ? largest / 127.0f : 1.0f};
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

// A layer's input in the primitive's int8 src format. FP32 activations (in whatever format they
// arrive) are divided by the activation scale, rounded to nearest and saturated; an input its
// producer already wrote quantized for this layer is read as it is (reordered only where the
// producer's format differs). The reorder for a source format is made on first use.
class ActivationQuantizer {
 public:
  ActivationQuantizer() = default;
  ActivationQuantizer(ContextPtr c, const memory::desc& want, float scale)
      : ctx_(std::move(c)), want_(want), scale_(scale) {}

  const void* get(const Tensor& t) {
    const memory::desc have = desc_of(t);
    if (!ready_ || !(have_ == have)) prepare(t, have);
    if (direct_) return t.data;
    void* out = buf_.reserve(want_.get_size());
    std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, src_.bind(t.data)}, {DNNL_ARG_TO, dst_.bind(out)}};
    if (quantize_) compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_DST, &scale_, 1);
    execute(*ctx_, prim_, args);
    return out;
  }

 private:
  void prepare(const Tensor& t, const memory::desc& have) {
    const float stored = quantized_scale(*ctx_, t);
    quantize_ = stored == 0.0f;
    if (quantize_ && compat::data_type_of(have) != dt::f32)
      throw std::logic_error("dnnl int8: an input arrives in int8 without its scale");
    if (!quantize_ && (stored != scale_ || compat::data_type_of(have) != compat::data_type_of(want_)))
      throw std::logic_error("dnnl int8: an input arrives quantized for another layer");
    direct_ = !quantize_ && have == want_;
    if (!direct_) {
      primitive_attr attr;
      if (quantize_) compat::set_quantize_scale(attr, scale_);
      prim_ = reorder(reorder::primitive_desc(ctx_->engine, have, ctx_->engine, want_, attr));
      src_ = Mem(*ctx_, have);
      dst_ = Mem(*ctx_, want_);
    }
    have_ = have;
    ready_ = true;
  }

  ContextPtr ctx_;
  memory::desc want_, have_;
  float scale_ = 1.0f;
  bool ready_ = false, quantize_ = true, direct_ = false;
  reorder prim_;
  Mem src_, dst_;
  Buffer buf_;
};

// An int8 tensor into FP32 (value = scale * integer), in out_desc; the reorder is made again only
// when the source desc or the scale changes.
class Dequantizer {
 public:
  void run(const Context& c, const Tensor& t, float scale, float* out, const memory::desc& out_desc) {
    const memory::desc have = desc_of(t);
    if (!ready_ || !(have_ == have) || !(out_ == out_desc) || scale != scale_) {
      primitive_attr attr;
      compat::set_dequantize_scale(attr, scale);
      prim_ = reorder(reorder::primitive_desc(c.engine, have, c.engine, out_desc, attr));
      src_ = Mem(c, have);
      dst_ = Mem(c, out_desc);
      have_ = have;
      out_ = out_desc;
      scale_ = scale;
      ready_ = true;
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_FROM, src_.bind(t.data)}, {DNNL_ARG_TO, dst_.bind(out)}};
    compat::int8_scale_arg(args, c.engine, DNNL_ARG_FROM, &scale_, 1);
    execute(c, prim_, args);
  }

 private:
  memory::desc have_, out_;
  float scale_ = 0.0f;
  bool ready_ = false;
  reorder prim_;
  Mem src_, dst_;
};

// The FP32 op of a layer that fell back from int8 while some input arrives quantized: it was made
// on plain-NCHW FP32 stand-ins for those inputs, which are dequantized before every forward.
class Fp32InputsOp final : public Op {
 public:
  Fp32InputsOp(const ContextPtr& c, Inputs src, const std::function<std::unique_ptr<Op>(Inputs)>& make) : ctx_(c) {
    const std::size_t n = src.size();
    standins_.resize(n);
    scales_.resize(n);
    dequantizers_.resize(n);
    buffers_.resize(n);
    std::vector<const Tensor*> made(n);
    for (std::size_t i = 0; i < n; ++i) {
      scales_[i] = quantized_scale(*c, *src[i]);
      standins_[i] = *src[i];
      if (scales_[i] > 0.0f) {
        standins_[i].layout = nullptr;  // plain NCHW FP32
        standins_[i].data = nullptr;
      }
      made[i] = scales_[i] > 0.0f ? &standins_[i] : src[i];
    }
    inner_ = make(Inputs(made));
  }

  bool made() const { return inner_ != nullptr; }

  void forward(const OpContext& x) override {
    std::vector<const Tensor*> now(x.src.begin(), x.src.end());
    for (std::size_t i = 0; i < now.size() && i < scales_.size(); ++i) {
      if (scales_[i] == 0.0f) continue;
      standins_[i].data = buffers_[i].reserve(plain_desc(x.src[i]->shape).get_size());
      standins_[i].shape = x.src[i]->shape;
      dequantizers_[i].run(*ctx_, *x.src[i], scales_[i], standins_[i].data, plain_desc(x.src[i]->shape));
      now[i] = &standins_[i];
    }
    OpContext y = x;
    y.src = now;
    inner_->forward(y);
  }

  BackwardReads backward_reads() const override { return {false, false}; }
  void backward(const OpContext&) override { throw std::logic_error("dnnl int8: layers are inference only"); }

 private:
  ContextPtr ctx_;
  std::unique_ptr<Op> inner_;
  std::vector<Tensor> standins_;
  std::vector<float> scales_;
  std::vector<Dequantizer> dequantizers_;
  std::vector<Buffer> buffers_;
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
  if (l.sum && l.shortcut) compat::append_int8_sum(ops, l.shortcut->scale, l.out->scale, l.shortcut->type);
  if (l.sum && !l.shortcut) ops.append_sum(1.0f);
  if (l.relu) compat::append_relu(ops);
  attr.set_post_ops(ops);
  compat::set_int8_scales(attr, src_scale, weight_scales, l.out ? l.out->scale : 0.0f);
  return attr;
}

class Int8Op final : public Op {
 public:
  Int8Op(const ContextPtr& c, Int8Layer layer)
      : ctx_(c), l_(std::move(layer)), q_(l_.in ? *l_.in : activation_quantization(calibrated_range(*c, l_.name))) {
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
    // The sum post-op adds onto dst: it must hold the shortcut first (see conv.cpp), in the same
    // bytes (an int8 shortcut under an int8 sum of another type is read as its own type).
    if (l_.sum && x.dst->data != x.src.back()->data)
      std::memcpy(x.dst->data, x.src.back()->data, pd_.dst_desc().get_size());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_.bind(src)},
                                            {DNNL_ARG_WEIGHTS, w_m_.bind(weights_.data())},
                                            {DNNL_ARG_DST, dst_m_.bind(x.dst->data)}};
    if (l_.bias) args[DNNL_ARG_BIAS] = b_m_.bind(bias_.data());
    compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_SRC, &q_.scale, 1);
    compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_WEIGHTS, w_scales_.data(), oc_);
    if (l_.out) compat::int8_scale_arg(args, ctx_->engine, DNNL_ARG_DST, &l_.out->scale, 1);
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

namespace {

// The layer's op as asked (dst FP32 or quantized), or nullptr where oneDNN's kernel for it is its
// reference implementation.
std::unique_ptr<Op> make_checked(const ContextPtr& c, Int8Layer layer, Tensor& dst) {
  auto op = std::make_unique<Int8Op>(c, std::move(layer));
  if (is_reference_impl(op->pd())) return nullptr;
  const memory::desc d = op->pd().dst_desc();
  dst.layout = compat::dims_of(d).size() == 4 ? make_layout(d, dst.shape) : nullptr;  // {n, o}: plain
  return op;
}

}  // namespace

std::unique_ptr<Op> make_int8_layer(const ContextPtr& c, Int8Layer layer, Tensor& dst) {
  if (layer.shortcut) {  // the sum goes over the shortcut's int8 bytes: quantized or not at all
    if (!layer.out) throw std::logic_error("dnnl int8: layer '" + layer.name + "' adds onto int8 without its own scale");
    const float scale = layer.out->scale;
    std::unique_ptr<Op> op = make_checked(c, std::move(layer), dst);
    if (op) c->quantized[dst.layout.get()] = {dst.layout, scale};
    return op;
  }
  if (layer.out) {  // quantized for the readers where oneDNN has that kernel, else FP32
    if (layer.sum || compat::dims_of(layer.dst).size() != 4)
      throw std::logic_error("dnnl int8: layer '" + layer.name + "' cannot write int8 (a sum onto FP32, or not 4-D)");
    Int8Layer q = layer;
    q.dst = memory::desc(compat::dims_of(layer.dst), layer.out->type, tag::any);
    std::unique_ptr<Op> op;
    try {
      op = make_checked(c, std::move(q), dst);
    } catch (const dnnl::error&) {
      op = nullptr;
    }
    if (op) {
      if (!dst.layout) throw std::logic_error("dnnl int8: layer '" + layer.name + "' wrote int8 without a layout");
      c->quantized[dst.layout.get()] = {dst.layout, layer.out->scale};
      return op;
    }
    layer.out.reset();
  }
  return make_checked(c, std::move(layer), dst);
}

std::optional<ValueRange> output_range(const Context& c, const Node* result) {
  if (!c.int8 || !c.ranges || !result) return std::nullopt;
  const auto it = c.ranges->find(output_range_key(result->name));
  if (it == c.ranges->end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::optional<ActivationQuantization> quantization_for(const Context& c, const Epilogue& e) {
  if (e.readers.empty()) return std::nullopt;
  for (const Node* r : e.readers)
    if (r->kind != OpKind::Conv && r->kind != OpKind::FullyConnected && r->kind != OpKind::Add) return std::nullopt;
  const std::optional<ValueRange> r = output_range(c, e.result);
  if (!r) return std::nullopt;
  return activation_quantization(*r);
}

float quantized_scale(const Context& c, const Tensor& t) {
  if (!t.layout) return 0.0f;
  const auto it = c.quantized.find(t.layout.get());
  return it == c.quantized.end() ? 0.0f : it->second.second;
}

std::optional<ActivationQuantization> stored_quantization(const Context& c, const Tensor& t) {
  const float scale = quantized_scale(c, t);
  if (scale == 0.0f) return std::nullopt;
  return ActivationQuantization{compat::data_type_of(desc_of(t)), scale};
}

namespace {

bool any_quantized(const Context& c, Inputs src) {
  return std::any_of(src.begin(), src.end(), [&](const Tensor* t) { return quantized_scale(c, *t) > 0.0f; });
}

}  // namespace

std::unique_ptr<Op> with_fp32_inputs(const ContextPtr& c, Inputs src,
                                     const std::function<std::unique_ptr<Op>(Inputs)>& make) {
  if (!any_quantized(*c, src)) return make(src);
  auto op = std::make_unique<Fp32InputsOp>(c, src, make);
  if (!op->made()) return nullptr;  // make declined (a fusion the backend does not do)
  return op;
}

std::unique_ptr<Op> make_fp32_fallback(const ContextPtr& c, const Node& node, Inputs src,
                                       const std::function<std::unique_ptr<Op>(Inputs)>& make) {
  c->fp32_in_int8.push_back(any_quantized(*c, src) ? node.name + " (on its input rounded to int8)" : node.name);
  return with_fp32_inputs(c, src, make);
}

void dequantize_plain(const ContextPtr& c, const Tensor& t, float* host_nchw) {
  const float scale = quantized_scale(*c, t);
  if (scale == 0.0f) throw std::logic_error("dnnl int8: dequantize_plain of a tensor not stored quantized");
  Dequantizer d;
  d.run(*c, t, scale, host_nchw, plain_desc(t.shape));
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
