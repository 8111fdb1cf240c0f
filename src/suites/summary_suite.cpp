#include "suites/summary_suite.hpp"

#if __has_include(<config.h>)
#include <config.h>
#endif

#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/options.hpp"
#include "results/report.hpp"
#include "results/isolated_read.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"
#include "results/table_presets.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace hpcnn {

namespace {

const char* const kProgram = "hpcnn-summary";

const std::vector<OptionSpec>& summary_options() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> s = {
        {"table", OptType::String, false, "", "NAME",
         "which table to print (default: the one that fits what the files hold, one table per kind; throughput with "
         "--columns or --compare)"},
        {"format", OptType::Choice, false, "text", "NAME", "table format", "text|csv|markdown"},
        {"columns", OptType::String, false, "", "a,b,c", "fields to show, in order (default: the table's)"},
        {"where", OptType::String, false, "", "F=V,...", "only rows whose fields have these values (all must hold)"},
        {"by", OptType::String, false, "", "F,...", "sort (and so group) the rows by these fields, in order"},
        {"plot", OptType::String, false, "", "FILE.png|FILE.svg",
         "also draw the table with gnuplot (throughput, scaling, breakdown, accuracy)"},
        {"compare", OptType::String, false, "", "BASELINE",
         "compare with the runs in BASELINE (file or directory); exit 1 on a regression"},
        {"tolerance", OptType::String, false, "5%", "PCT", "band of --compare, e.g. 5%"},
        {"metric", OptType::String, false, "img_per_s", "FIELD",
         "figure --compare checks (for times, unit s, lower is better)"},
        {"help", OptType::Flag, false, "", "", "print this help and the available fields, then exit"},
        {"version", OptType::Flag, false, "", "", "print the version, then exit"},
        {"files", OptType::String, false, "", "FILE|DIR", "result files, or folders searched for *.h5"},
    };
    s[3].repeatable = true;   // --where
    s.back().positional = true;
    return s;
  }();
  return specs;
}

// What the command line asks for, checked and typed.
struct Config {
  TableFormat format = TableFormat::Text;
  const TablePreset* table = nullptr;  // --table; nullptr: the table that fits each file's kind
  std::vector<std::string> columns;  // empty: the table's default columns
  std::vector<std::string> paths;
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::string> by;
  std::string plot, compare, metric = "img_per_s";
  double tolerance = 0.05;
};

const TablePreset& table_named(const std::string& name) {
  if (const TablePreset* t = find_table_preset(name)) return *t;
  std::string names;
  for (const TablePreset& p : table_presets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  throw UsageError("--table: unknown table '" + name + "' (" + names + ")");
}

Config config_from(const Options& o) {
  Config c;
  if (o.has("table")) c.table = &table_named(o.str("table"));
  c.format = *parse_table_format(o.str("format"));
  if (o.has("columns")) c.columns = parse_columns(o.str("columns"));
  if (o.has("where"))
    for (const std::string& w : o.values("where"))
      for (auto& cond : parse_where(w)) c.where.push_back(std::move(cond));
  if (o.has("by")) c.by = parse_columns(o.str("by"));
  if (o.has("plot")) {
    c.plot = o.str("plot");
    if (!c.plot.ends_with(".png") && !c.plot.ends_with(".svg"))
      throw UsageError("--plot: '" + c.plot + "' must end in .png or .svg");
    const std::filesystem::path folder = std::filesystem::path(c.plot).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
      throw UsageError("--plot: '" + c.plot + "': the folder '" + folder.string() + "' does not exist");
  }
  if (o.has("compare")) c.compare = o.str("compare");
  c.tolerance = parse_tolerance(o.str("tolerance"));
  c.metric = o.str("metric");
  const Field* metric = find_field(c.metric);
  if (!metric || metric->type == FieldType::String) throw UsageError("--metric: '" + c.metric + "' is not a numeric field");
  if (o.has("files")) c.paths = o.values("files");
  return c;
}

void print_help() {
  std::printf("%s", help_text(kProgram, "Prints one table row per point of every hpcnn result file given, or found (*.h5) under DIR.",
                              summary_options())
                        .c_str());
  std::printf("\ntables (for --table):\n");
  for (const TablePreset& p : table_presets()) {
    std::printf("  %-16s %s\n", p.name, p.help);
    std::printf("  %-16s columns: %s\n", "", p.columns);
  }
  std::printf("\nfields (for --columns):\n");
  for (const Field& f : fields()) {
    std::string unit = *f.unit ? std::string(" [") + f.unit + "]" : std::string();
    std::printf("  %-16s %-6s %s%s\n", f.name, type_name(f.type), f.help, unit.c_str());
  }
  std::printf("\nexit status: 0 ok, 1 a file could not be read or none was found, 2 bad command line\n");
}

// Every result file under `paths`. A file that cannot be read gets one line on stderr (naming it)
// and status 1; the others are still read. Every file is untrusted: it is parsed in a child
// process (isolated_read.hpp), so one that hangs or crashes HDF5 cannot take the others down. RuntimeError when there is no file at all.
std::vector<ResultRun> read_runs(const std::vector<std::string>& paths, int& status) {
  std::vector<std::string> files = find_result_files(paths);
  if (files.empty()) {
    std::string where;
    for (const auto& p : paths) where += (where.empty() ? "" : ", ") + p;
    throw RuntimeError("no result files (*.h5) found in " + where);
  }
  std::vector<ResultRun> runs;
  for (const std::string& file : files) {
    try {
      runs.push_back(read_result_file_isolated(file));
    } catch (const RuntimeError& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());  // names the file
      status = 1;
    }
  }
  return runs;
}

