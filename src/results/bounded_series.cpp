#include "results/bounded_series.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace hpcnn {

namespace {

// Values below 2^-40 (a phase that took no time at all) share one bucket, [0, 2^-40).
constexpr double kTiny = 0x1p-40;
constexpr int kZeroBucket = -40 * kBucketsPerDoubling - 1;

// A damaged or hostile file's counts are not expanded beyond this many values.
constexpr double kMostValues = 1e8;

double lower_edge(int k) { return k == kZeroBucket ? 0.0 : std::exp2(static_cast<double>(k) / kBucketsPerDoubling); }
double upper_edge(int k) { return k == kZeroBucket ? kTiny : std::exp2(static_cast<double>(k + 1) / kBucketsPerDoubling); }

int bucket_of(double v) {
  if (v < kTiny) return kZeroBucket;
  int k = static_cast<int>(std::floor(std::log2(v) * kBucketsPerDoubling));
  while (k > kZeroBucket + 1 && v < lower_edge(k)) --k;  // log2's rounding at an edge
  while (v >= upper_edge(k)) ++k;
  return k;
}

const Array* find(const ResultPoint& point, const std::string& name) {
  for (const Array& a : point.arrays)
    if (a.name == name) return &a;
  return nullptr;
}

// ranks x n of a whole series ([ranks][n], or [n] for one rank); false when the shape is not one.
bool series_shape(const Array& a, std::size_t& ranks, std::size_t& n) {
  if (a.dims.size() == 1) ranks = 1, n = a.dims[0];
  else if (a.dims.size() == 2) ranks = a.dims[0], n = a.dims[1];
  else return false;
  return a.data.size() == ranks * n;
}

bool all_finite_and_not_negative(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x >= 0; });
}

std::optional<SeriesView> whole_series(const Array& a) {
  std::size_t ranks = 0, n = 0;
  if (!series_shape(a, ranks, n)) return std::nullopt;
  SeriesView v;
  v.ranks = ranks;
  v.count.assign(ranks, n);
  v.sum.assign(ranks, 0.0);
  v.values.assign(ranks, {});
  v.slowest.assign(n, 0.0);
  for (std::size_t r = 0; r < ranks; ++r) {
    v.values[r].assign(a.data.begin() + static_cast<std::ptrdiff_t>(r * n), a.data.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
    for (std::size_t i = 0; i < n; ++i) {
      v.sum[r] += v.values[r][i];
      v.slowest[i] = std::max(v.slowest[i], v.values[r][i]);
    }
  }
  for (double x : v.slowest) v.slowest_sum += x;
  return v;
}

// The five histogram arrays of a whole series of ranks x n values.
std::vector<Array> histogram_of(const Array& a, std::size_t ranks, std::size_t n) {
  const SeriesView whole = *whole_series(a);  // the caller checked the shape
  std::map<int, std::size_t> column;  // occupied bucket -> its column, ascending
  for (double v : a.data) column.emplace(bucket_of(v), 0);
  std::size_t c = 0;
  std::vector<double> edges;
  for (auto& [k, col] : column) {
    col = c++;
    edges.push_back(lower_edge(k));
    edges.push_back(upper_edge(k));
  }
  const std::size_t buckets = column.size();
  std::vector<double> counts(ranks * buckets, 0.0), slowest_counts(buckets, 0.0);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < n; ++i) counts[r * buckets + column.at(bucket_of(a.data[r * n + i]))] += 1;
  for (double v : whole.slowest) slowest_counts[column.at(bucket_of(v))] += 1;
  const std::vector<std::string> names = histogram_array_names(a.name);
  return {make_array(names[0], {buckets, 2}, std::move(edges)), make_array(names[1], {ranks, buckets}, std::move(counts)),
          make_array(names[2], {buckets}, std::move(slowest_counts)), make_array(names[3], {ranks}, whole.sum),
          make_array(names[4], {1}, {whole.slowest_sum})};
}

// Every counted value as its bucket's geometric middle; false on a count that is not a count.
bool expand(const double* counts, const std::vector<double>& middles, std::vector<double>& out, double& total) {
  for (std::size_t k = 0; k < middles.size(); ++k) {
    const double c = counts[k];
    if (!(c >= 0) || c != std::floor(c) || (total += c) > kMostValues) return false;
    out.insert(out.end(), static_cast<std::size_t>(c), middles[k]);
  }
  return true;
}

std::optional<SeriesView> histogram_series(const ResultPoint& point, const std::string& name) {
  const std::vector<std::string> names = histogram_array_names(name);
  const Array *edges = find(point, names[0]), *counts = find(point, names[1]), *slowest = find(point, names[2]),
              *sums = find(point, names[3]), *slowest_sum = find(point, names[4]);
  if (!edges || !counts || !slowest || !sums || !slowest_sum) return std::nullopt;
  if (edges->dims.size() != 2 || edges->dims[1] != 2 || edges->data.size() != edges->dims[0] * 2) return std::nullopt;
  const std::size_t buckets = edges->dims[0];
  if (counts->dims.size() != 2 || counts->dims[1] != buckets || counts->data.size() != counts->dims[0] * buckets)
    return std::nullopt;
  const std::size_t ranks = counts->dims[0];
  if (slowest->data.size() != buckets || sums->data.size() != ranks || slowest_sum->data.size() != 1) return std::nullopt;
  std::vector<double> middles(buckets);
  for (std::size_t k = 0; k < buckets; ++k) {
    const double lo = edges->data[2 * k], hi = edges->data[2 * k + 1];
    if (!(lo >= 0) || !(hi >= lo) || !std::isfinite(hi)) return std::nullopt;
    middles[k] = lo > 0 ? std::sqrt(lo * hi) : 0.0;
  }
  SeriesView v;
  v.exact = false;
  v.ranks = ranks;
  v.values.assign(ranks, {});
  double total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (!expand(counts->data.data() + r * buckets, middles, v.values[r], total)) return std::nullopt;
    v.count.push_back(v.values[r].size());
  }
  if (!expand(slowest->data.data(), middles, v.slowest, total)) return std::nullopt;
  v.sum = sums->data;
  v.slowest_sum = slowest_sum->data[0];
  return v;
}

}  // namespace

const std::vector<std::string>& bounded_series_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ArrayField& a : array_fields())
      if (a.bounded) out.emplace_back(a.name);
    return out;
  }();
  return names;
}

std::vector<std::string> histogram_array_names(const std::string& series) {
  return {series + "_bucket", series + "_count", series + "_slowest_count", series + "_sum", series + "_slowest_sum"};
}

void bound_series(ResultPoint& point, std::size_t keep) {
  const std::vector<std::string>& bounded = bounded_series_names();
  std::vector<Array> kept;
  for (Array& a : point.arrays) {
    std::size_t ranks = 0, n = 0;
    const bool long_series = std::find(bounded.begin(), bounded.end(), a.name) != bounded.end() &&
                             series_shape(a, ranks, n) && n > keep && all_finite_and_not_negative(a.data);
    if (!long_series) {
      kept.push_back(std::move(a));
      continue;
    }
    for (Array& h : histogram_of(a, ranks, n)) kept.push_back(std::move(h));
  }
  point.arrays = std::move(kept);
}

std::optional<SeriesView> read_series(const ResultPoint& point, const std::string& name) {
  if (const Array* whole = find(point, name)) return whole_series(*whole);
  return histogram_series(point, name);
}

}  // namespace hpcnn
