#include "analysis/significance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace hpcnn {

namespace {

// The continued fraction of I_x(a, b), evaluated from the front by the modified Lentz method; it
// converges quickly for x < (a + 1) / (a + b + 2), which the caller ensures.
double beta_continued_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  auto guarded = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0;
  double d = 1.0 / guarded(1.0 - (a + b) * x / (a + 1.0));
  double f = d;
  for (int m = 1; m <= 500; ++m) {
    const double two_m = 2.0 * m;
    // The even term of the fraction, then the odd one.
    const double even = m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m));
    d = 1.0 / guarded(1.0 + even * d);
    c = guarded(1.0 + even / c);
    f *= c * d;
    const double odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0));
    d = 1.0 / guarded(1.0 + odd * d);
    c = guarded(1.0 + odd / c);
    const double step = c * d;
    f *= step;
    if (std::fabs(step - 1.0) < kEpsilon) break;
  }
  return f;
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double squares_about_mean(const std::vector<double>& v) {
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return ss;
}

std::vector<double> logs_of_positive(const std::vector<double>& values) {
  std::vector<double> out;
  for (double x : values)
    if (std::isfinite(x) && x > 0) out.push_back(std::log(x));
  return out;
}

}  // namespace

double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
  // The symmetry I_x(a, b) = 1 - I_{1-x}(b, a) keeps the fraction in its fast region.
  return 1.0 - std::exp(log_front) * beta_continued_fraction(1.0 - x, b, a) / b;
}

double student_t_upper_tail(double t, double df) {
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  const double tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
  return t >= 0 ? tail : 1.0 - tail;
}

double student_t_quantile_upper(double p, double df) {
  if (p >= 0.5) return p == 0.5 ? 0.0 : -student_t_quantile_upper(1.0 - p, df);
  double low = 0, high = 1;
  while (student_t_upper_tail(high, df) > p && high < 1e12) high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (student_t_upper_tail(mid, df) > p ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

std::vector<double> holm_adjusted(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&p](std::size_t i, std::size_t j) { return p[i] < p[j]; });
  std::vector<double> adjusted(m);
  double running = 0;  // the adjusted values never decrease along the sorted order
  for (std::size_t rank = 0; rank < m; ++rank) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - rank) * p[order[rank]]));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

double change_at_log_distance(double z, bool higher_is_better) {
  return higher_is_better ? -std::expm1(-z) : std::expm1(z);
}

namespace {

// t_alpha + t_(1-power): the log distance, in standard errors, that a one-sided test at `alpha`
// detects with probability kPower.
double detecting_t(double alpha, double df) {
  return student_t_quantile_upper(alpha, df) + student_t_quantile_upper(1.0 - kPower, df);
}

}  // namespace

std::optional<double> RunComparison::detectable_change(double alpha) const {
  if (!has_spread()) return std::nullopt;
  return change_at_log_distance(detecting_t(alpha, df) * standard_error, higher_is_better);
}

std::optional<std::size_t> runs_to_detect(double log_sd, double alpha, double limit, std::size_t most,
                                          bool higher_is_better) {
  if (!(log_sd >= 0) || !(limit > 0)) return std::nullopt;
  for (std::size_t k = 2; k <= most; ++k) {
    const double runs = static_cast<double>(k);
    const double z = detecting_t(alpha, runs - 1) * log_sd * std::sqrt(1 + 1 / runs);
    if (change_at_log_distance(z, higher_is_better) <= limit) return k;
  }
  return std::nullopt;
}

std::optional<RunComparison> compare_runs(const std::vector<double>& reference, const std::vector<double>& now,
                                          bool higher_is_better, double level) {
  const std::vector<double> a = logs_of_positive(reference), b = logs_of_positive(now);
  if (a.empty() || b.empty()) return std::nullopt;
  RunComparison c;
  c.reference_runs = a.size(), c.now_runs = b.size();
  c.higher_is_better = higher_is_better;
  const double d = mean_of(b) - mean_of(a);
  c.ratio = std::exp(d);
  c.df = static_cast<double>(a.size() + b.size()) - 2.0;
  c.ratio_low = c.ratio_high = c.ratio;
  if (c.df <= 0) {
    c.df = 0;  // one run on each side: nothing says how much runs differ
    return c;
  }
  c.log_sd = std::sqrt((squares_about_mean(a) + squares_about_mean(b)) / c.df);
  c.standard_error = c.log_sd * std::sqrt(1.0 / static_cast<double>(a.size()) + 1.0 / static_cast<double>(b.size()));
  // A worse system: a lower rate, or a longer time.
  const double worse_d = higher_is_better ? -d : d;
  if (c.standard_error == 0) {
    // Identical runs (a deterministic figure such as an accuracy): any change is real.
    c.p_worse = worse_d > 0 ? 0.0 : 1.0;
    c.p_better = worse_d < 0 ? 0.0 : 1.0;
    return c;
  }
  const double t = worse_d / c.standard_error;
  c.p_worse = student_t_upper_tail(t, c.df);
  c.p_better = student_t_upper_tail(-t, c.df);
  const double half = student_t_quantile_upper((1.0 - level) / 2.0, c.df) * c.standard_error;
  c.ratio_low = std::exp(d - half);
  c.ratio_high = std::exp(d + half);
  return c;
}

}  // namespace hpcnn