// The preset's rows of the runs, filtered and sorted as asked.
std::vector<Record> rows_of(const TablePreset& table, const std::vector<const ResultRun*>& runs, const Config& config) {
  std::vector<Record> records;
  for (const ResultRun* run : runs)
    for (Record& row : preset_rows(table, *run))
      if (row_matches(row, config.where)) records.push_back(std::move(row));
  sort_rows(records, config.by);
  return records;
}

// The runs grouped by the table they are shown in: --table (or throughput with --columns or
// --compare) for all, else each run's own kind, in the order of table_presets().
std::vector<std::pair<const TablePreset*, std::vector<const ResultRun*>>> tables_for(const Config& config,
                                                                                      const std::vector<ResultRun>& runs) {
  std::vector<std::pair<const TablePreset*, std::vector<const ResultRun*>>> groups;
  const bool fixed = config.table || !config.columns.empty() || !config.compare.empty();
  const TablePreset* fixed_table = config.table ? config.table : &table_presets().front();
  for (const TablePreset& preset : table_presets()) {
    std::vector<const ResultRun*> members;
    for (const ResultRun& run : runs)
      if (fixed ? &preset == fixed_table : &preset_for(run) == &preset) members.push_back(&run);
    if (!members.empty() || (fixed && &preset == fixed_table)) groups.emplace_back(&preset, std::move(members));
  }
  return groups;
}

// --compare: the verdict of every matched point; 1 on a regression or a baseline point without a
// current one.
int compare_with_baseline(const Config& config, const TablePreset& table, const std::vector<Record>& records) {
  int status = 0;
  const std::vector<ResultRun> runs = read_runs({config.compare}, status);
  std::vector<const ResultRun*> all;
  for (const ResultRun& run : runs) all.push_back(&run);
  const std::vector<Record> baseline = rows_of(table, all, config);
  const bool higher_is_better = std::string(find_field(config.metric)->unit) != "s";  // times: lower is better
  const Comparison c = compare_rows(baseline, records, config.metric, higher_is_better, config.tolerance);
  std::fflush(stdout);
  for (const std::string& line : c.regressions) std::printf("regression: %s\n", line.c_str());
  for (const std::string& line : c.missing) std::printf("no current run for baseline: %s\n", line.c_str());
  for (const std::string& line : c.unmatched) std::printf("not in baseline: %s\n", line.c_str());
  std::printf("compare: %d matched, %zu regressions beyond %.1f%% (%s), %zu baseline runs without a current one\n",
              c.compared, c.regressions.size(), 100.0 * config.tolerance, config.metric.c_str(), c.missing.size());
  if (!c.regressions.empty() || !c.missing.empty() || c.compared == 0) status = 1;
  return status;
}

// --plot of one table (the files hold one kind of results, or --table chose).
int plot(const Config& config, const TablePreset& table, const std::vector<Record>& records) {
  std::fflush(stdout);
  try {
    plot_rows(table.name, records, config.plot);
    std::fprintf(stderr, "%s: plot written to %s\n", kProgram, config.plot.c_str());
    return 0;
  } catch (const RuntimeError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return 1;
  }
}

int run(int argc, char** argv) {
  const Options o = parse_options(summary_options(), argc, argv);
  if (o.flag("help")) {
    print_help();
    return 0;
  }
  if (o.flag("version")) {
    std::printf("%s %s (result schema version %d)\n", kProgram, PACKAGE_VERSION, kSchemaVersion);
    return 0;
  }
  const Config config = config_from(o);
  if (config.paths.empty()) throw UsageError("no FILE or DIR given (see --help)");

  int status = 0;
  const std::vector<ResultRun> runs = read_runs(config.paths, status);
  const auto groups = tables_for(config, runs);
  bool first = true;
  for (const auto& [table, members] : groups) {
    const std::vector<Record> records = rows_of(*table, members, config);
    const std::vector<std::string> columns = config.columns.empty() ? parse_columns(table->columns) : config.columns;
    // Files of several kinds: one table each, under a comment line naming it (csv readers skip '#').
    if (groups.size() > 1) std::printf("%s# %s: %s\n", first ? "" : "\n", table->name, table->help);
    first = false;
    if (!runs.empty()) std::fputs(render_table(records, columns, config.format).c_str(), stdout);
    if (!config.plot.empty() && !runs.empty() && groups.size() == 1) status = std::max(status, plot(config, *table, records));
    if (!config.compare.empty()) status = std::max(status, compare_with_baseline(config, *table, records));
  }
  if (!config.plot.empty() && groups.size() > 1) {
    std::fprintf(stderr, "%s: error: --plot: the files hold several kinds of results: choose one with --table\n", kProgram);
    status = 1;
  }
  return status;
}

}  // namespace

int summary_main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return 2;
  } catch (const RuntimeError& e) {
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: internal: %s\n", kProgram, e.what());
    return 1;
  }
}

}  // namespace hpcnn
