#include "analysis/verdict.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "base/durable_file.hpp"
#include "base/median.hpp"
#include "base/errors.hpp"
#include "analysis/html_page.hpp"
#include "analysis/report.hpp"
#include "results/table.hpp"

namespace hpcnn {

namespace {

struct Group {
  std::string label, suite;
  std::vector<const Record*> rows;
};

std::map<std::string, Group> group_rows(const std::vector<Record>& rows, std::vector<std::string>& order) {
  std::map<std::string, Group> groups;
  for (const Record& r : rows) {
    const std::string key = exact_settings_key(r);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      it->second.label = settings_key(r);
      it->second.suite = r.text("suite");
    }
    it->second.rows.push_back(&r);
  }
  return groups;
}

// The row of the best round of a point that has one run (its spread gives a one-run band).
const Record* best_row(const std::vector<const Record*>& rows, const std::string& metric) {
  const bool up = higher_is_better(metric);
  const Record* best = rows.front();
  for (const Record* r : rows) {
    const auto x = r->number(metric), b = best->number(metric);
    if (x && (!b || (up ? *x > *b : *x < *b))) best = r;
  }
  return best;
}

std::optional<double> median_metric(const std::vector<const Record*>& rows, const std::string& metric) {
  const std::vector<double> v = run_figures(rows, metric);
  if (v.empty()) return std::nullopt;
  return median(v);
}

std::string first_problem(const std::vector<const Record*>& rows) {
  for (const Record* r : rows)
    if (std::string p = point_problem(*r); !p.empty()) return p;
  return {};
}

std::string number_text(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}


}  // namespace

namespace {

// Per run the row its figure of `metric` comes from: the best of the point's rows in that run (its
// rounds: interference from outside comes and goes between them, a change of the system slows
// them all). Rows without a `run` are runs of their own; rows without a finite figure are left out.
std::vector<const Record*> best_round_per_run(const std::vector<const Record*>& rows, const std::string& metric) {
  const bool up = higher_is_better(metric);
  std::map<std::string, const Record*> best;
  std::vector<const Record*> out;
  for (const Record* r : rows) {
    const auto x = r->number(metric);
    if (!x || !std::isfinite(*x)) continue;
    const std::string run = r->text("run");
    if (run.empty()) {
      out.push_back(r);
      continue;
    }
    const auto [it, fresh] = best.try_emplace(run, r);
    const double held = *it->second->number(metric);
    if (!fresh && (up ? *x > held : *x < held)) it->second = r;
  }
  for (const auto& [run, r] : best) out.push_back(r);
  return out;
}

}  // namespace

std::vector<double> run_figures(const std::vector<const Record*>& rows, const std::string& metric) {
  std::vector<double> out;
  for (const Record* r : best_round_per_run(rows, metric)) out.push_back(*r->number(metric));
  return out;
}

namespace {

struct RateAtName {
  RateAt at;
  const char* name;  // --at's word
  const char* text;  // how a heading says it
};
constexpr RateAtName kRateAtNames[] = {{RateAt::Delivered, "delivered", "delivered (work over wall time)"},
                                       {RateAt::Median, "median", "median iteration"},
                                       {RateAt::P5, "p5", "5th-percentile iteration"}};

const RateAtName& rate_at_entry(RateAt at) {
  for (const RateAtName& e : kRateAtNames)
    if (e.at == at) return e;
  return kRateAtNames[0];
}

}  // namespace

RateAt parse_rate_at(const std::string& text) {
  for (const RateAtName& e : kRateAtNames)
    if (text == e.name) return e.at;
  throw UsageError("--at: '" + text + "' is not delivered, median or p5");
}

const char* rate_at_name(RateAt at) { return rate_at_entry(at).name; }
const char* rate_at_text(RateAt at) { return rate_at_entry(at).text; }

