#include "harness/rank_series.hpp"

#include <algorithm>

namespace hpcnn {

Array gather_series(const std::string& name, const std::string& unit, const std::vector<double>& mine,
                    MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Array a;
  a.name = name;
  a.unit = unit;
  a.dims = {static_cast<std::size_t>(size), mine.size()};
  if (rank == 0) a.data.resize(static_cast<std::size_t>(size) * mine.size());
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, a.data.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, comm);
  return a;
}

std::vector<double> max_over_ranks(const Array& a) {
  if (a.dims.size() != 2 || a.data.size() != a.dims[0] * a.dims[1]) return {};
  std::vector<double> out(a.dims[1], 0.0);
  for (std::size_t r = 0; r < a.dims[0]; ++r)
    for (std::size_t i = 0; i < a.dims[1]; ++i) out[i] = std::max(out[i], a.data[r * a.dims[1] + i]);
  return out;
}

Stats slowest_rank_stats(const Array& a) { return compute_stats(max_over_ranks(a)); }

void set_iteration_fields(Record& r, const Stats& it) {
  r.set("iter_median_s", it.median);
  r.set("iter_mean_s", it.mean);
  r.set("iter_std_s", it.stddev);
  r.set("iter_min_s", it.min);
  r.set("iter_max_s", it.max);
  r.set("iter_p5_s", it.p5);
  r.set("iter_p95_s", it.p95);
}

}  // namespace hpcnn
