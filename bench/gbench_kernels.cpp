// Google Benchmark micro-benchmarks of the CPU compute libraries' kernels (`make bench` builds it
// when configure found Google Benchmark; run bench/gbench_kernels [--benchmark_filter=...]):
//   sgemm/<library>/<n>/<threads>          square SGEMM of every registered library
//   conv_fwd|conv_bwd/<backend>/<shape>/<threads>  one resnet50-cifar convolution, batch 64,
//                                          forward or backward (data + weights), per CPU backend
// Counters: GFLOP/s (FLOPs per iteration / time per iteration). Every benchmark runs on
// real time (UseRealTime) since the libraries run their own threads.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "harness/single_op.hpp"
#include "kernels/registry.hpp"
#include "engine/graph.hpp"
#include "base/rng.hpp"
#include "engine/sgemm.hpp"

namespace {

using namespace hpcnn;

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

void sgemm_bench(benchmark::State& state, const std::string& library) {
  const int n = static_cast<int>(state.range(0)), threads = static_cast<int>(state.range(1));
  auto lib = make_sgemm(library);
  lib->set_threads(threads);
  const auto a = random_vector(std::size_t(n) * n, 1), b = random_vector(std::size_t(n) * n, 2);
  std::vector<float> c(std::size_t(n) * n);
  for (auto _ : state) {
    lib->run(false, false, n, n, n, 1.0f, a.data(), b.data(), 0.0f, c.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * double(n), benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
  state.counters["threads_read_back"] = lib->threads();
}

// One convolution of resnet50-cifar at batch 64: input channels, size, output channels, kernel.
struct ConvShape {
  const char* name;
  int c, hw, o, k, stride;
};
const ConvShape kShapes[] = {
    {"64x32x32_3x3_64", 64, 32, 64, 3, 1},   {"128x16x16_3x3_128", 128, 16, 128, 3, 1},
    {"256x8x8_3x3_256", 256, 8, 256, 3, 1},  {"512x4x4_3x3_512", 512, 4, 512, 3, 1},
    {"256x32x32_1x1_64", 256, 32, 64, 1, 1}, {"1024x8x8_1x1_256", 1024, 8, 256, 1, 1},
};

void conv_bench(benchmark::State& state, const std::string& backend, ConvShape s, bool backward) {
  const int threads = static_cast<int>(state.range(0)), batch = 64;
  auto be = make_backend(backend);
  be->set_threads(threads);
  OpAttr a;
  a.out_channels = s.o;
  a.kh = a.kw = s.k;
  a.sh = a.sw = s.stride;
  a.ph = a.pw = s.k / 2;
  Graph g(Shape{1, s.c, s.hw, s.hw});
  const int id = g.append(OpKind::Conv, {g.input()}, a, "conv");
  g.finalize();
  const Node& node = g.node(id);
  SingleOp op(*be, node, Shape{batch, s.c, s.hw, s.hw}, true, 3);
  op.forward();
  for (auto _ : state) {
    if (backward) op.backward();
    else op.forward();
    be->synchronize();
  }
  const double fwd = 2.0 * op.output_shape().count() * s.c * s.k * s.k;
  state.counters["GFLOP/s"] = benchmark::Counter(backward ? 2 * fwd : fwd, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}

// Registered at start-up from what this build has.
const bool registered = [] {
  for (const SgemmInfo& lib : sgemm_libraries())
    benchmark::RegisterBenchmark(("sgemm/" + lib.name).c_str(), sgemm_bench, lib.name)
        ->ArgsProduct({{256, 1024, 2048}, {1, 2}})
        ->ArgNames({"n", "threads"})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  for (const BackendInfo& b : backends()) {
    if (b.name == "reference") continue;  // the oracle, not a contender
    for (const ConvShape& s : kShapes)
      for (bool backward : {false, true})
        benchmark::RegisterBenchmark((std::string(backward ? "conv_bwd/" : "conv_fwd/") + b.name + "/" + s.name).c_str(),
                                     conv_bench, b.name, s, backward)
            ->Arg(2)
            ->ArgName("threads")
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