namespace {

// One rate of a row taken at the median or the 5th-percentile iteration: from the median-based
// figure where the suite records one (img_per_s_median), else from the delivered figure and the
// mean time it was computed over (the allreduce's bandwidths: time_avg_us).
struct RateSource {
  const char* rate;
  const char* median_rate;  // "" when the row has none
  const char* mean_time;    // the time the delivered figure is over
};

void rate_at(Record& r, const RateSource& src, RateAt at) {
  const auto x = r.number(src.rate);
  if (!x) return;
  const auto median_s = r.number("iter_median_s");
  double at_median = 0;
  if (const auto m = *src.median_rate ? r.number(src.median_rate) : std::nullopt) {
    at_median = *m;
  } else if (const auto mean = r.number(src.mean_time); mean && median_s && *median_s > 0) {
    const double mean_s = std::string(src.mean_time) == "time_avg_us" ? *mean * 1e-6 : *mean;
    at_median = *x * mean_s / *median_s;
  } else {
    return;
  }
  if (at == RateAt::Median) {
    r.set(src.rate, at_median);
    return;
  }
  const auto p5 = r.number("iter_p5_s");
  if (p5 && *p5 > 0 && median_s && *median_s > 0) r.set(src.rate, at_median * *median_s / *p5);
}

}  // namespace

void rates_at(std::vector<Record>& rows, RateAt at) {
  if (at == RateAt::Delivered) return;
  static const RateSource sources[] = {{"img_per_s", "img_per_s_median", "iter_mean_s"},
                                       {"gflops", "gflops_median", "iter_mean_s"},
                                       {"busbw_gbs", "", "time_avg_us"},
                                       {"algbw_gbs", "", "time_avg_us"}};
  for (Record& r : rows)
    for (const RateSource& src : sources) rate_at(r, src, at);
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::Faster: return "faster";
    case Verdict::Regression: return "REGRESSION";
    case Verdict::Unstable: return "UNSTABLE";
    case Verdict::MissingNow: return "MISSING-now";
    case Verdict::MissingReference: return "MISSING-reference";
    case Verdict::Status: return "STATUS";
  }
  return "?";
}

std::string point_problem(const Record& row) {
  // Wrong elements first: the most specific reason (such a point's status is failed too).
  if (const auto wrong = row.number("wrong"); wrong && *wrong > 0) return row.text("wrong") + " wrong elements";
  const std::string status = row.text("status");
  if (!status.empty() && status != "ok") {
    const std::string reason = row.text("status_reason");
    return "status " + status + (reason.empty() ? "" : ": " + reason);
  }
  if (row.text("phase_check") == "failed") return "phase check failed (gap " + row.text("phase_gap_max") + ")";
  return {};
}

std::optional<double> PointVerdict::ratio() const {
  if (!reference || !now || *reference == 0) return std::nullopt;
  return *now / *reference;
}

std::string PointVerdict::message() const {
  std::string m = std::string(verdict_name(verdict)) + ": " + settings + " " + metric + " reference " +
                  number_text(reference) + " now " + number_text(now);
  if (const auto r = ratio()) m += " ratio " + number_text(r);
  if (runs && runs->has_spread()) m += " [" + number_text(runs->ratio_low) + ", " + number_text(runs->ratio_high) + "]";
  if (!why.empty()) return m + ": " + why;
  char buf[64];
  std::snprintf(buf, sizeof buf, " band %.1f%% (%s)", 100.0 * band, band_source.c_str());
  m += buf;
  if (!detail.empty()) m += ": " + detail;
  return m;
}

std::vector<std::string> default_metrics(const Record& row) {
  std::vector<std::string> out;
  for (const char* headline : {"img_per_s", "busbw_gbs", "gflops"})
    if (row.number(headline)) {
      out.emplace_back(headline);
      break;
    }
  if (row.number("test_acc")) out.emplace_back("test_acc");
  return out;
}

bool higher_is_better(const std::string& metric) {
  if (metric == "stall_share" || metric == "outlier_iters") return false;  // what stalls took
  const Field* f = find_field(metric);
  return !f || (std::string(f->unit) != "s" && std::string(f->unit) != "us");
}

