// Per-rank time series gathered to rank 0, and the statistics a synchronous job sees: per
// iteration the slowest rank decides. Collective over `comm`: every rank must call.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "harness/stats.hpp"
#include "results/record.hpp"

namespace hpcnn {

// [ranks][n] array on rank 0 (empty data elsewhere); every rank must pass the same n.
Array gather_series(const std::string& name, const std::string& unit, const std::vector<double>& mine,
                    MPI_Comm comm);

// Per column (iteration) the maximum over rows (ranks) of a [ranks][n] array.
std::vector<double> max_over_ranks(const Array& a);

// Statistics of max_over_ranks(a).
Stats slowest_rank_stats(const Array& a);

// iter_median_s, iter_mean_s, iter_std_s, iter_min_s, iter_max_s, iter_p5_s, iter_p95_s.
void set_iteration_fields(Record& r, const Stats& it);

}  // namespace hpcnn
