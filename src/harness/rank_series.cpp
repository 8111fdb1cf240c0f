#include "harness/rank_series.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace hpcnn {

Array gather_series(const std::string& name, const std::vector<double>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Array a = make_array(name, {static_cast<std::size_t>(size), mine.size()}, {});
  if (rank == 0) a.data.resize(static_cast<std::size_t>(size) * mine.size());
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, a.data.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, comm);
  return a;
}

namespace {

// MPI_Gatherv of `count` elements of `type` per rank; `counts` gets every rank's count (rank 0).
template <class T>
std::vector<T> gather_variable(const T* mine, int count, MPI_Datatype type, MPI_Comm comm, std::vector<int>& counts) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  counts.assign(static_cast<std::size_t>(size), 0);
  std::vector<int> displs(static_cast<std::size_t>(size), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < size && rank == 0; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<T> all(static_cast<std::size_t>(total));
  MPI_Gatherv(mine, count, type, all.data(), counts.data(), displs.data(), type, 0, comm);
  return all;
}

}  // namespace

std::vector<double> gather_all(const std::vector<double>& mine, MPI_Comm comm) {
  std::vector<int> counts;
  return gather_variable(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, comm, counts);
}

std::vector<std::vector<std::string>> gather_strings(const std::vector<std::string>& mine, MPI_Comm comm) {
  std::string joined;  // every string followed by \x1f
  for (const std::string& c : mine) joined.append(c).push_back('\x1f');
  std::vector<int> counts;
  const std::vector<char> all = gather_variable(joined.data(), static_cast<int>(joined.size()), MPI_CHAR, comm, counts);
  std::vector<std::vector<std::string>> out;
  std::size_t at = 0;
  for (const int n : counts) {
    std::vector<std::string> row;
    std::string cell;
    for (int i = 0; i < n; ++i, ++at) {
      if (all[at] == '\x1f') row.push_back(std::exchange(cell, {}));
      else cell.push_back(all[at]);
    }
    out.push_back(std::move(row));
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) out.clear();
  return out;
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

Stats set_slowest_rank_fields(Record& r, const Array& a) {
  const std::vector<double> slowest = max_over_ranks(a);
  const Stats it = compute_stats(slowest);
  set_iteration_fields(r, it);
  r.set("outlier_iters", static_cast<std::int64_t>(find_outliers(slowest).count));
  r.set("stall_share", stall_share(slowest));
  return it;
}

void PhaseArrays::append_to(std::vector<Array>& arrays) const {
  for (const Array* a : {&iter, &warmup, &load, &forward, &backward, &comm_wait, &update}) arrays.push_back(*a);
}

PhaseArrays gather_phases(const PhaseSeries& mine, MPI_Comm comm) {
  PhaseArrays a;
  a.iter = gather_series("iter_time_s", mine.iter, comm);
  a.warmup = gather_series("warmup_time_s", mine.warmup, comm);
  a.load = gather_series("load_time_s", mine.load, comm);
  a.forward = gather_series("forward_time_s", mine.forward, comm);
  a.backward = gather_series("backward_time_s", mine.backward, comm);
  a.comm_wait = gather_series("comm_wait_time_s", mine.comm_wait, comm);
  a.update = gather_series("update_time_s", mine.update, comm);
  return a;
}

Stats set_phase_fields(Record& r, const PhaseArrays& a) {
  const Stats it = set_slowest_rank_fields(r, a.iter);
  r.set("load_s", slowest_rank_stats(a.load).median);
  r.set("forward_s", slowest_rank_stats(a.forward).median);
  r.set("backward_s", slowest_rank_stats(a.backward).median);
  r.set("comm_wait_s", slowest_rank_stats(a.comm_wait).median);
  r.set("update_s", slowest_rank_stats(a.update).median);
  return it;
}

}  // namespace hpcnn