std::optional<std::pair<double, std::string>> spread_band(const Record& r, const std::string& metric) {
  // One run with --repeat: the confidence interval of its repeats' throughputs.
  if (metric == "img_per_s") {
    const auto lo = r.number("img_per_s_ci_low"), hi = r.number("img_per_s_ci_high"), x = r.number("img_per_s");
    const auto reps = r.number("repeats");
    if (lo && hi && x && *x > 0 && reps && *reps >= 2 && std::isfinite(*lo) && std::isfinite(*hi))
      return std::make_pair((*hi - *lo) / 2.0 / *x, std::string("ci95 (repeats)"));
  }
  // One run: the spread of its iterations, p5..p95 about the median, for the figures derived from
  // the iteration time.
  if (metric == "img_per_s" || metric == "gflops" || metric.rfind("iter_", 0) == 0) {
    const auto p5 = r.number("iter_p5_s"), p95 = r.number("iter_p95_s"), med = r.number("iter_median_s");
    if (p5 && p95 && med && *med > 0 && *p95 >= *p5) {
      const double h = (*p95 - *p5) / 2.0 / *med;  // relative spread of the time
      // Rates go as 1 / time: a time h slower is a rate h / (1 + h) lower (always below 100%, so a
      // wide spread still leaves a drop that is flagged).
      const bool rate = metric == "img_per_s" || metric == "gflops";
      return std::make_pair(rate ? h / (1.0 + h) : h, std::string("p5-p95"));
    }
  }
  return std::nullopt;
}

double iterations_to_detect(double iters, double detectable, double limit, bool higher_is_better) {
  if (!(iters > 0) || !(detectable > limit) || !(limit > 0)) return iters;
  if (higher_is_better && !(detectable < 1 && limit < 1)) return iters;  // a drop of 100% is no distance
  // The log distances of the two changes (a rate's drop d is -ln(1 - d), a time's rise ln(1 + d)):
  // the standard error must shrink by their ratio.
  auto distance = [higher_is_better](double d) { return higher_is_better ? -std::log1p(-d) : std::log1p(d); };
  const double shrink = distance(detectable) / distance(limit);
  return std::ceil(iters * shrink * shrink);
}

std::pair<std::string, double> parse_metric_tolerance(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return {"", parse_tolerance(text)};
  const std::string metric = text.substr(0, eq);
  const Field* f = find_field(metric);
  if (!f || f->type == FieldType::String)
    throw UsageError("--tolerance: '" + metric + "' in '" + text + "' is not a numeric field");
  return {metric, parse_tolerance(text.substr(eq + 1))};
}

namespace {

std::vector<double> figures_of(const std::vector<const Record*>& rows, const std::string& metric) {
  std::vector<double> v;
  for (const Record* r : rows)
    if (const auto x = r->number(metric); x && std::isfinite(*x)) v.push_back(*x);
  return v;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", 100.0 * fraction);
  return buf;
}

std::string p_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, p < 1e-4 ? "%.1e" : "%.2g", p);
  return buf;
}

// "12.3% slower" / "4.1% faster" / "unchanged", for the ratio now / reference of `metric`.
std::string change_text(double ratio, bool up) {
  if (ratio == 1) return "unchanged";
  const bool worse = up ? ratio < 1 : ratio > 1;
  const double size = up ? std::fabs(1.0 - ratio) : std::fabs(ratio - 1.0);
  return percent(size) + (worse ? (up ? " lower" : " higher") : (up ? " higher" : " lower"));
}

// The practical threshold of `metric`: an override, else the floor.
void set_threshold(const Tolerances& tol, const std::string& metric, PointVerdict& v) {
  if (const auto it = tol.per_metric.find(metric); it != tol.per_metric.end()) {
    v.band = it->second, v.band_source = "override";
  } else if (tol.all_metrics) {
    v.band = *tol.all_metrics, v.band_source = "override";
  } else {
    v.band = tol.floor, v.band_source = "floor";
  }
}

