#include "analysis/reference_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "base/errors.hpp"
#include "base/median.hpp"
#include "analysis/report.hpp"
#include "analysis/significance.hpp"
#include "results/table.hpp"

namespace hpcnn {

namespace {

std::string library_version(const Provenance& p, const std::string& name) {
  for (const auto& [lib, version] : p.libraries)
    if (lib == name) return version;
  return {};
}

// Libraries that describe the run rather than the build: what oneDNN chose on this CPU.
bool is_build_library(const std::string& name) { return name != "oneDNN_isa" && name != "oneDNN_conv_algorithm"; }

std::string number_text(double v, const char* format = "%.4g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string percent_text(std::optional<double> v) { return v ? number_text(100.0 * *v, "%.3g%%") : "-"; }

struct PointRows {
  std::string label;
  std::vector<const Record*> rows;
};

// Runs among a point's rows: distinct `run`s, each row without one a run of its own.
std::size_t runs_of(const std::vector<const Record*>& rows) {
  std::set<std::string> named;
  std::size_t unnamed = 0;
  for (const Record* r : rows) {
    const std::string run = r->text("run");
    if (run.empty()) ++unnamed;
    else named.insert(run);
  }
  return named.size() + unnamed;
}

std::vector<PointRows> rows_by_point(const std::vector<Record>& rows) {
  std::map<std::string, std::size_t> index;
  std::vector<PointRows> points;
  for (const Record& r : rows) {
    const auto [it, fresh] = index.try_emplace(exact_settings_key(r), points.size());
    if (fresh) points.push_back({settings_key(r), {}});
    points[it->second].rows.push_back(&r);
  }
  return points;
}

}  // namespace

std::string build_description(const Provenance& p) {
  std::string d = "hpcnn " + p.hpcnn_version + ", configure '" + p.configure_options + "'";
  for (const auto& [lib, version] : p.libraries)
    if (is_build_library(lib)) d += ", " + lib + " " + version;
  return d;
}

std::string build_difference(const Provenance& a, const Provenance& b) {
  if (a.hpcnn_version != b.hpcnn_version) return "hpcnn " + a.hpcnn_version + " vs " + b.hpcnn_version;
  if (a.configure_options != b.configure_options)
    return "configure '" + a.configure_options + "' vs '" + b.configure_options + "'";
  for (const auto& [lib, version] : a.libraries) {
    if (!is_build_library(lib)) continue;
    const std::string other = library_version(b, lib);
    if (!other.empty() && other != version) return lib + " " + version + " vs " + other;
  }
  return {};
}

void check_one_origin(const std::vector<const ResultRun*>& runs, const std::string& what) {
  if (runs.empty()) return;
  const ResultRun& first = *runs.front();
  for (const ResultRun* run : runs) {
    if (!run->provenance.fault_injection.empty())
      throw UsageError(what + ": " + run->path + " was measured with a fault injected (" + run->provenance.fault_injection +
                       "): a test's run, no measurement of the system");
    if (const std::string d = build_difference(first.provenance, run->provenance); !d.empty())
      throw UsageError(what + " mixes builds: " + first.path + " and " + run->path + " (" + d + ")");
    // Files written before the machine was recorded say nothing about it.
    const std::string& m1 = first.provenance.machine;
    const std::string& m2 = run->provenance.machine;
    if (!m1.empty() && !m2.empty() && m1 != m2)
      throw UsageError(what + " mixes machines: " + first.path + " (" + m1 + ") and " + run->path + " (" + m2 + ")");
  }
}

void check_run_counts(const std::vector<Record>& rows, std::size_t min_runs, bool same_count, const std::string& what) {
  const std::vector<PointRows> points = rows_by_point(rows);
  std::size_t most = 0;
  for (const PointRows& p : points) most = std::max(most, runs_of(p.rows));
  for (const PointRows& p : points) {
    const std::size_t runs = runs_of(p.rows);
    if (runs < min_runs)
      throw UsageError(what + " holds " + std::to_string(runs) + " run(s) of " + p.label + ", fewer than the " +
                       std::to_string(min_runs) + " asked for (bless more runs)");
    if (same_count && runs < most)
      throw UsageError(what + ": " + p.label + " is in " + std::to_string(runs) + " of its " + std::to_string(most) +
                       " runs (a run that lacks a point of the set)");
  }
}

std::vector<PointStability> point_stability(const std::vector<Record>& rows, const std::vector<std::string>& metrics,
                                            const Tolerances& tolerances) {
  std::vector<PointStability> out;
  std::vector<std::optional<RunComparison>> tests;  // one per entry of out
  for (const PointRows& p : rows_by_point(rows)) {
    std::vector<std::string> ms = metrics;
    if (ms.empty())
      for (const Record* r : p.rows)
        for (std::string& m : default_metrics(*r))
          if (std::find(ms.begin(), ms.end(), m) == ms.end()) ms.push_back(std::move(m));
    for (const std::string& metric : ms) {
      std::vector<double> figures, iters;
      double log_sum = 0;
      for (double x : run_figures(p.rows, metric))
        if (x > 0) figures.push_back(x), log_sum += std::log(x);
      for (const Record* r : p.rows)
        if (const auto n = r->number("iters")) iters.push_back(*n);
      if (figures.empty()) continue;
      PointStability s;
      s.settings = p.label, s.metric = metric, s.runs = figures.size();
      s.figure = std::exp(log_sum / static_cast<double>(figures.size()));
      if (!iters.empty()) s.iters = median(iters);
      // A new run at the reference's own centre: the test a comparison would make, with this spread.
      tests.push_back(compare_runs(figures, {s.figure}, higher_is_better(metric)));
      out.push_back(std::move(s));
    }
  }
  const double one_test_alpha = tolerances.alpha / static_cast<double>(std::max<std::size_t>(out.size(), 1));
  for (std::size_t i = 0; i < out.size(); ++i) {
    PointStability& s = out[i];
    if (!tests[i] || !tests[i]->has_spread()) continue;
    s.spread = std::expm1(tests[i]->log_sd);
    s.detectable = tests[i]->detectable_change(one_test_alpha);
    s.unstable = s.detectable && *s.detectable > tolerances.unstable_above;
    if (s.iters && s.detectable) s.stable_iters = iterations_to_detect(*s.iters, *s.detectable, tolerances.unstable_above,
                                                                      tests[i]->higher_is_better);
    s.stable_runs = runs_to_detect(tests[i]->log_sd, one_test_alpha, tolerances.unstable_above, 100,
                                   tests[i]->higher_is_better);
  }
  return out;
}

StabilityRows stability_rows(const std::vector<PointStability>& given) {
  StabilityRows out;
  for (bool unstable_pass : {true, false})  // what needs a look first
    for (const PointStability& s : given)
      if (s.unstable == unstable_pass) out.points.push_back(&s);
  std::vector<std::string> labels;
  for (const PointStability* s : out.points) labels.push_back(s->settings);
  const SettingsSplit settings = split_settings(labels);
  out.common = settings.common;
  out.header = {"settings", "metric", "runs", "figure", "spread", "detects", "iters", "stable_iters", "stable_runs", "verdict"};
  for (std::size_t row = 0; row < out.points.size(); ++row) {
    const PointStability& s = *out.points[row];
    std::string stable_iters = "-", stable_runs = "-";
    if (s.unstable) {
      if (s.stable_iters) stable_iters = number_text(*s.stable_iters, "%.0f");
      stable_runs = s.stable_runs ? std::to_string(*s.stable_runs) : "over 100";
    }
    out.rows.push_back({settings.own[row], s.metric, std::to_string(s.runs), number_text(s.figure), percent_text(s.spread),
                        percent_text(s.detectable), s.iters ? number_text(*s.iters, "%.0f") : "-", stable_iters, stable_runs,
                        !s.spread ? "one run: no spread" : s.unstable ? "UNSTABLE" : "stable"});
  }
  return out;
}

std::string stability_table(const std::vector<PointStability>& points) {
  const StabilityRows t = stability_rows(points);
  return settings_table_text(t.common, t.header, t.rows);
}

std::string stability_csv(const std::vector<PointStability>& points) {
  auto cell = [](std::optional<double> v) { return v ? number_text(*v, "%.6g") : std::string(); };
  std::string out = "settings,metric,runs,figure,spread,detectable,iters,stable_iters,stable_runs,unstable\n";
  for (const PointStability& s : points)
    out += "\"" + s.settings + "\"," + s.metric + "," + std::to_string(s.runs) + "," + number_text(s.figure, "%.6g") + "," +
           cell(s.spread) + "," + cell(s.detectable) + "," + cell(s.iters) + "," + cell(s.stable_iters) + "," +
           (s.stable_runs ? std::to_string(*s.stable_runs) : std::string()) + "," + (s.unstable ? "1" : "0") + "\n";
  return out;
}

}  // namespace hpcnn
