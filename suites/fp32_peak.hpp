// The machine's measured FP32 fused-multiply-add peak for a number of threads, so a suite can
// report achieved GFLOP/s as a fraction of what the cores can do (hpcnn-blas's peak_fraction).
// Same method as bench/fma_peak (independent FMA chains in vector registers, one unpinned
// std::thread each), short: the best of a few 50 ms trials, each thread's FMAs divided by its own
// CPU time (so other jobs on a shared machine do not lower it). Cached per thread count.
#pragma once

namespace hpcnn {

// GFLOP/s (one FMA = 2 FLOP) with min(threads, allowed CPUs) threads; threads < 1 counts as 1.
double fp32_peak_gflops(int threads);

// CPUs in this process's affinity mask (a Slurm job may get fewer than the node has).
int allowed_cpus();

}  // namespace hpcnn
