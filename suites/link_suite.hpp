// hpcnn-allreduce --links: the link test of an allocation. Every pair of ranks (one rank per
// node) exchanges a message both ways, in the rounds of collectives/pair_schedule.hpp, giving the
// latency and bandwidth of every pair (analysis/link_matrix.hpp judges them).
#pragma once

namespace hpcnn {

// Collective over MPI_COMM_WORLD; call inside suite_main() (hpcnn-allreduce hands over when its
// command line has --links). Returns the exit status.
int run_link_suite(int argc, char** argv);

}  // namespace hpcnn
