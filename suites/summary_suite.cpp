#include "suites/summary_suite.hpp"

#if __has_include(<config.h>)
#include <config.h>
#endif

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <filesystem>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "base/errors.hpp"
#include "harness/options.hpp"
#include "base/durable_file.hpp"
#include "analysis/population.hpp"
#include "analysis/reference_runs.hpp"
#include "analysis/report.hpp"
#include "results/isolated_read.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"
#include "analysis/table_presets.hpp"
#include "analysis/trend.hpp"
#include "analysis/verdict.hpp"
#include "suites/summary_page.hpp"

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
         "which table to print (default: the one that fits what the files hold, one table per kind, each without the "
         "columns no row has a value in; throughput with --columns; --compare judges the table's rows, else one row per point)"},
        {"format", OptType::Choice, false, "text", "NAME", "table format", "text|csv|markdown"},
        {"columns", OptType::String, false, "", "a,b,c", "fields to show, in order (default: the table's)"},
        {"where", OptType::String, false, "", "F=V,...", "only rows whose fields have these values (all must hold)"},
        {"by", OptType::String, false, "", "F,...", "sort (and so group) the rows by these fields, in order"},
        {"plot", OptType::String, false, "", "FILE.png|FILE.svg",
         "also draw the table with gnuplot (the tables below that say so)"},
        {"html", OptType::String, false, "", "FILE",
         "also write one self-contained page (opens offline) of what is printed: the verdicts failures first, the "
         "trend, the stability, every table with its plot, each run's provenance and reproducer, the files left out and why"},
        {"compare", OptType::String, false, "", "BASELINE",
         "compare with the runs in BASELINE (file or directory); exit 1 on a regression"},
        {"tolerance", OptType::String, false, "", "[METRIC=]FRACTION",
         "threshold of --compare for METRIC (or every metric), e.g. busbw_gbs=50% or 0.1: a change within it "
         "passes however significant; with one run a side, the band itself"},
        {"tolerance-floor", OptType::String, false, "5%", "FRACTION",
         "smallest threshold of --compare: smaller changes pass however significant; a one-run band from the "
         "reference's spread is never below it"},
        {"metric", OptType::String, false, "", "FIELD",
         "figure --compare checks (default: img_per_s, else busbw_gbs, else gflops, plus test_acc; times are "
         "lower-is-better)"},
        {"junit", OptType::String, false, "", "FILE",
         "with --compare, --trend or --population: also write the verdicts as JUnit XML to FILE (--population: a test "
         "case per node and per link test)"},
        {"trend", OptType::Int, false, "", "N",
         "history instead of a table: every point and metric over the runs given, in time order, each run judged "
         "against the N runs before it (median and MAD), the last 2N tested for a drift; exit 1 when a point's "
         "latest run regressed (with --plot: the metric over time, its band, flagged runs)",
         {}, 3, 1000},
        {"alpha", OptType::Float, false, "0.05", "P",
         "with --compare: the chance, over all points together, that an unchanged system gets a REGRESSION verdict "
         "(Holm-adjusted run-level test; needs several reference runs)",
         {}, 1e-9, 0.5},
        {"unstable-above", OptType::String, false, "25%", "FRACTION",
         "with --compare or --stability: a point whose runs spread so much that only a change beyond FRACTION could "
         "be detected is UNSTABLE (neither a pass nor a failure)"},
        {"min-runs", OptType::Int, false, "1", "K",
         "with --compare or --stability: every reference point must have at least K runs (exit 2 otherwise)", {}, 1,
         1000},
        {"at", OptType::Choice, false, "delivered", "STAT",
         "with --compare, --trend or --stability: the rates judged: delivered (the timed work over its wall time, "
         "as the tables show them: stalls and a node losing CPU in slices lower it), median (over the median "
         "iteration: the undisturbed speed) or p5 (over the 5th-percentile iteration)",
         "delivered|median|p5"},
        {"stability", OptType::Flag, false, "", "",
         "instead of a table: how steady each point is over the runs given (a reference to bless): its run-to-run "
         "spread, the smallest change a new run could be shown to differ by, UNSTABLE points and the reference runs "
         "or iterations that would steady them; exit 2 when the runs mix builds or machines or lack points"},
        {"population", OptType::Flag, false, "", "",
         "instead of a table: the runs judged against themselves, no reference needed: each node of a point of "
         "hpcnn-train, -infer or -blas run on several nodes at once (one rank per node) against the median node; each "
         "pair of a link test (hpcnn-allreduce --links) against the median pair, each node by the share of its slow "
         "links; with --compare REFERENCE also each node and pair against the reference's (pooled over its runs, any "
         "nodes of the class); a line per node or pair named (REGRESSION), exit 1 when one is, or when there is nothing "
         "to judge"},
        {"population-threshold", OptType::String, false, "10%", "FRACTION",
         "--population: the practical size of a change: a pair is slow below (1 - FRACTION) of the median pair, "
         "when it also stands out of the night's spread (3.5 robust deviations: median and MAD)"},
        {"help", OptType::Flag, false, "", "", "print this help and the available fields, then exit"},
        {"version", OptType::Flag, false, "", "", "print the version, then exit"},
        {"files", OptType::String, false, "", "FILE|DIR", "result files, or folders searched for *.h5"},
    };
    for (OptionSpec& spec : s)
      if (std::string(spec.name) == "where" || std::string(spec.name) == "tolerance" || std::string(spec.name) == "metric")
        spec.repeatable = true;
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
  std::string plot, compare, junit, html;
  std::vector<std::string> metrics;  // empty: each point's default_metrics()
  Tolerances tolerances;
  std::size_t trend = 0;  // --trend N; 0: no trend
  std::size_t min_runs = 1;  // --min-runs
  RateAt at = RateAt::Delivered;  // --at
  bool stability = false;
  bool population = false;
  double population_threshold = 0.1;  // --population-threshold
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
  if (o.has("html")) {
    c.html = o.str("html");
    const std::filesystem::path folder = std::filesystem::path(c.html).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
      throw UsageError("--html: '" + c.html + "': the folder '" + folder.string() + "' does not exist");
  }
  if (o.has("compare")) c.compare = o.str("compare");
  c.tolerances.floor = parse_tolerance(o.str("tolerance-floor"));
  if (o.has("tolerance"))
    for (const std::string& t : o.values("tolerance")) {
      const auto [metric, band] = parse_metric_tolerance(t);
      if (metric.empty())
        c.tolerances.all_metrics = band;
      else
        c.tolerances.per_metric[metric] = band;
    }
  if (o.has("metric"))
    for (const std::string& m : o.values("metric")) {
      const Field* metric = find_field(m);
      if (!metric || metric->type == FieldType::String) throw UsageError("--metric: '" + m + "' is not a numeric field");
      c.metrics.push_back(m);
    }
  c.tolerances.alpha = o.real("alpha");
  c.tolerances.unstable_above = parse_tolerance(o.str("unstable-above"));
  c.min_runs = static_cast<std::size_t>(o.integer("min-runs"));
  c.at = parse_rate_at(o.str("at"));
  c.stability = o.flag("stability");
  c.population = o.flag("population");
  c.population_threshold = parse_tolerance(o.str("population-threshold"));
  if (!(c.population_threshold > 0 && c.population_threshold < 1))
    throw UsageError("--population-threshold: '" + o.str("population-threshold") + "' is not a fraction between 0 and 100%");
  if (c.population && (c.stability || o.has("trend")))
    throw UsageError("--population judges one night's nodes and links: not with --trend or --stability");
  if (c.stability && (o.has("compare") || o.has("trend")))
    throw UsageError("--stability looks at one set of runs: not with --compare or --trend");
  if (o.has("trend")) {
    c.trend = static_cast<std::size_t>(o.integer("trend"));
    if (o.has("compare")) throw UsageError("--trend and --compare: choose one (--trend judges each run by the runs before it)");
  }
  if (o.has("junit")) {
    if (!o.has("compare") && !o.has("trend") && !c.population)
      throw UsageError("--junit needs --compare, --trend or --population (the verdicts it writes)");
    c.junit = o.str("junit");
    const std::filesystem::path folder = std::filesystem::path(c.junit).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
      throw UsageError("--junit: '" + c.junit + "': the folder '" + folder.string() + "' does not exist");
  }
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
    std::printf("  %-16s columns: %s%s\n", "", p.columns, p.plot ? "; --plot draws it" : "");
  }
  std::printf("\nfields (for --columns):\n");
  for (const Field& f : fields()) {
    std::string unit = *f.unit ? std::string(" [") + f.unit + "]" : std::string();
    std::printf("  %-16s %-6s %s%s\n", f.name, type_name(f.type), f.help, unit.c_str());
  }
  std::printf("\nexit status: 0 ok, 1 a file could not be read or none was found, or --compare found a failure "
              "(regression, bad status, point missing on either side; UNSTABLE is not a failure), 2 bad command line or an "
              "unusable reference (missing, without result files, mixing builds or machines, fewer than --min-runs runs)\n");
}