// One run on each side: the band is the reference run's own spread (or the threshold when wider).
void judge_one_run(const Group& ref, const Tolerances& tol, PointVerdict& v) {
  set_threshold(tol, v.metric, v);
  if (v.band_source == "floor")
    if (const auto s = spread_band(*best_row(ref.rows, v.metric), v.metric); s && s->first > tol.floor)
      v.band = s->first, v.band_source = s->second;
  v.band_source += " (1 run)";
  const bool up = higher_is_better(v.metric);
  const double lo = *v.reference * (1.0 - v.band), hi = *v.reference * (1.0 + v.band);
  const bool worse = up ? *v.now < lo : *v.now > hi;
  const bool better = up ? *v.now > hi : *v.now < lo;
  v.verdict = worse ? Verdict::Regression : better ? Verdict::Faster : Verdict::Ok;
  const std::string change = v.ratio() ? change_text(*v.ratio(), up) : "no ratio";
  v.why = change + (worse || better ? " beyond " : " within ") + "the " + percent(v.band) + " band (" + v.band_source +
          "; one run on each side, so no test of significance)";
}

// Several runs on a side: the run-level test (significance.hpp); the verdict waits for the
// multiplicity adjustment over the whole comparison (decide_tested).
void test_runs(const Group& ref, const Group& now, const Tolerances& tol, PointVerdict& v) {
  set_threshold(tol, v.metric, v);
  const std::vector<double> a = run_figures(ref.rows, v.metric), b = run_figures(now.rows, v.metric);
  v.runs = compare_runs(a, b, higher_is_better(v.metric));
  if (!v.runs || !v.runs->has_spread()) {
    // Figures of zero or below (no logarithms), or too few usable runs to leave a degree of
    // freedom: judged as single runs, on the band of the reference's own spread, each side's
    // figure the median of its usable runs where it has any.
    v.runs.reset();
    auto usable_median = [](std::vector<double> x) -> std::optional<double> {
      x.erase(std::remove_if(x.begin(), x.end(), [](double f) { return !(f > 0); }), x.end());
      if (x.empty()) return std::nullopt;
      return median(std::move(x));
    };
    if (const auto r = usable_median(a)) v.reference = r;
    if (const auto n = usable_median(b)) v.now = n;
    judge_one_run(ref, tol, v);
    return;
  }
  double log_ref = 0;
  for (double x : a)
    if (x > 0) log_ref += std::log(x);
  v.reference = std::exp(log_ref / static_cast<double>(v.runs->reference_runs));
  v.now = *v.reference * v.runs->ratio;
  std::vector<double> iters = figures_of(ref.rows, "iters");
  if (!iters.empty()) v.iters = median(std::move(iters));
}

