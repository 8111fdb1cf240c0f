// oneDNN backend internals (kernels/dnnl/ only): the engine/stream context shared by the backend
// and its ops, memory descriptors for Tensors (Tensor::layout holds a dnnl::memory::desc; nullptr is
// plain NCHW), and cached conversions between layouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/dnnl/compat.hpp"

#include "engine/backend.hpp"
#include "engine/tensor.hpp"

namespace hpcnn::dnnl_impl {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// Direct: every convolution uses convolution_direct (as PyTorch does). Auto: 3x3 stride-1
// convolutions use Winograd where oneDNN's heuristics pick it (--conv-algorithm, default auto).
enum class ConvAlgorithm { Direct, Auto };

// One engine and one in-order stream per backend; ops keep the context alive.
struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto;
  // What convolutions and inner products read (BackendSettings::precision): f32, or bf16 as
  // PyTorch's CPU autocast runs them: bf16 activations and weights converted on the way in, f32
  // accumulation, f32 output and weight gradients, f32 master weights. Every tensor between ops
  // stays f32.
  memory::data_type compute = memory::data_type::f32;
  // int8 inference (kernels/dnnl/int8.hpp): convolutions and inner products on quantized inputs,
  // with the calibrated ranges (inputs, and outputs read by such layers and residual sums); the
  // layers oneDNN has no optimized int8 kernel for run in FP32 and are listed. A convolution whose
  // readers all take int8 writes its output quantized (u8 or s8): `quantized` holds the scale of
  // every tensor stored so, by its layout (kept alive here, so that no other layout takes its
  // address; a residual sum over a quantized shortcut has a layout of its own for its own scale).
  bool int8 = false;
  std::shared_ptr<const ActivationRanges> ranges;
  std::vector<std::string> fp32_in_int8;
  std::unordered_map<const void*, std::pair<std::shared_ptr<const void>, float>> quantized;
};
using ContextPtr = std::shared_ptr<Context>;

memory::dims dims_of(const Shape& s);                 // {n, c, h, w}
memory::desc plain_desc(const Shape& s);              // f32 nchw
memory::desc any_desc(const Shape& s);                // f32, format chosen by the primitive
memory::desc any_desc(const Shape& s, memory::data_type t);  // of type t, format chosen by the primitive
memory::desc desc_of(const Tensor& t);                // its layout, or plain nchw when null
memory::desc flat_desc(std::size_t count);            // f32 1-D, for raw buffers
// Layout for a tensor of shape s in desc d: nullptr when d is plain nchw (so other code sees the
// contract's "plain"), else a shared copy of d.
std::shared_ptr<const void> make_layout(const memory::desc& d, const Shape& s);
bool is_plain(const memory::desc& d, const Shape& s);

// A memory object bound to a fixed desc; point it at per-call buffers with bind().
class Mem {
 public:
  Mem() = default;
  Mem(const Context& c, const memory::desc& d) : m_(d, c.engine, DNNL_MEMORY_NONE) {}
  memory& bind(const void* p) {
    m_.set_data_handle(const_cast<void*>(p));
    return m_;
  }
  memory::desc desc() const { return m_.get_desc(); }

 private:
  memory m_;
};

// Owned 64-byte aligned scratch storage that only grows.
class Buffer {
 public:
  float* reserve(std::size_t bytes);
  float* data() const { return static_cast<float*>(p_.get()); }

 private:
  std::shared_ptr<void> p_;
  std::size_t bytes_ = 0;
};

// Brings data that arrives in some desc into the desc a primitive wants. When they already match it
// hands back the caller's pointer, otherwise it reorders into an owned buffer. The reorder for a
// source desc is created on first use and reused afterwards (the source desc is normally the same on
// every call, so steady-state calls create nothing).
class Converter {
 public:
  Converter() = default;
  Converter(ContextPtr c, const memory::desc& want) : ctx_(std::move(c)), want_(want) {}
  const memory::desc& want() const { return want_; }
  const float* get(const float* data, const memory::desc& have);
  const float* get(const Tensor& t) { return get(t.data, desc_of(t)); }
  // Writes a result that was produced in want() (at `data`) into `out`, whose desc is `out_desc`.
  // Returns where the producer should write: `out` itself when the descs match, else a buffer,
  // in which case finish() does the reorder.
  float* target(float* out, const memory::desc& out_desc);
  void finish(float* out, const memory::desc& out_desc);
  float* target(Tensor& t) { return target(t.data, desc_of(t)); }
  void finish(Tensor& t) { finish(t.data, desc_of(t)); }

 private:
  struct Cached {
    memory::desc other;
    dnnl::reorder prim;
    Mem src, dst;
  };
  Cached& cached(const memory::desc& other, bool into_want);
  ContextPtr ctx_;
  memory::desc want_;
  Buffer buf_;
  std::unique_ptr<Cached> in_, out_;
};

// A layer's weights in the format its primitive wants, converted again only when the parameters
// may have changed (OpContext::params_version; 0 = unknown, always convert): every step in
// training, once in inference.
class WeightCache {
 public:
  WeightCache() = default;
  WeightCache(ContextPtr c, const memory::desc& want) : conv_(std::move(c), want) {}
  const memory::desc& want() const { return conv_.want(); }
  const float* get(const float* canonical, const memory::desc& canonical_desc, std::uint64_t version) {
    if (!w_ || version == 0 || version != version_ || canonical != source_) {
      w_ = conv_.get(canonical, canonical_desc);
      version_ = version;
      source_ = canonical;
    }
    return w_;
  }
  const float* last() const { return w_; }  // what the latest get() returned

 private:
  Converter conv_;
  const float* w_ = nullptr;
  std::uint64_t version_ = 0;
  const float* source_ = nullptr;
};

// Copy or convert src (desc sd) into dst (desc dd) with a cached reorder (used by the backend's
// layout-aware memory calls and by ops whose backward is a copy).
class Copier {
 public:
  explicit Copier(ContextPtr c) : ctx_(std::move(c)) {}
  void run(const float* src, const memory::desc& sd, float* dst, const memory::desc& dd);

 private:
  struct Entry {
    memory::desc sd, dd;
    dnnl::reorder prim;
    Mem src, dst;
  };
  ContextPtr ctx_;
  std::vector<std::unique_ptr<Entry>> entries_;  // few distinct pairs; searched linearly
};

// Runs a primitive on the context's stream.
inline void execute(const Context& c, const dnnl::primitive& p,
                    const std::unordered_map<int, memory>& args) {
  p.execute(c.stream, args);
}

// True when oneDNN picked its reference (unoptimized) implementation for a primitive descriptor.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);

// dst[i] += src[i] over n floats, threaded.
void add_floats(float* dst, const float* src, std::size_t n);

}  // namespace hpcnn::dnnl_impl
