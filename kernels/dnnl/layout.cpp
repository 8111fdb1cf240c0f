// Memory descriptors for tensors and cached reorders for the oneDNN backend.
#include "kernels/dnnl/layout.hpp"

#include <omp.h>

#include <string>

#include "engine/cpu_backend.hpp"

namespace hpcnn::dnnl_impl {

memory::dims dims_of(const Shape& s) { return {s.n, s.c, s.h, s.w}; }

memory::desc plain_desc(const Shape& s) { return memory::desc(dims_of(s), dt::f32, tag::nchw); }

memory::desc any_desc(const Shape& s) { return any_desc(s, dt::f32); }

memory::desc any_desc(const Shape& s, memory::data_type t) { return memory::desc(dims_of(s), t, tag::any); }

memory::desc flat_desc(std::size_t count) {
  return memory::desc({static_cast<memory::dim>(count)}, dt::f32, tag::x);
}

memory::desc desc_of(const Tensor& t) {
  if (!t.layout) return plain_desc(t.shape);
  return *static_cast<const memory::desc*>(t.layout.get());
}

bool is_plain(const memory::desc& d, const Shape& s) { return d == plain_desc(s); }

std::shared_ptr<const void> make_layout(const memory::desc& d, const Shape& s) {
  if (is_plain(d, s)) return nullptr;
  return std::make_shared<const memory::desc>(d);
}

float* Buffer::reserve(std::size_t bytes) {
  if (bytes > bytes_) {
    p_ = aligned_host_alloc(bytes);
    bytes_ = bytes;
  }
  return data();
}

Converter::Cached& Converter::cached(const memory::desc& other, bool into_want) {
  std::unique_ptr<Cached>& c = into_want ? in_ : out_;
  if (!c || !(c->other == other)) {
    const memory::desc& s = into_want ? other : want_;
    const memory::desc& d = into_want ? want_ : other;
    c = std::make_unique<Cached>(Cached{other, dnnl::reorder(dnnl::reorder::primitive_desc(
                                                   ctx_->engine, s, ctx_->engine, d)),
                                        Mem(*ctx_, s), Mem(*ctx_, d)});
  }
  return *c;
}

const float* Converter::get(const float* data, const memory::desc& have) {
  if (have == want_) return data;
  Cached& c = cached(have, true);
  float* out = buf_.reserve(want_.get_size());
  execute(*ctx_, c.prim, {{DNNL_ARG_FROM, c.src.bind(data)}, {DNNL_ARG_TO, c.dst.bind(out)}});
  return out;
}

float* Converter::target(float* out, const memory::desc& out_desc) {
  if (out_desc == want_) return out;
  return buf_.reserve(want_.get_size());
}

void Converter::finish(float* out, const memory::desc& out_desc) {
  if (out_desc == want_) return;
  Cached& c = cached(out_desc, false);
  execute(*ctx_, c.prim,
          {{DNNL_ARG_FROM, c.src.bind(buf_.data())}, {DNNL_ARG_TO, c.dst.bind(out)}});
}

void Copier::run(const float* src, const memory::desc& sd, float* dst, const memory::desc& dd) {
  Entry* e = nullptr;
  for (auto& x : entries_)
    if (x->sd == sd && x->dd == dd) e = x.get();
  if (!e) {
    entries_.push_back(std::make_unique<Entry>(
        Entry{sd, dd, dnnl::reorder(dnnl::reorder::primitive_desc(ctx_->engine, sd, ctx_->engine, dd)),
              Mem(*ctx_, sd), Mem(*ctx_, dd)}));
    e = entries_.back().get();
  }
  execute(*ctx_, e->prim, {{DNNL_ARG_FROM, e->src.bind(src)}, {DNNL_ARG_TO, e->dst.bind(dst)}});
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

void add_floats(float* dst, const float* src, std::size_t n) {
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for simd schedule(static) if (count > 32768)
  for (std::ptrdiff_t i = 0; i < count; ++i) dst[i] += src[i];
}

}  // namespace hpcnn::dnnl_impl