// The verdict of a tested point, once its p-values are adjusted and the level of one test of the
// family (alpha / tests) is known.
void decide_tested(const Tolerances& tol, double one_test_alpha, PointVerdict& v) {
  const RunComparison& c = *v.runs;
  const bool up = higher_is_better(v.metric);
  const bool worse_beyond = up ? c.ratio < 1.0 - v.band : c.ratio > 1.0 + v.band;
  const bool better_beyond = up ? c.ratio > 1.0 + v.band : c.ratio < 1.0 - v.band;
  v.detectable = c.detectable_change(one_test_alpha);
  const std::string change = change_text(c.ratio, up);
  const std::string runs = std::to_string(c.reference_runs) + " reference run" + (c.reference_runs == 1 ? "" : "s") +
                           ", " + std::to_string(c.now_runs) + " now";
  if (v.p_adjusted < tol.alpha && worse_beyond) {
    v.verdict = Verdict::Regression;
    v.why = change + ": significant (p " + p_text(c.p_worse) + ", adjusted " + p_text(v.p_adjusted) + " < " +
            p_text(tol.alpha) + ") and beyond the " + percent(v.band) + " " + v.band_source;
  } else if (v.p_better_adjusted < tol.alpha && better_beyond) {
    v.verdict = Verdict::Faster;
    v.why = change + ": significant (p " + p_text(c.p_better) + ", adjusted " + p_text(v.p_better_adjusted) +
            ") and beyond the " + percent(v.band) + " " + v.band_source + ": bless a new reference?";
  } else if (v.detectable && *v.detectable > tol.unstable_above) {
    v.verdict = Verdict::Unstable;
    v.detail = "runs spread " + percent(std::expm1(c.log_sd)) + " (" + runs + ")";
    std::optional<double> stable_iters;
    if (v.iters) stable_iters = iterations_to_detect(*v.iters, *v.detectable, tol.unstable_above, up);
    v.why = steadying_advice(c.reference_runs, std::expm1(c.log_sd), *v.detectable,
                             runs_to_detect(c.log_sd, one_test_alpha, tol.unstable_above, 100, c.higher_is_better), v.iters, stable_iters);
  } else {
    v.verdict = Verdict::Ok;
    const bool worse_side = up ? c.ratio < 1 : c.ratio > 1;
    if (worse_beyond || better_beyond)
      v.why = change + ": not significant (p " + p_text(worse_side ? c.p_worse : c.p_better) + ", adjusted " +
              p_text(worse_side ? v.p_adjusted : v.p_better_adjusted) + "; " + runs + ")";
    else
      v.why = change + ": within the " + percent(v.band) + " " + v.band_source + " (p " + p_text(c.p_worse) + ")";
    if (v.detectable) v.why += "; detects changes beyond " + percent(*v.detectable);
  }
}

// Holm's adjustment over every tested point of the comparison, then each one's verdict.
void decide_all_tested(const Tolerances& tol, std::vector<PointVerdict>& verdicts) {
  std::vector<PointVerdict*> tested;
  for (PointVerdict& v : verdicts)
    if (v.runs && v.runs->has_spread() && v.verdict == Verdict::Ok) tested.push_back(&v);
  std::vector<double> worse, better;
  for (const PointVerdict* v : tested) worse.push_back(v->runs->p_worse), better.push_back(v->runs->p_better);
  const std::vector<double> worse_adjusted = holm_adjusted(worse), better_adjusted = holm_adjusted(better);
  const double one_test_alpha = tested.empty() ? tol.alpha : tol.alpha / static_cast<double>(tested.size());
  for (std::size_t i = 0; i < tested.size(); ++i) {
    tested[i]->p_adjusted = worse_adjusted[i];
    tested[i]->p_better_adjusted = better_adjusted[i];
    decide_tested(tol, one_test_alpha, *tested[i]);
  }
}

// A point present on both sides, for one metric.
void judge_matched(const Group& r, const Group& c, const std::string& ref_problem, const std::string& now_problem,
                   const Tolerances& tol, PointVerdict& v) {
  if (!now_problem.empty() || !ref_problem.empty()) {
    v.verdict = Verdict::Status;
    v.detail = !now_problem.empty() ? "now: " + now_problem : "reference: " + ref_problem;
    v.why = v.detail;
  } else if (v.metric == "status") {
    v.verdict = Verdict::Ok;
  } else if (!v.now) {
    v.verdict = Verdict::MissingNow;
    v.detail = v.why = "the current run has no " + v.metric;
  } else if (!v.reference) {
    v.verdict = Verdict::MissingReference;
    v.detail = v.why = "the reference has no " + v.metric;
  } else if (run_figures(r.rows, v.metric).size() >= 2 || run_figures(c.rows, v.metric).size() >= 2) {
    test_runs(r, c, tol, v);
  } else {
    judge_one_run(r, tol, v);
  }
}

// The stall share of the round each run's figure of `metric` came from (run_figures' choice).
std::vector<double> run_stall_shares(const std::vector<const Record*>& rows, const std::string& metric) {
  std::vector<double> out;
  for (const Record* r : best_round_per_run(rows, metric))
    if (const auto share = r->number("stall_share")) out.push_back(*share);
  return out;
}

bool is_rate(const std::string& metric) {
  return metric == "img_per_s" || metric == "gflops" || metric == "busbw_gbs" || metric == "algbw_gbs";
}

