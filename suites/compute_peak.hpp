// The machine's measured peaks for a number of threads, so a suite can report achieved GFLOP/s as
// a fraction of what the cores can do in that precision (hpcnn-blas's peak_fraction): FP32 fused
// multiply-adds, and BF16 dot products (AVX512_BF16's VDPBF16PS: pairs of bf16 products summed
// into fp32) and int8 dot products (AVX512_VNNI's VPDPBUSD: four u8 x s8 products summed into
// int32) where the CPU has them.
// Same method as bench/fma_peak (independent FMA chains in vector registers, one unpinned
// std::thread each), short: the best of a few 50 ms trials, each thread's FMAs divided by its own
// CPU time (so other jobs on a shared machine do not lower it). Cached per thread count.
#pragma once

#include "engine/backend.hpp"

namespace hpcnn {

// GFLOP/s (one FMA = 2 FLOP) with min(threads, allowed CPUs) threads; threads < 1 counts as 1.
double fp32_peak_gflops(int threads);
// The same for bf16 (one pair of products and their sum into fp32 = 4 FLOP per lane); 0 where the
// CPU has no AVX512_BF16. AMX tiles are not measured: on an AMX CPU this is the vector units' peak.
double bf16_peak_gflops(int threads);
// The same for int8 in GOP/s (a multiply and an add = 2 operations, as for the others); 0 where
// the CPU has no AVX512_VNNI (AMX tiles and AVX-VNNI are not measured).
double int8_peak_gops(int threads);
// The peak of a CPU precision: fp32, bf16 or int8 above; 0 for tf32 (a GPU format).
double peak_for(Precision p, int threads);

// CPUs in this process's affinity mask (a Slurm job may get fewer than the node has).
int allowed_cpus();

}  // namespace hpcnn
