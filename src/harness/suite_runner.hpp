// The skeleton every suite shares: parse the option table, answer --help/--version/--list,
// validate names before any work, open the result file (so an unwritable directory fails first),
// run every sweep point, print a live row per point on rank 0, and commit the file with its
// provenance. A suite supplies only its option table and how to run one point.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

struct SuiteDef {
  const char* program = "";  // "hpcnn-train"
  const char* summary = "";  // --help paragraph
  std::vector<OptionSpec> options;         // end with output_options()
  std::vector<std::string> live_columns;   // fields of the row printed per point
  std::function<void()> print_list;        // --list (rank 0 only)
  std::function<void(const Options&)> validate;  // throws UsageError; runs before any work
  // Runs one point. Collective over comm; the returned point is used on rank 0 only. Adds the
  // versions of the libraries the point used to `libraries`.
  std::function<ResultPoint(const Options&, const SweepPoint&, MPI_Comm comm, LibraryVersions& libraries)>
      run_point;
};

// --output, --quiet, --list, --version, --help: the options every suite ends its table with.
std::vector<OptionSpec> output_options();

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_suite(const SuiteDef& suite, int argc, char** argv);

// A command line that reruns exactly this point: the program, every effective option with the
// point's own value for swept options; output/display options left out.
std::string point_reproducer(const char* program, const Options& options, const SweepPoint& point);

}  // namespace hpcnn