void set_stalls(const Group& ref, const Group& now, PointVerdict& v) {
  if (!is_rate(v.metric)) return;
  const std::vector<double> a = run_stall_shares(ref.rows, v.metric), b = run_stall_shares(now.rows, v.metric);
  if (a.empty() || b.empty()) return;
  v.stalls_reference = std::make_pair(*std::min_element(a.begin(), a.end()), *std::max_element(a.begin(), a.end()));
  v.stalls_now = *std::max_element(b.begin(), b.end());
}

// "; stalls took 31% of the time (reference 0.5-2%)" where they took more now than in any reference run.
std::string stalls_text(const PointVerdict& v) {
  if (!v.stalls_now || !v.stalls_reference || *v.stalls_now < v.stalls_reference->second + kStallMention) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, "; stalls took %.2g%% of the time (reference %.2g-%.2g%%)", 100.0 * *v.stalls_now,
                100.0 * v.stalls_reference->first, 100.0 * v.stalls_reference->second);
  return buf;
}

}  // namespace

std::vector<PointVerdict> compare_points(const std::vector<Record>& reference, const std::vector<Record>& now,
                                         const std::vector<std::string>& metrics, const Tolerances& tol) {
  std::vector<std::string> ref_order, now_order;
  const auto ref = group_rows(reference, ref_order);
  const auto cur = group_rows(now, now_order);
  std::vector<PointVerdict> out;

  auto metrics_of = [&metrics](const Group* a, const Group* b) {
    if (!metrics.empty()) return metrics;
    std::vector<std::string> m;
    for (const Group* g : {a, b})
      if (g)
        for (const Record* r : g->rows)
          for (std::string& x : default_metrics(*r))
            if (std::find(m.begin(), m.end(), x) == m.end()) m.push_back(std::move(x));
    return m;
  };

  for (const std::string& key : ref_order) {
    const Group& r = ref.at(key);
    const auto it = cur.find(key);
    const Group* c = it == cur.end() ? nullptr : &it->second;
    const std::string ref_problem = first_problem(r.rows);
    const std::string now_problem = c ? first_problem(c->rows) : "";
    std::vector<std::string> ms = metrics_of(&r, c);
    if (ms.empty()) ms.push_back("status");  // nothing to measure: the point still gets a verdict
    for (const std::string& metric : ms) {
      PointVerdict v;
      v.suite = r.suite, v.settings = r.label, v.metric = metric;
      v.reference = median_metric(r.rows, metric);
      if (c) v.now = median_metric(c->rows, metric);
      set_threshold(tol, metric, v);
      if (!c) {
        v.verdict = Verdict::MissingNow;
        v.detail = v.why = "no current run of this point";
      } else if (!v.reference && !v.now && metric != "status" && ref_problem.empty() && now_problem.empty()) {
        continue;  // a --metric this kind of point does not have
      } else {
        judge_matched(r, *c, ref_problem, now_problem, tol, v);
        set_stalls(r, *c, v);
      }
      out.push_back(std::move(v));
    }
  }
  for (const std::string& key : now_order) {
    if (ref.count(key)) continue;
    const Group& c = cur.at(key);
    std::vector<std::string> ms = metrics_of(nullptr, &c);
    if (ms.empty()) ms.push_back("status");
    for (const std::string& metric : ms) {
      PointVerdict v;
      v.suite = c.suite, v.settings = c.label, v.metric = metric;
      v.now = median_metric(c.rows, metric);
      v.band = tol.floor, v.band_source = "floor";
      v.verdict = Verdict::MissingReference;
      v.detail = v.why = "no reference run of this point (bless a new reference?)";
      out.push_back(std::move(v));
    }
  }
  decide_all_tested(tol, out);
  for (PointVerdict& v : out)
    if (!v.why.empty()) v.why += stalls_text(v);
  return out;
}