// Every result file under `paths`. A file that cannot be read gets one line on stderr (naming it)
// and status 1; the others are still read. Every file is untrusted: it is parsed in a child
// process (isolated_read.hpp), so one that hangs or crashes HDF5 cannot take the others down; as
// many children at a time as this machine has cores, so a folder's damaged files cost their time
// limit once, not one after the other. RuntimeError when there is no file at all. With `page`,
// the files left out are named there too.
std::vector<ResultRun> read_runs(const std::vector<std::string>& paths, int& status, SummaryPage* page = nullptr) {
  std::vector<std::string> files = find_result_files(paths);
  if (files.empty()) {
    std::string where;
    for (const auto& p : paths) where += (where.empty() ? "" : ", ") + p;
    throw RuntimeError("no result files (*.h5) found in " + where);
  }
  const std::size_t jobs = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, files.size());
  std::vector<IsolatedRead> reads = read_result_files_isolated(files, jobs);
  std::vector<ResultRun> runs;
  for (IsolatedRead& read : reads) {
    if (read.run) {
      runs.push_back(std::move(*read.run));
    } else {
      std::fflush(stdout);
      std::fprintf(stderr, "%s: error: %s\n", kProgram, read.error.c_str());
      if (page) page->left_out(read.error);
      status = 1;
    }
  }
  return runs;
}

