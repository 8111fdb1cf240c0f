// hpcnn-allreduce: the OSU/nccl-tests-style micro-benchmark of the allreduce schemes in
// collectives/ (--exchange mpi,ring,rhd), over message sizes. Every element is checked after the
// timed loop; wrong elements are counted in the `wrong` column and make the run exit 1.
#pragma once

#include <cstdint>
#include <string>

namespace hpcnn {

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_allreduce_suite(int argc, char** argv);

// "4", "1K", "64KiB", "16M", "1G" (binary multiples) -> bytes; UsageError naming the value otherwise.
std::int64_t parse_bytes(const std::string& text);

}  // namespace hpcnn