VerdictRows verdict_rows(const std::vector<PointVerdict>& given) {
  VerdictRows out;
  // Failures first, then UNSTABLE points, then the rest, each in the order compared: what needs a
  // look is at the top.
  for (int pass = 0; pass < 3; ++pass)
    for (const PointVerdict& v : given)
      if ((is_failure(v.verdict) ? 0 : v.verdict == Verdict::Unstable ? 1 : 2) == pass) out.verdicts.push_back(&v);
  std::vector<std::string> labels;
  for (const PointVerdict* v : out.verdicts) labels.push_back(v->settings);
  const SettingsSplit settings = split_settings(labels);
  out.common = settings.common;
  out.header = {"settings", "metric", "reference", "now", "ratio", "ci95", "p", "threshold", "verdict", "why"};
  for (std::size_t row = 0; row < out.verdicts.size(); ++row) {
    const PointVerdict& v = *out.verdicts[row];
    char band[48];
    std::snprintf(band, sizeof band, "%.1f%% %s", 100.0 * v.band, v.band_source.c_str());
    std::string interval = "-", p = "-";
    if (v.runs && v.runs->has_spread()) {
      interval = number_text(v.runs->ratio_low) + "-" + number_text(v.runs->ratio_high);
      p = number_text(v.p_adjusted);
    }
    out.rows.push_back({settings.own[row], v.metric, number_text(v.reference), number_text(v.now), number_text(v.ratio()),
                        interval, p, band, verdict_name(v.verdict), v.why.empty() ? v.detail : v.why});
  }
  return out;
}

std::string verdict_table(const std::vector<PointVerdict>& verdicts) {
  const VerdictRows t = verdict_rows(verdicts);
  return settings_table_text(t.common, t.header, t.rows);
}

std::string junit_xml(const std::vector<PointVerdict>& verdicts) {
  std::size_t failures = 0;
  for (const PointVerdict& v : verdicts) failures += is_failure(v.verdict);
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuites name=\"hpcnn-acceptance\" tests=\"" << verdicts.size() << "\" failures=\"" << failures << "\">\n";
  x << "  <testsuite name=\"hpcnn-summary --compare\" tests=\"" << verdicts.size() << "\" failures=\"" << failures
    << "\" errors=\"0\" skipped=\"0\">\n";
  for (const PointVerdict& v : verdicts) {
    // classname: suite, then the settings, dotted the way CI readers group test classes.
    std::string classname = v.suite.empty() ? "hpcnn" : v.suite;
    std::string settings = v.settings;
    std::replace(settings.begin(), settings.end(), ' ', '.');
    if (!settings.empty()) classname += "." + settings;
    x << "    <testcase classname=\"" << html_escaped(classname) << "\" name=\"" << html_escaped(v.metric) << "\" time=\"0\"";
    if (!is_failure(v.verdict)) {
      x << "/>\n";
      continue;
    }
    x << ">\n      <failure type=\"" << verdict_name(v.verdict) << "\" message=\"" << html_escaped(v.message()) << "\">"
      << html_escaped(v.message()) << "</failure>\n    </testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

void write_junit(const std::string& file, const std::vector<PointVerdict>& verdicts) {
  try {
    write_file_durably(file, junit_xml(verdicts), "the JUnit verdicts");
  } catch (const RuntimeError& e) {
    throw RuntimeError(std::string("--junit: ") + e.what());
  }
}

std::string steadying_advice(std::size_t runs, double spread, double detectable, std::optional<std::size_t> stable_runs,
                             std::optional<double> iters, std::optional<double> stable_iters) {
  std::string out = "runs spread " + percent(spread) + " (" + std::to_string(runs) + " reference runs): only a change beyond " +
                    percent(detectable) + " could be detected; ";
  out += stable_runs ? std::to_string(*stable_runs) + " reference runs would steady it" : "no number of runs would at this spread";
  if (iters && stable_iters && *stable_iters > *iters)
    out += ", or longer points if the spread is their iterations' (about " +
           std::to_string(static_cast<long long>(*stable_iters)) + " timed iterations, now " +
           std::to_string(static_cast<long long>(*iters)) + ")";
  return out;
}

}  // namespace hpcnn