// Every row carries its run: the session of its result file (HPCNN_SESSION when it was written: an
// acceptance night or blessed run, whose rounds share it), and --compare and --trend take the best
// of a point's rows in one run. Files without a session are runs of their own.
std::vector<Record> rows_of(const TablePreset& table, const std::vector<const ResultRun*>& runs, const Config& config) {
  std::vector<Record> records;
  for (const ResultRun* run : runs)
    for (Record& row : preset_rows(table, *run))
      if (row_matches(row, config.where)) {
        if (!run->provenance.session.empty()) row.set("run", run->provenance.session);
        records.push_back(std::move(row));
      }
  sort_rows(records, config.by);
  return records;
}

// The runs grouped by the table they are shown in: --table (or throughput with --columns) for all,
// else each run's own kind, in the order of table_presets().
std::vector<std::pair<const TablePreset*, std::vector<const ResultRun*>>> tables_for(const Config& config,
                                                                                      const std::vector<ResultRun>& runs) {
  std::vector<std::pair<const TablePreset*, std::vector<const ResultRun*>>> groups;
  const bool fixed = config.table || !config.columns.empty();
  const TablePreset* fixed_table = config.table ? config.table : &table_presets().front();
  for (const TablePreset& preset : table_presets()) {
    std::vector<const ResultRun*> members;
    for (const ResultRun& run : runs)
      if (fixed ? &preset == fixed_table : &preset_for(run) == &preset) members.push_back(&run);
    if (!members.empty() || (fixed && &preset == fixed_table)) groups.emplace_back(&preset, std::move(members));
  }
  return groups;
}

