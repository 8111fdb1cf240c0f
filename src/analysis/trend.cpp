#include "analysis/trend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "base/median.hpp"
#include "analysis/report.hpp"
#include "results/table.hpp"

namespace hpcnn {

double mad_sigma(const std::vector<double>& v) {
  const double m = median(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - m));
  // 1.4826: the MAD of a normal distribution is 0.6745 sigma.
  return 1.4826 * median(dev);
}

double theil_sen_slope(const std::vector<double>& v) {
  std::vector<double> slopes;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = i + 1; j < v.size(); ++j) slopes.push_back((v[j] - v[i]) / static_cast<double>(j - i));
  return median(slopes);
}

double mann_kendall_z(const std::vector<double>& v) {
  const double n = static_cast<double>(v.size());
  if (v.size() < 3) return 0;
  double s = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = i + 1; j < v.size(); ++j) s += (v[j] > v[i]) - (v[j] < v[i]);
  // Variance of S without ties (measured figures are almost never exactly equal).
  const double var = n * (n - 1) * (2 * n + 5) / 18.0;
  if (s == 0) return 0;
  return (s > 0 ? s - 1 : s + 1) / std::sqrt(var);
}

std::size_t min_history(const TrendSettings& settings) { return std::max<std::size_t>(3, settings.window / 2); }

PointVerdict PointTrend::as_verdict() const {
  PointVerdict v;
  v.suite = suite, v.settings = settings, v.metric = metric;
  v.verdict = verdict, v.detail = detail;
  if (!nights.empty()) {
    const TrendNight& last = nights.back();
    v.now = last.value;
    v.reference = last.center;
    if (last.center && last.band && *last.center != 0) v.band = *last.band / std::fabs(*last.center);
  }
  v.band_source = "median-+MAD of the runs before";
  return v;
}

namespace {

struct Series {
  std::string suite, settings, metric;
  std::vector<TrendNight> nights;
};

// The metrics of a point: the ones asked for, else the default ones of any of its rows.
std::vector<std::string> metrics_for(const std::vector<const Record*>& rows, const std::vector<std::string>& metrics) {
  if (!metrics.empty()) return metrics;
  std::vector<std::string> out;
  for (const Record* r : rows)
    for (std::string& m : default_metrics(*r))
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(std::move(m));
  return out;
}

// A night's value of `metric` over the point's rows in one run (the best of its rounds), and its
// status problem.
TrendNight night_of(const std::string& time, const std::vector<const Record*>& rows, const std::string& metric) {
  TrendNight n;
  n.time = time;
  for (const Record* r : rows)
    if (n.problem.empty()) n.problem = point_problem(*r);
  // The best of the run's rounds (verdict.hpp's run_figures), as --compare takes it.
  if (const std::vector<double> v = run_figures(rows, metric); !v.empty()) n.value = median(v);
  if (!n.problem.empty()) n.flag = NightFlag::Status;
  return n;
}

// Judges each night against the last `window` clean values before it (median -+ band).
void judge_nights(std::vector<TrendNight>& nights, bool up, const TrendSettings& s) {
  std::vector<double> clean;  // values of the clean nights so far, oldest first
  for (TrendNight& n : nights) {
    if (n.flag == NightFlag::Status || !n.value) {
      if (n.flag != NightFlag::Status) n.flag = NightFlag::Status, n.problem = "no value";
      continue;
    }
    if (clean.size() >= min_history(s)) {
      const std::vector<double> w(clean.end() - static_cast<std::ptrdiff_t>(std::min(clean.size(), s.window)), clean.end());
      const double m = median(w);
      n.center = m;
      n.band = std::max(s.robust_z * mad_sigma(w), s.floor * std::fabs(m));
      const bool low = *n.value < m - *n.band, high = *n.value > m + *n.band;
      n.flag = (up ? low : high) ? NightFlag::Worse : (up ? high : low) ? NightFlag::Better : NightFlag::None;
    }
    clean.push_back(*n.value);
  }
}

// Drift over the last 2N clean nights: the Theil-Sen slope relative to their median and the
// Mann-Kendall z.
void test_drift(PointTrend& t, const TrendSettings& s) {
  std::vector<double> v;
  for (const TrendNight& n : t.nights)
    if (n.flag != NightFlag::Status && n.value) v.push_back(*n.value);
  if (v.size() > 2 * s.window) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(2 * s.window));
  if (v.size() < std::max<std::size_t>(min_history(s) + 1, 4)) return;
  const double m = median(v);
  if (m == 0) return;
  t.drift_runs = v.size();
  t.drift_per_run = theil_sen_slope(v) / std::fabs(m);
  t.drift_zscore = mann_kendall_z(v);
}

