#include "harness/suite_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "config.h"
#include "harness/main_wrapper.hpp"
#include "harness/progress.hpp"
#include "harness/provenance.hpp"
#include "results/record.hpp"
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

PointError PointError::from(const std::exception& e) {
  const auto* known = dynamic_cast<const StatusError*>(&e);
  return {known ? known->status : PointStatus::Failed, error_message(e)};
}

void agree_on_failure(MPI_Comm comm, const PointError& local) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = local.none() ? size : rank;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  std::string reason = rank == first ? local.reason : std::string();
  int status = static_cast<int>(local.status);
  int len = static_cast<int>(reason.size());
  MPI_Bcast(&status, 1, MPI_INT, first, comm);
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  reason.resize(static_cast<std::size_t>(len));
  MPI_Bcast(reason.data(), len, MPI_CHAR, first, comm);
  if (size > 1) reason = "rank " + std::to_string(first) + ": " + reason;
  throw PointFailure(static_cast<PointStatus>(status), reason);
}

namespace {

// The record of a point that did not produce figures: the suite, the point's swept settings that
// are fields (an option "image-size" is the field "image_size"), the status and the reason.
Record failed_record(const char* program, const SweepPoint& p) {
  Record r;
  r.set("suite", std::string(program));
  for (const auto& [name, value] : p.items()) {
    const Field* f = field_of_option(name);
    if (!f) continue;
    const std::string field = f->name;
    try {
      if (f->type == FieldType::String) r.set(field, value);
      else if (f->type == FieldType::Int) r.set(field, static_cast<std::int64_t>(std::stoll(value)));
      else r.set(field, std::stod(value));
    } catch (const std::exception&) {  // "default" threads and the like: leave the cell empty
    }
  }
  return r;
}

// "hpcnn-train: point 2: diverged: loss nan ...": the status once, also when the reason already
// says it (after another rank's prefix: "rank 1: diverged: ...").
void report_point_failure(const char* program, std::size_t number, const PointFailure& e) {
  progress().clear();
  std::fflush(stdout);
  const std::string reason = e.what(), status = status_name(e.status);
  const bool says_status =
      reason.rfind(status + ":", 0) == 0 || reason.find(": " + status + ":") != std::string::npos;
  std::fprintf(stderr, "%s: point %zu: %s%s%s\n", program, number, says_status ? "" : status.c_str(),
               says_status ? "" : ": ", reason.c_str());
}

}  // namespace

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


// The suite's columns, plus one for every other list option given more than one value (so that
// the rows of --precision fp32,bf16 or --fusion on,off can be told apart), after the settings.
static std::vector<std::string> live_columns(const SuiteDef& suite, const Options& o) {
  std::vector<std::string> columns = suite.live_columns;
  std::size_t at = 0;  // after the last column that is a setting
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Field* f = find_field(columns[i]);
    if (f && f->role != FieldRole::Figure) at = i + 1;
  }
  for (const OptionSpec& spec : suite.options) {
    const Field* f = field_of_option(spec.name);
    if (!spec.list || o.values(spec.name).size() < 2 || !f ||
        std::find(columns.begin(), columns.end(), f->name) != columns.end())
      continue;
    columns.insert(columns.begin() + static_cast<long>(at++), f->name);
  }
  columns.push_back("status");
  return columns;
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

  std::vector<std::string> columns = live_columns(suite, o);
  const TextTableStream live(columns);
  if (root && !quiet) std::printf("%s", live.header().c_str());
  LibraryVersions libraries;
  const std::vector<SweepPoint> points = sweep_points(o, suite.options);
  progress().start_run(root && !quiet && isatty(STDERR_FILENO), static_cast<int>(points.size()));
  std::map<PointStatus, int> tally;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    progress().start_point(static_cast<int>(i));
    ResultPoint point;
    try {
      point = suite.run_point(o, p, comm, libraries);
    } catch (const PointFailure& e) {  // thrown on every rank together: record it, go on
      point = ResultPoint{};
      point.record = failed_record(suite.program, p);
      point.status = e.status;
      point.status_reason = e.what();
      if (root) report_point_failure(suite.program, i + 1, e);
    }
    if (!root) continue;
    progress().clear();
    // The one place a status becomes text (the result file's `status` and `status_reason`).
    point.record.set("status", std::string(status_name(point.status)));
    if (!point.status_reason.empty()) point.record.set("status_reason", point.status_reason);
    ++tally[point.status];
    point.record.set("reproducer", point_reproducer(suite.program, o, p));
    writer->add_point(point);
    if (!quiet) {
      std::printf("%s", live.row(point.record).c_str());
      std::fflush(stdout);
    }
  }
  const Provenance prov = collect_provenance(suite.program, o, comm, libraries, start);
  int failed = 0;
  if (root) {
    const std::string path = writer->commit(prov);
    failed = tally.count(PointStatus::Failed) ? tally.at(PointStatus::Failed) : 0;
    if (!quiet) {
      std::string line;
      for (PointStatus s : {PointStatus::Ok, PointStatus::Failed, PointStatus::Diverged, PointStatus::Skipped})
        if (tally.count(s)) line.append(line.empty() ? "" : ", ").append(std::to_string(tally[s])).append(" ").append(status_name(s));
      std::printf("points: %s\nresults: %s\n", line.c_str(), path.c_str());
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  return failed > 0 ? 1 : 0;
}

}  // namespace hpcnn
