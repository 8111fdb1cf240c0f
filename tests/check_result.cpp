// check_result FILE: recomputes every throughput figure of a suite's result file from the raw
// per-iteration times stored in it, and checks the provenance. Exit 0 when all agree.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>

#include "harness/stats.hpp"
#include "results/result_file.hpp"

using namespace hpcnn;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: check_result FILE\n");
    return 2;
  }
  try {
    const ResultRun run = read_result_file(argv[1]);
    int bad = 0;
    auto check = [&](bool ok, const char* what) {
      if (!ok) {
        std::fprintf(stderr, "%s: %s\n", argv[1], what);
        ++bad;
      }
    };
    check(run.schema_version == kSchemaVersion, "schema version");
    check(!run.provenance.command_line.empty(), "command line missing");
    check(static_cast<int>(run.provenance.hosts.size()) == run.provenance.mpi_size, "one host per rank");
    check(!run.provenance.start_time.empty() && !run.provenance.end_time.empty(), "times missing");
    check(!run.points.empty(), "no points");
    for (const ResultPoint& p : run.points) {
      const Array* iters = nullptr;
      for (const Array& a : p.arrays)
        if (a.name == "iter_time_s") iters = &a;
      check(iters != nullptr, "iter_time_s missing");
      if (!iters) continue;
      const auto ranks = static_cast<std::size_t>(p.record.number("ranks").value_or(0));
      const auto n = static_cast<std::size_t>(p.record.number("iters").value_or(0));
      check(iters->dims.size() == 2 && iters->dims[0] == ranks && iters->dims[1] == n, "iter_time_s shape");
      std::vector<double> slowest(n, 0.0);
      for (std::size_t r = 0; r < ranks; ++r)
        for (std::size_t i = 0; i < n; ++i) slowest[i] = std::max(slowest[i], iters->data[r * n + i]);
      const Stats s = compute_stats(slowest);
      const double batch = p.record.number("batch").value_or(0);
      const double expect = batch * static_cast<double>(ranks) / s.median;
      const double got = p.record.number("img_per_s").value_or(-1);
      check(std::fabs(got - expect) <= 1e-9 * expect, "img_per_s differs from batch x ranks / median");
      check(std::fabs(p.record.number("iter_median_s").value_or(-1) - s.median) <= 1e-12, "median");
      check(std::fabs(p.record.number("iter_p95_s").value_or(-1) - s.p95) <= 1e-12, "p95");
      check(!p.record.text("reproducer").empty(), "reproducer missing");
    }
    std::printf("%s: %zu points checked, %d problems\n", argv[1], run.points.size(), bad);
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "check_result: %s\n", e.what());
    return 1;
  }
}