// A step that has lasted a few runs: each of the last `kRecent` clean runs is worse than every one
// of the N clean runs before them (under pure noise that happens with probability 1 / C(N+3, 3):
// 0.35% for N = 10, whatever the noise's distribution), and their median is beyond the band of
// those N runs (robust_z MAD, narrowed as a median of 3 normal values varies 0.67 times as much as
// one; never below the floor), so a consistent but tiny shift of a quiet machine is not a step.
constexpr std::size_t kRecent = 3;
constexpr double kMedianOf3Spread = 0.67;

bool recent_shift(const std::vector<TrendNight>& nights, bool up, const TrendSettings& s) {
  std::vector<double> v;
  for (const TrendNight& n : nights)
    if (n.flag != NightFlag::Status && n.value) v.push_back(*n.value);
  if (v.size() < kRecent + min_history(s)) return false;
  const std::vector<double> recent(v.end() - kRecent, v.end());
  const auto before_end = v.end() - kRecent;
  const std::vector<double> before(before_end - static_cast<std::ptrdiff_t>(std::min(v.size() - kRecent, s.window)), before_end);
  const double worst_before = up ? *std::min_element(before.begin(), before.end()) : *std::max_element(before.begin(), before.end());
  for (double x : recent)
    if (up ? x >= worst_before : x <= worst_before) return false;
  const double m = median(before), r = median(recent);
  const double band = std::max(s.robust_z * kMedianOf3Spread * mad_sigma(before), s.floor * std::fabs(m));
  return up ? r < m - band : r > m + band;
}

// The drift in the worse direction, when significant and beyond the floor over the tested runs:
// "drift -2.1%/run over 20 runs (z=-3.9)", else "".
std::string worse_drift(const PointTrend& t, bool up, const TrendSettings& s) {
  if (!t.drift_per_run || !t.drift_zscore) return {};
  const double worse = up ? -*t.drift_per_run : *t.drift_per_run;
  const double z = up ? -*t.drift_zscore : *t.drift_zscore;
  if (z <= s.drift_z || worse * static_cast<double>(t.drift_runs - 1) <= s.floor) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, "drift %+.1f%%/run over %zu runs (z=%.1f)", 100.0 * *t.drift_per_run, t.drift_runs,
                *t.drift_zscore);
  return buf;
}

// The latest run decides: its status; else a step (the last two runs each beyond their band, or
// the last 3 runs below all the N before them) and a drift, each named; else faster or ok. One
// flagged run alone is shown (flagged column, plot) but is not a failure: on a shared machine one
// bad night is noise until the next confirms it (--compare judges single runs against a reference).
void decide(PointTrend& t, bool up, const TrendSettings& s) {
  const TrendNight& last = t.nights.back();
  if (last.flag == NightFlag::Status) {
    t.verdict = Verdict::Status, t.detail = "latest run: " + last.problem;
    return;
  }
  std::string step;
  const std::size_t count = t.nights.size();
  if (last.flag == NightFlag::Worse && count >= 2 && t.nights[count - 2].flag == NightFlag::Worse)
    step = "step (last 2 runs)";
  else if (recent_shift(t.nights, up, s))
    step = "step (last " + std::to_string(kRecent) + " runs)";
  const std::string drift = worse_drift(t, up, s);
  if (!step.empty() || !drift.empty()) {
    t.verdict = Verdict::Regression;
    t.detail = step + (!step.empty() && !drift.empty() ? ", " : "") + drift;
    return;
  }
  t.verdict = last.flag == NightFlag::Better ? Verdict::Faster : Verdict::Ok;
}

}  // namespace

