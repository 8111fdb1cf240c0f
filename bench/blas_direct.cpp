// blas_direct: OpenBLAS's cblas_sgemm called directly, with nothing of hpcnn around it: the
// yardstick that hpcnn-blas --sweep gemm must match (bench/blas_direct.sh compares the two).
//
// Usage: blas_direct N[,N...] THREADS CALLS WARMUP
// Prints one line per size: "N GFLOP/s BEST_GFLOP/s CPU_GFLOP/s": the first from the median of
// CALLS timed calls, the second from the fastest call (C = A B, square, row-major, A and B uniform in [-1, 1)) after WARMUP untimed calls; the
// second is all timed FLOPs over the process's CPU seconds spent in them (getrusage, every
// thread), i.e. the rate of one core while it ran this job: on a machine shared with other jobs it
// shows what the library does when it gets the cores (wall-clock rates cannot), though OpenBLAS's
// spin-waiting counts as CPU time and lowers it.
#include <cblas.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s N[,N...] THREADS CALLS WARMUP\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[2]), calls = std::atoi(argv[3]), warmup = std::atoi(argv[4]);
  if (threads < 1 || calls < 1 || warmup < 0) {
    std::fprintf(stderr, "%s: THREADS and CALLS must be >= 1, WARMUP >= 0\n", argv[0]);
    return 2;
  }
  openblas_set_num_threads(threads);
  std::stringstream sizes(argv[1]);
  for (std::string item; std::getline(sizes, item, ',');) {
    const int n = std::atoi(item.c_str());
    if (n < 1) {
      std::fprintf(stderr, "%s: bad size '%s'\n", argv[0], item.c_str());
      return 2;
    }
    const std::size_t count = std::size_t(n) * n;
    std::vector<float> a(count), b(count), c(count);
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t i = 0; i < count; ++i) {
      a[i] = u(gen);
      b[i] = u(gen);
    }
    auto call = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                  c.data(), n);
    };
    for (int i = 0; i < warmup; ++i) call();
    std::vector<double> t;
    const double cpu0 = cpu_seconds();
    for (int i = 0; i < calls; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      call();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double cpu = cpu_seconds() - cpu0;
    std::sort(t.begin(), t.end());
    const double median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
    const double flops = 2.0 * n * n * double(n);
    std::printf("%d %.3f %.3f %.3f\n", n, flops / median * 1e-9, flops / t.front() * 1e-9,
                cpu > 0 ? flops * calls / cpu * 1e-9 : 0.0);
  }
  return 0;
}
