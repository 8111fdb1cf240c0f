#include "harness/suite_runner.hpp"

#include <cstdio>
#include <memory>

#include "config.h"
#include "harness/main_wrapper.hpp"
#include "harness/provenance.hpp"
#include "results/table.hpp"

namespace hpcnn {

std::vector<OptionSpec> output_options() {
  return {
      {"output", OptType::String, false, "results", "DIR", "directory of the result file"},
      {"quiet", OptType::Flag, false, "", "", "print nothing but errors"},
      {"list", OptType::Flag, false, "", "", "list models, backends and build features, then exit"},
      {"version", OptType::Flag, false, "", "", "print the version and exit"},
      {"help", OptType::Flag, false, "", "", "print this help and exit"},
  };
}

std::string point_reproducer(const char* program, const Options& options, const SweepPoint& point) {
  std::string cmd = program;
  for (const auto& [name, value] : options.effective()) {
    if (name == "output" || name == "quiet" || name == "list" || name == "version" || name == "help") continue;
    std::string v = value;
    for (const auto& [pn, pv] : point.items())
      if (pn == name) v = pv;
    cmd.append(" --").append(name).append(" ").append(shell_quote(v));
  }
  return cmd;
}

int run_suite(const SuiteDef& suite, int argc, char** argv) {
  const std::string start = utc_now_iso8601();
  const Options o = parse_options(suite.options, argc, argv);
  const bool root = is_root_rank();
  if (o.flag("help")) {
    if (root) std::printf("%s", help_text(suite.program, suite.summary, suite.options).c_str());
    return 0;
  }
  if (o.flag("version")) {
    if (root) std::printf("%s (hpcnn) %s\n", suite.program, PACKAGE_VERSION);
    return 0;
  }
  if (o.flag("list")) {
    if (root && suite.print_list) suite.print_list();
    return 0;
  }
  if (suite.validate) suite.validate(o);
  const bool quiet = o.flag("quiet");
  MPI_Comm comm = MPI_COMM_WORLD;

  // The result file is opened first so an unwritable directory fails before any work.
  std::unique_ptr<ResultWriter> writer;
  int opened = 1;
  std::string open_error;
  if (root) {
    try {
      writer = std::make_unique<ResultWriter>(o.str("output"), suite.program);
    } catch (const std::exception& e) {
      opened = 0;
      open_error = e.what();
    }
  }
  MPI_Bcast(&opened, 1, MPI_INT, 0, comm);
  if (!opened) {
    if (root) std::fprintf(stderr, "%s: error: %s\n", suite.program, open_error.c_str());
    return 1;
  }

  const TextTableStream live(suite.live_columns);
  if (root && !quiet) std::printf("%s", live.header().c_str());
  LibraryVersions libraries;
  for (const SweepPoint& p : sweep_points(o, suite.options)) {
    ResultPoint point = suite.run_point(o, p, comm, libraries);
    if (!root) continue;
    point.record.set("reproducer", point_reproducer(suite.program, o, p));
    writer->add_point(point);
    if (!quiet) {
      std::printf("%s", live.row(point.record).c_str());
      std::fflush(stdout);
    }
  }
  const Provenance prov = collect_provenance(suite.program, o, comm, libraries, start);
  if (root) {
    const std::string path = writer->commit(prov);
    if (!quiet) std::printf("results: %s\n", path.c_str());
  }
  return 0;
}

}  // namespace hpcnn