std::vector<PointTrend> trend_points(std::vector<TrendRun> runs, const std::vector<std::string>& metrics,
                                     const TrendSettings& s) {
  std::stable_sort(runs.begin(), runs.end(), [](const TrendRun& a, const TrendRun& b) { return a.time < b.time; });
  // point key -> time -> its rows; points in the order they first appear.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::vector<std::pair<std::string, std::vector<const Record*>>>>> points;
  for (const TrendRun& run : runs)
    for (const Record& r : run.rows) {
      const std::string key = exact_settings_key(r);
      auto [it, fresh] = points.try_emplace(key);
      if (fresh) order.push_back(key), it->second.first = settings_key(r);
      auto& by_time = it->second.second;
      if (by_time.empty() || by_time.back().first != run.time) by_time.emplace_back(run.time, std::vector<const Record*>{});
      by_time.back().second.push_back(&r);
    }
  std::vector<PointTrend> out;
  for (const std::string& key : order) {
    const auto& [label, by_time] = points.at(key);
    std::vector<const Record*> all;
    for (const auto& [time, rows] : by_time) all.insert(all.end(), rows.begin(), rows.end());
    for (const std::string& metric : metrics_for(all, metrics)) {
      PointTrend t;
      t.suite = all.front()->text("suite"), t.settings = label, t.metric = metric;
      for (const auto& [time, rows] : by_time) t.nights.push_back(night_of(time, rows, metric));
      bool any = false;
      for (const TrendNight& n : t.nights) any = any || n.value;
      if (!any) continue;  // a --metric this kind of point does not have
      const bool up = higher_is_better(metric);
      judge_nights(t.nights, up, s);
      test_drift(t, s);
      decide(t, up, s);
      out.push_back(std::move(t));
    }
  }
  return out;
}

namespace {

std::string num(std::optional<double> v, const char* format = "%.4g") {
  if (!v) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

// The dates (YYYY-MM-DD, or the time as given) of the nights with the flag.
std::string flagged_nights(const PointTrend& t) {
  std::string out;
  for (const TrendNight& n : t.nights)
    if (n.flag == NightFlag::Worse || n.flag == NightFlag::Status)
      out.append(out.empty() ? "" : " ").append(n.time.substr(0, 10)).append(n.flag == NightFlag::Status ? "(status)" : "");
  return out.empty() ? "-" : out;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

TrendRows trend_rows(const std::vector<PointTrend>& trends, bool csv) {
  // CSV keeps every row's whole settings (a program reads it); text, Markdown and the page show
  // the settings every row shares once above the table.
  std::vector<std::string> labels;
  for (const PointTrend& t : trends) labels.push_back(t.settings);
  const SettingsSplit settings = csv ? SettingsSplit{"", labels} : split_settings(labels);
  TrendRows out;
  out.common = settings.common;
  out.header = {"settings", "metric", "runs", "latest", "median", "band", "ratio", "drift_per_run", "drift_z", "flagged", "verdict"};
  for (std::size_t row = 0; row < trends.size(); ++row) {
    const PointTrend& t = trends[row];
    const TrendNight& last = t.nights.back();
    std::optional<double> band, ratio;
    if (last.center && last.band && *last.center != 0) band = *last.band / std::fabs(*last.center);
    if (last.center && last.value && *last.center != 0) ratio = *last.value / *last.center;
    std::string verdict = verdict_name(t.verdict);
    if (!t.detail.empty()) verdict += " " + t.detail;
    out.rows.push_back({settings.own[row], t.metric, std::to_string(t.nights.size()), num(last.value), num(last.center),
                        csv ? num(band, "%.4g") : band ? num(100 * *band, "%.1f%%") : "",
                        num(ratio), csv ? num(t.drift_per_run, "%.4g") : t.drift_per_run ? num(100 * *t.drift_per_run, "%+.2f%%") : "",
                        num(t.drift_zscore, "%.2f"), flagged_nights(t), verdict});
  }
  return out;
}

std::string trend_table(const std::vector<PointTrend>& trends, TableFormat format) {
  const bool csv = format == TableFormat::Csv;
  const TrendRows t = trend_rows(trends, csv);
  std::vector<std::vector<std::string>> cells = {t.header};
  cells.insert(cells.end(), t.rows.begin(), t.rows.end());
  std::string out;
  if (!t.common.empty())
    out = format == TableFormat::Markdown ? "Settings of every row: `" + t.common + "`\n\n"
                                          : "settings of every row: " + t.common + "\n";
  if (csv) {
    for (const auto& row : cells) {
      for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_cell(row[i]);
      out += "\n";
    }
    return out;
  }
  if (format == TableFormat::Markdown) {
    for (std::size_t r = 0; r < cells.size(); ++r) {
      out += "|";
      for (const std::string& c : cells[r]) out += " " + c + " |";
      out += "\n";
      if (r == 0) {
        out += "|";
        for (std::size_t i = 0; i < cells[0].size(); ++i) out += (i >= 2 && i <= 8 ? "--:|" : "---|");
        out += "\n";
      }
    }
    return out;
  }
  return out + aligned_text(cells);
}

}  // namespace hpcnn
