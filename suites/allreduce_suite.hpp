// hpcnn-allreduce: the OSU/nccl-tests-style micro-benchmark of the allreduce schemes in
// collectives/ (--exchange mpi,ring,rhd), over message sizes. Every element is checked after the
// timed loop; wrong elements are counted in the `wrong` column and make the run exit 1.
#pragma once

namespace hpcnn {

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_allreduce_suite(int argc, char** argv);

}  // namespace hpcnn
