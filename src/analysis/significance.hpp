// The statistics of an acceptance verdict: is tonight's run of a point slower than the reference
// runs of that point, by more than their run-to-run noise explains?
//
// The unit of measurement is the run: iterations of one run share its machine state (clock,
// neighbours, memory placement), so a test on iterations counts one run's luck many times over and
// flags unchanged runs (docs/ACCEPTANCE.md shows how often). Each run contributes one figure per
// point (its median-based rate); the reference holds K >= 2 runs. Timing is multiplicative and
// skewed, so the test works on logarithms: with a = ln(reference runs), b = ln(runs now),
//   d = mean(b) - mean(a)             ln of the ratio of geometric means
//   s = pooled standard deviation     of a (and b, when there are several runs now)
//   t = d / (s sqrt(1/K + 1/n))       Student t with K + n - 2 degrees of freedom
// i.e. the prediction interval of a new run from the reference's spread. Many points are judged in
// one night, so the p-values are adjusted for multiplicity (Holm), keeping the chance that an
// unchanged night fails anywhere at the family level alpha.
// No MPI, no HDF5, no I/O.
#pragma once

#include <optional>
#include <vector>

namespace hpcnn {

// P(T > t) for Student's t with `df` degrees of freedom (df > 0).
double student_t_upper_tail(double t, double df);
// The t with P(T > t) = p (0 < p < 1), by bisection on the tail.
double student_t_quantile_upper(double p, double df);
// Regularized incomplete beta I_x(a, b) (continued fraction), for the t distribution.
double incomplete_beta(double x, double a, double b);

// Holm's step-down adjustment: adjusted p-values in the order given (each <= 1, monotone in the
// sorted order). A family of tests all judged at `alpha` against these keeps the family-wise error
// rate at alpha.
std::vector<double> holm_adjusted(const std::vector<double>& p);

// One point and metric: the reference runs' figures against the figures now.
struct RunComparison {
  std::size_t reference_runs = 0, now_runs = 0;
  double ratio = 0;            // geometric mean now / geometric mean of the reference
  double log_sd = 0;           // s: the run-to-run spread (standard deviation of ln figure)
  double df = 0;               // degrees of freedom of s (0: one reference run, no spread known)
  double standard_error = 0;   // of ln(ratio)
  double p_worse = 1, p_better = 1;  // one-sided p-values that the system got worse / better
  // The ratio's two-sided interval at `level` (0.95 by default): exp(d -+ t * se).
  double ratio_low = 0, ratio_high = 0;
  bool higher_is_better = true;  // a rate: a change is a drop; a time: a rise
  bool has_spread() const { return df > 0; }
  // The smallest relative change (0.2 = 20%) the comparison catches with probability kPower at
  // one-sided level `alpha`: the log distance (t_alpha + t_(1-power)) * se, as a rate's drop
  // (1 - exp(-z)) or a time's rise (exp(z) - 1). A change at the significance cut-off alone
  // (t_alpha * se) is caught only half the time. Unset without a spread.
  std::optional<double> detectable_change(double alpha) const;
};

// The power detectable_change and runs_to_detect give a change of their size.
inline constexpr double kPower = 0.8;
// The relative change at log distance z: a rate's drop 1 - exp(-z), a time's rise exp(z) - 1.
double change_at_log_distance(double z, bool higher_is_better);

// The fewest reference runs (at most `most`) with which a one-run comparison at one-sided level
// `alpha` would detect a change of `limit` (0.25 = 25%) with probability kPower, if the runs keep
// spreading `log_sd`: (t(alpha, K - 1) + t(1 - kPower, K - 1)) s sqrt(1 + 1/K) as a change of that
// direction <= limit. Unset when even `most` runs would not do.
std::optional<std::size_t> runs_to_detect(double log_sd, double alpha, double limit, std::size_t most = 100,
                                          bool higher_is_better = true);

// higher_is_better: rates (images/s, GB/s); false for times. Figures must be > 0 (others are
// ignored). Returns nullopt when either side has no usable figure.
std::optional<RunComparison> compare_runs(const std::vector<double>& reference, const std::vector<double>& now,
                                          bool higher_is_better, double level = 0.95);

}  // namespace hpcnn
