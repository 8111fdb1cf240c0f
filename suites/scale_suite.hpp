// hpcnn-scale: data-parallel training over MPI ranks with a gradient exchange scheme from
// collectives/ (allreduce per bucket overlapping backward, or a parameter server, sync or async).
// Per worker and iteration: load, forward, backward, communication wait, update; bytes moved per
// rank; aggregate images/s and the scaling efficiency against a 1-rank figure.
#pragma once

namespace hpcnn {

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_scale_suite(int argc, char** argv);

}  // namespace hpcnn
