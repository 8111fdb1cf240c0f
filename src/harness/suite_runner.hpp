// The skeleton every suite shares: parse the option table, answer --help/--version/--list,
// validate names before any work, open the result file (so an unwritable directory fails first),
// run every sweep point, print a live row per point on rank 0, and commit the file with its
// provenance. A suite supplies only its option table and how to run one point.
#pragma once

#include <mpi.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "base/errors.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"
#include "results/result_file.hpp"
#include "harness/point_error.hpp"

namespace hpcnn {

// Where a point stands in its run: its place in the sweep, and the file a long point may keep
// its checkpoint in (in the run's journal, the same path on every rank; it survives until the
// run completes, so --resume finds it).
struct PointPlace {
  std::size_t index = 0;
  std::string checkpoint;
};

struct SuiteDef {
  const char* program = "";  // "hpcnn-train"
  const char* summary = "";  // --help paragraph
  std::vector<OptionSpec> options;         // end with output_options()
  std::vector<std::string> live_columns;   // fields of the row printed per point
  std::string table_preamble;              // lines printed above the live table ("# ...\n"), e.g. how it was timed
  std::function<void()> print_list;        // --list (rank 0 only)
  std::function<void(const Options&)> validate;  // throws UsageError; runs before any work
  // The hpcnn-summary table that shows this run's points (analysis/table_presets.cpp), recorded in
  // the result file's provenance; unset: none (hpcnn-summary shows the throughput table).
  std::function<std::string(const Options&)> default_table;
  // Runs one point. Collective over comm; the returned point is used on rank 0 only. Adds the
  // versions of the libraries the point used to `libraries`.
  std::function<ResultPoint(const Options&, const SweepPoint&, MPI_Comm comm, LibraryVersions& libraries,
                            const PointPlace& place)>
      run_point;
};

// A point that could not be measured. Thrown by run_point on EVERY rank of comm at the same
// time (see agree_on_failure), so the runner records the point with this status and reason and
// goes on with the next point. Any other exception from run_point ends the run (exit 1;
// MPI_Abort with several ranks, since the other ranks may be waiting in a collective).
struct PointFailure : RuntimeError {
  PointFailure(PointStatus s, const std::string& reason) : RuntimeError(reason), status(s) {}
  PointStatus status;  // Failed, Diverged or Skipped
};

// Collective over comm: every rank passes its own error (none() when it has none). When any rank
// has one, every rank throws PointFailure with the lowest failing rank's status and reason
// (prefixed "rank R: " with several ranks). Otherwise returns.
void agree_on_failure(MPI_Comm comm, const PointError& local);

// --output, --quiet, --list, --version, --help: the options every suite ends its table with.
std::vector<OptionSpec> output_options();

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status: 0 when every
// point is ok, diverged or skipped; 1 when a point failed (the other points still ran and are in
// the file). Ends with a tally line on stdout ("points: 3 ok, 1 failed") unless --quiet.
int run_suite(const SuiteDef& suite, int argc, char** argv);

// A command line that reruns exactly this point: the program, every effective option with the
// point's own value for swept options; output/display options left out.
std::string point_reproducer(const char* program, const Options& options, const SweepPoint& point);

}  // namespace hpcnn