// --compare's reference, read and checked before anything is printed: a reference that is missing,
// holds no result file, mixes builds or machines, or has fewer than --min-runs runs of a point is
// a usage error (exit 2). Its rows are those of `table`, filtered as the run's.
std::vector<Record> reference_rows(const Config& config, const TablePreset& table, int& status) {
  std::error_code ec;
  if (!std::filesystem::exists(config.compare, ec))
    throw UsageError("--compare: no reference '" + config.compare + "' (no such file or folder)");
  if (find_result_files({config.compare}).empty())
    throw UsageError("--compare: the reference '" + config.compare + "' holds no result file (*.h5)");
  const std::vector<ResultRun> runs = read_runs({config.compare}, status);
  std::vector<const ResultRun*> all;
  for (const ResultRun& run : runs) all.push_back(&run);
  check_one_origin(all, "the reference " + config.compare);
  std::vector<Record> rows = rows_of(table, all, config);
  check_run_counts(rows, config.min_runs, false, "the reference " + config.compare);
  rates_at(rows, config.at);
  return rows;
}

// --compare: the verdict table of every point and metric (verdict.hpp), and --junit; 1 when any
// verdict is a failure (regression, status, a point missing on either side) or nothing matched.
int compare_with_baseline(const Config& config, const std::vector<Record>& baseline, const std::vector<Record>& records,
                          SummaryPage* page) {
  int status = 0;
  std::vector<Record> now = records;
  rates_at(now, config.at);
  const std::vector<PointVerdict> verdicts = compare_points(baseline, now, config.metrics, config.tolerances);
  std::fflush(stdout);
  std::printf("\n# verdicts against %s (rates: %s, --at)\n%s", config.compare.c_str(), rate_at_text(config.at),
              verdict_table(verdicts).c_str());
  std::size_t failures = 0, compared = 0, unstable = 0;
  for (const PointVerdict& v : verdicts) {
    failures += is_failure(v.verdict);
    compared += v.reference && v.now;
    unstable += v.verdict == Verdict::Unstable;
  }
  std::printf("compare: %zu verdicts, %zu failures, %zu unstable, %zu points with figures on both sides\n",
              verdicts.size(), failures, unstable, compared);
  for (const PointVerdict& v : verdicts)
    if (is_failure(v.verdict)) std::printf("failure: %s\n", v.message().c_str());
  for (const PointVerdict& v : verdicts)
    if (v.verdict == Verdict::Unstable) std::printf("unstable: %s\n", v.message().c_str());
  if (!config.junit.empty()) {
    std::fflush(stdout);
    write_junit(config.junit, verdicts);
    std::fprintf(stderr, "%s: JUnit verdicts written to %s\n", kProgram, config.junit.c_str());
  }
  if (page) page->verdicts(config.compare, rate_at_text(config.at), verdicts);
  if (failures > 0 || verdicts.empty()) status = 1;
  return status;
}

