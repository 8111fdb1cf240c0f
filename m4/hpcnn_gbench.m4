# hpcnn_gbench.m4: HPCNN_CHECK_GBENCH, Google Benchmark (micro-benchmarks in bench/). Optional.
# Tries pkg-config benchmark, then DIR/include + DIR/lib(64), then the default search paths.
# Sets GBENCH_CPPFLAGS, GBENCH_LDFLAGS, GBENCH_LIBS (-lbenchmark -lpthread), HAVE_GBENCH.
m4_define([hpcnn_gbench_prog], [[#include <benchmark/benchmark.h>
static void conftest_bm(benchmark::State& state) { for (auto _ : state) benchmark::DoNotOptimize(state.iterations()); }
BENCHMARK(conftest_bm);]])
m4_define([hpcnn_gbench_body], [[int argc = 1; char name[] = "conftest"; char* argv[] = {name, nullptr};
  benchmark::Initialize(&argc, argv); benchmark::Shutdown();]])

AC_DEFUN([HPCNN_CHECK_GBENCH], [
HPCNN_WITH([gbench], [GBENCH], [Google Benchmark])
AS_IF([test "$hpcnn_GBENCH_want" != no], [
  HPCNN_PKG_CONFIG([benchmark], [$hpcnn_GBENCH_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [HPCNN_TRY([GBENCH], [pkg-config benchmark], [$hpcnn_split_cppflags], [$hpcnn_split_ldflags],
       [$hpcnn_split_libs -lpthread], [hpcnn_gbench_prog], [hpcnn_gbench_body])])
  AS_IF([test -n "$hpcnn_GBENCH_dir"], [
    HPCNN_LIBDIR([$hpcnn_GBENCH_dir])
    HPCNN_TRY([GBENCH], [$hpcnn_GBENCH_dir], [-I$hpcnn_GBENCH_dir/include], [-L$hpcnn_libdir],
      [-lbenchmark -lpthread], [hpcnn_gbench_prog], [hpcnn_gbench_body])
  ], [
    HPCNN_TRY([GBENCH], [system (-lbenchmark)], [], [], [-lbenchmark -lpthread],
      [hpcnn_gbench_prog], [hpcnn_gbench_body])
  ])
])
HPCNN_DEP_DONE([GBENCH], [Google Benchmark], [benchmark/benchmark.h and libbenchmark], [Debian/Ubuntu: libbenchmark-dev])
])
