// Per-rank time series gathered to rank 0, and the statistics a synchronous job sees: per
// iteration the slowest rank decides. Collective over `comm`: every rank must call.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "harness/stats.hpp"
#include "harness/training_loop.hpp"
#include "results/record.hpp"

namespace hpcnn {

// [ranks][n] array on rank 0 (empty data elsewhere); every rank must pass the same n.
// The unit comes from array_fields() (results/record.hpp).
Array gather_series(const std::string& name, const std::vector<double>& mine, MPI_Comm comm);

// Variable-length gathers to rank 0 of comm (empty elsewhere): every rank's values, rank after
// rank; and every rank's list of strings (one inner vector per rank).
std::vector<double> gather_all(const std::vector<double>& mine, MPI_Comm comm);
std::vector<std::vector<std::string>> gather_strings(const std::vector<std::string>& mine, MPI_Comm comm);

// Per column (iteration) the maximum over rows (ranks) of a [ranks][n] array.
std::vector<double> max_over_ranks(const Array& a);

// Statistics of max_over_ranks(a).
Stats slowest_rank_stats(const Array& a);

// iter_median_s, iter_mean_s, iter_std_s, iter_min_s, iter_max_s, iter_p5_s, iter_p95_s.
void set_iteration_fields(Record& r, const Stats& it);

// The slowest rank's iteration per iteration of a [ranks][n] series: set_iteration_fields, and its
// stalls (outlier_iters, stall_share). Returns the iteration statistics.
Stats set_slowest_rank_fields(Record& r, const Array& a);

// A training loop's series gathered over the ranks of comm, by name ([ranks][n] on rank 0).
struct PhaseArrays {
  Array iter, warmup, load, forward, backward, comm_wait, update;
  // In the file's order: iter_time_s, warmup_time_s, load_time_s, forward_time_s,
  // backward_time_s, comm_wait_time_s, update_time_s.
  void append_to(std::vector<Array>& arrays) const;
};
PhaseArrays gather_phases(const PhaseSeries& mine, MPI_Comm comm);

// From the slowest rank per iteration: set_slowest_rank_fields, and the phase medians load_s,
// forward_s, backward_s, comm_wait_s, update_s. Returns the iteration statistics.
Stats set_phase_fields(Record& r, const PhaseArrays& a);

}  // namespace hpcnn