// --stability: how steady every point is over the runs given (reference_runs.hpp); exit 2 when
// the runs are not one reference (mixed builds or machines, a point missing from a run, fewer than
// --min-runs runs), else 0 (UNSTABLE points are reported, not failed).
int show_stability(const Config& config, const std::vector<ResultRun>& runs, SummaryPage* page) {
  std::vector<const ResultRun*> all;
  for (const ResultRun& run : runs) all.push_back(&run);
  std::string what;
  for (const std::string& p : config.paths) what += (what.empty() ? "" : " ") + p;
  check_one_origin(all, "the runs " + what);
  const TablePreset& table = table_presets().front();  // one row per point, as --compare reads them
  std::vector<Record> rows = rows_of(table, all, config);
  check_run_counts(rows, config.min_runs, true, "the runs " + what);
  rates_at(rows, config.at);
  const std::vector<PointStability> points = point_stability(rows, config.metrics, config.tolerances);
  std::size_t unstable = 0, runs_most = 0;
  for (const PointStability& p : points) unstable += p.unstable, runs_most = std::max(runs_most, p.runs);
  char heading[320];
  std::snprintf(heading, sizeof heading,
                "stability over %zu runs (rates: %s): the smallest change a new run can be shown "
                "to differ by (family level %g over %zu points and metrics); UNSTABLE above %g%%",
                runs_most, rate_at_text(config.at), config.tolerances.alpha, points.size(),
                100.0 * config.tolerances.unstable_above);
  if (page) page->stability(heading, points);
  if (config.format == TableFormat::Csv) {
    std::fputs(stability_csv(points).c_str(), stdout);
    return 0;
  }
  std::printf("# %s\n%s", heading, stability_table(points).c_str());
  std::printf("stability: %zu points and metrics, %zu unstable\n", points.size(), unstable);
  for (const PointStability& p : points)
    if (p.unstable)
      std::printf("unstable: %s %s: %s\n", p.settings.c_str(), p.metric.c_str(),
                  steadying_advice(p.runs, p.spread.value_or(0), p.detectable.value_or(0), p.stable_runs, p.iters,
                                   p.stable_iters).c_str());
  return 0;
}

// --population: the nodes and links of the runs judged against their own median (population.hpp);
// 1 when a node or pair is named, or when the runs hold nothing to judge.
int show_population(const Config& config, const std::vector<ResultRun>& runs, SummaryPage* page) {
  std::vector<ResultRun> reference;
  if (!config.compare.empty()) {
    // With --compare, every node and pair is also judged against the reference's (any nodes of the
    // class): read and checked as --compare's reference is.
    std::error_code ec;
    if (!std::filesystem::exists(config.compare, ec))
      throw UsageError("--compare: no reference '" + config.compare + "' (no such file or folder)");
    int status = 0;
    reference = read_runs({config.compare}, status);
    std::vector<const ResultRun*> all;
    for (const ResultRun& run : reference) all.push_back(&run);
    check_one_origin(all, "the reference " + config.compare);
    check_reference_class(runs, reference, config.compare);
  }
  const PopulationReport report =
      judge_population(runs, config.population_threshold, config.compare.empty() ? nullptr : &reference);
  if (page) page->population(report);
  for (const std::string& h : report.headings) std::printf("# %s\n", h.c_str());
  for (const std::string& f : report.flagged) std::printf("population: %s\n", f.c_str());
  for (const std::string& p : report.passed) std::printf("population: ok: %s\n", p.c_str());
  std::printf("population: %zu per-node point(s), %zu link test(s), %zu named\n", report.points, report.tests,
              report.flagged.size());
  if (!config.junit.empty()) {
    std::fflush(stdout);
    write_file_durably(config.junit, population_junit(report), "the JUnit verdicts");
    std::fprintf(stderr, "%s: JUnit verdicts written to %s\n", kProgram, config.junit.c_str());
  }
  if (report.tests + report.points == 0) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "%s: error: --population: nothing to judge: no point of hpcnn-train, -infer or -blas on %zu or more nodes, no "
                 "link test (hpcnn-allreduce --links) with an ok point\n",
                 kProgram, kPopulationMinNodes);
    return 1;
  }
  return report.flagged.empty() ? 0 : 1;
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

