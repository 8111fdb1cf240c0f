// The delivered figures of a point read from a file whose points carry only their median-based
// rates (written before img_per_s became work over wall time). Every iteration's time is in such
// a file, so the delivered figure, the median one and the stall share can all be had from it, and
// a reference of either kind is judged on the same figures as a new run.
#pragma once

#include "results/result_file.hpp"

namespace hpcnn {

// A point without `stall_share` whose rates come from its iteration or call times: `img_per_s`
// and `gflops` become the delivered rates (their old values move to `img_per_s_median` and
// `gflops_median`), and `stall_share` and, where missing, `iter_mean_s` are computed from the
// slowest rank's series. Any other point is left as it is; the file's other figures (a scale
// point's efficiency and baseline, the repeats' spread) keep their median basis.
void complete_delivered_figures(ResultPoint& point);

}  // namespace hpcnn
