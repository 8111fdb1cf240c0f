// The cost of hpcnn's watchdog wrappers (src/harness/mpi_watch.cpp) on the calls hpcnn-allreduce
// times: MPI_Allreduce as every hpcnn program calls it (through the wrapper, which marks the wait
// for the watchdog) against PMPI_Allreduce (the bare library, as the OSU benchmarks call it), in
// one process, in alternating blocks of calls so that a drift of the machine reaches both sides.
// Prints, per message size, the median time per call of each side over the rounds, the median of
// the paired per-round differences with its interquartile range, and the ratio.
//
//   mpirun -np 2 bench/mpi_watch_cost [CALLS_PER_BLOCK] [ROUNDS]      (defaults 2000 and 31)
//
// Linked with libhpcnn.a like the suites, so MPI_Allreduce here is the wrapper.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double quantile_of(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// Seconds per call of `calls` in-place float sums of `count` elements, started together.
template <class Call>
double block_seconds(int calls, std::vector<float>& data, Call call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) call(data.data(), static_cast<int>(data.size()));
  return (MPI_Wtime() - start) / calls;
}

int positive_argument(int argc, char** argv, int index, int fallback) {
  if (argc <= index) return fallback;
  const int value = std::atoi(argv[index]);
  if (value < 1) {
    std::fprintf(stderr, "mpi_watch_cost: '%s' is not a positive count\n", argv[index]);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int calls = positive_argument(argc, argv, 1, 2000), rounds = positive_argument(argc, argv, 2, 31);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto wrapped = [](float* d, int n) { MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
  auto bare = [](float* d, int n) { PMPI_Allreduce(MPI_IN_PLACE, d, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); };
  if (rank == 0)
    std::printf("# MPI_Allreduce through hpcnn's watchdog wrapper vs PMPI_Allreduce, %d ranks, %d calls a block, %d rounds\n"
                "%10s %12s %12s %14s %20s %8s\n",
                size, calls, rounds, "bytes", "wrapped_us", "bare_us", "extra_ns", "extra_ns_p25-p75", "ratio");
  for (const int bytes : {4, 64, 1024, 16384}) {
    std::vector<float> data(static_cast<std::size_t>(bytes) / sizeof(float), 1.0f);
    block_seconds(calls / 4 + 1, data, bare);  // warm-up: connections, buffers, caches
    std::vector<double> with, without, extra;
    for (int r = 0; r < rounds; ++r) {
      double w = 0, b = 0;
      if (r % 2 == 0) {
        w = block_seconds(calls, data, wrapped), b = block_seconds(calls, data, bare);
      } else {
        b = block_seconds(calls, data, bare), w = block_seconds(calls, data, wrapped);
      }
      with.push_back(w), without.push_back(b), extra.push_back(w - b);
    }
    if (rank == 0) {
      const double w = median_of(with), b = median_of(without);
      const std::string range = std::to_string(static_cast<long long>(1e9 * quantile_of(extra, 0.25))) + " to " +
                                std::to_string(static_cast<long long>(1e9 * quantile_of(extra, 0.75)));
      std::printf("%10d %12.3f %12.3f %14.1f %20s %8.3f\n", bytes, 1e6 * w, 1e6 * b, 1e9 * median_of(extra), range.c_str(),
                  w / b);
    }
  }
  MPI_Finalize();
  return 0;
}