// --trend N: every point and metric over the runs in time order (trend.hpp), the trend table,
// --plot and --junit; 1 when any point's latest run is a failure (step, drift, status).
int show_trend(const Config& config, const std::vector<ResultRun>& runs, SummaryPage* page) {
  const TablePreset& table = table_presets().front();  // one row per point, as --compare reads them
  // A run is a session's result files (a night, with its rounds; a file without a session alone),
  // started when its first file was.
  std::map<std::string, TrendRun> by_session;
  for (const ResultRun& run : runs) {
    if (run.provenance.start_time.empty()) {
      std::fprintf(stderr, "%s: warning: %s has no start time: left out of the trend\n", kProgram, run.path.c_str());
      continue;
    }
    TrendRun& r = by_session[run.provenance.session.empty() ? "file " + run.path : "session " + run.provenance.session];
    if (r.time.empty() || run.provenance.start_time < r.time) r.time = run.provenance.start_time;
    std::vector<Record> rows = rows_of(table, {&run}, config);
    rates_at(rows, config.at);
    for (Record& row : rows) r.rows.push_back(std::move(row));
  }
  std::vector<TrendRun> history;
  for (auto& [session, r] : by_session)
    if (!r.rows.empty()) history.push_back(std::move(r));
  TrendSettings settings;
  settings.window = config.trend;
  settings.floor = config.tolerances.floor;
  const std::size_t sessions = history.size();
  const std::vector<PointTrend> trends = trend_points(std::move(history), config.metrics, settings);
  std::vector<PointVerdict> verdicts;
  std::size_t failures = 0;
  for (const PointTrend& t : trends) {
    verdicts.push_back(t.as_verdict());
    failures += is_failure(t.verdict);
  }
  char heading[160];
  std::snprintf(heading, sizeof heading, "trend over %zu runs: each run against the %zu runs before it, drift over the last %zu",
                sessions, config.trend, 2 * config.trend);
  if (config.format != TableFormat::Csv) std::printf("# %s\n", heading);
  if (page) page->trend(heading, trends);
  std::fputs(trend_table(trends, config.format).c_str(), stdout);
  if (config.format != TableFormat::Csv) {
    std::printf("trend: %zu points and metrics, %zu failures\n", trends.size(), failures);
    for (const PointVerdict& v : verdicts)
      if (is_failure(v.verdict)) std::printf("failure: %s\n", v.message().c_str());
  }
  int status = failures > 0 || trends.empty() ? 1 : 0;
  std::fflush(stdout);
  if (!config.junit.empty()) {
    write_junit(config.junit, verdicts);
    std::fprintf(stderr, "%s: JUnit verdicts written to %s\n", kProgram, config.junit.c_str());
  }
  if (!config.plot.empty()) {
    try {
      plot_trends(trends, config.plot);
      std::fprintf(stderr, "%s: plot written to %s\n", kProgram, config.plot.c_str());
    } catch (const RuntimeError& e) {
      std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
      status = 1;
    }
  }
  return status;
}

// A table's rows as shown: under a table chosen for every run by --table (its own columns), a run
// of another kind shows only the rows that have one of the table's figures (a training point has
// no bus bandwidth); a run of the table's own kind shows every row, failed points included. Columns
// chosen by name (--columns) show every row.
std::vector<Record> shown_rows(const TablePreset& table, const std::vector<const ResultRun*>& runs,
                               const std::vector<std::string>& columns, const Config& config) {
  if (!config.columns.empty()) return rows_of(table, runs, config);
  std::vector<Record> shown;
  for (const ResultRun* run : runs)
    for (Record& row : rows_of(table, {run}, config)) {
      const bool own_kind = &preset_for(*run) == &table;
      const bool has_figure = std::any_of(columns.begin(), columns.end(), [&row](const std::string& c) {
        const Field* f = find_field(c);
        return f && f->role == FieldRole::Figure && c != "status" && row.get(c);  // every point has a status
      });
      if (own_kind || has_figure) shown.push_back(std::move(row));
    }
  sort_rows(shown, config.by);
  return shown;
}

// A preset's columns that some row has a value in: a page or a text table has no empty column
// (an SGEMM table without a thread sweep has no CPU columns). Columns asked for by name (--columns)
// and csv (read by scripts) keep every column.
std::vector<std::string> columns_shown(const Config& config, const TablePreset& table, const std::vector<Record>& rows) {
  if (!config.columns.empty()) return config.columns;
  std::vector<std::string> columns = parse_columns(table.columns);
  if (config.format == TableFormat::Csv || rows.empty()) return columns;
  std::vector<std::string> kept;
  for (const std::string& c : columns)
    if (std::any_of(rows.begin(), rows.end(), [&c](const Record& r) { return r.get(c) != nullptr; })) kept.push_back(c);
  return kept;
}

// --compare: every point of every run, as the reference's rows (--table's, else one row per
// point), judged against the reference. A run measured with a test's fault injected is judged
// (the tests measure what a verdict catches with one) but says so: its figures are not the system's.
int compare_runs(const Config& config, const std::vector<ResultRun>& runs, const std::vector<Record>& baseline,
                 SummaryPage* page) {
  std::vector<const ResultRun*> all;
  for (const ResultRun& run : runs) {
    all.push_back(&run);
    if (!run.provenance.fault_injection.empty())
      std::printf("fault injected: %s was measured with %s\n", run.path.c_str(), run.provenance.fault_injection.c_str());
  }
  const TablePreset& table = config.table ? *config.table : table_presets().front();
  return compare_with_baseline(config, baseline, rows_of(table, all, config), page);
}

// The tables of the runs (one per kind of result, or --table), their plot, and --compare's verdicts.
int show_tables(const Config& config, const std::vector<ResultRun>& runs, const std::vector<Record>& baseline,
                SummaryPage* page) {
  int status = 0;
  const auto groups = tables_for(config, runs);
  bool first = true;
  for (const auto& [table, members] : groups) {
    const std::vector<std::string> asked = config.columns.empty() ? parse_columns(table->columns) : config.columns;
    const std::vector<Record> records = shown_rows(*table, members, asked, config);
    const std::vector<std::string> columns = columns_shown(config, *table, records);
    // Files of several kinds: one table each, under a comment line naming it (csv readers skip '#').
    if (groups.size() > 1) std::printf("%s# %s: %s\n", first ? "" : "\n", table->name, table->help);
    first = false;
    if (!runs.empty()) std::fputs(render_table(records, columns, config.format).c_str(), stdout);
    if (page && !runs.empty()) page->table(*table, records, columns);
    if (!config.plot.empty() && !runs.empty() && groups.size() == 1) status = std::max(status, plot(config, *table, records));
  }
  if (!config.compare.empty()) status = std::max(status, compare_runs(config, runs, baseline, page));
  if (!config.plot.empty() && groups.size() > 1) {
    std::fprintf(stderr, "%s: error: --plot: the files hold several kinds of results: choose one with --table\n", kProgram);
    status = 1;
  }
  return status;
}

// --html: the page, whole or not at all; 1 (and one line) when it cannot be written.
int write_page(const Config& config, const SummaryPage& page) {
  std::fflush(stdout);
  try {
    page.write(config.html);
    std::fprintf(stderr, "%s: page written to %s\n", kProgram, config.html.c_str());
    return 0;
  } catch (const RuntimeError& e) {
    std::fprintf(stderr, "%s: error: --html: %s\n", kProgram, e.what());
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
  std::vector<Record> baseline;
  if (!config.compare.empty() && !config.population)
    baseline = reference_rows(config, config.table ? *config.table : table_presets().front(), status);
  std::optional<SummaryPage> page;
  if (!config.html.empty()) page.emplace(config.paths);
  SummaryPage* const on_page = page ? &*page : nullptr;
  const std::vector<ResultRun> runs = read_runs(config.paths, status, on_page);
  if (page) page->runs(runs);
  if (config.stability)
    status = std::max(status, show_stability(config, runs, on_page));
  else if (config.population)
    status = std::max(status, show_population(config, runs, on_page));
  else if (config.trend > 0)
    status = std::max(status, show_trend(config, runs, on_page));
  else
    status = std::max(status, show_tables(config, runs, baseline, on_page));
  if (page) status = std::max(status, write_page(config, *page));
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
