#include "analysis/link_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "base/median.hpp"

namespace hpcnn {

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : median(std::move(v)); }

namespace {

std::size_t side(const std::vector<double>& matrix) {
  return static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(matrix.size()))));
}

}  // namespace

std::string rank_name(const std::vector<std::string>& names, std::size_t r) {
  if (r < names.size()) return names[r];
  std::string name = "r";
  name += std::to_string(r);
  return name;
}

std::string pair_name(const std::vector<std::string>& names, std::size_t a, std::size_t b) {
  std::string name = rank_name(names, a);
  name += '-';
  name += rank_name(names, b);
  return name;
}

std::vector<std::string> rank_names(const std::vector<std::string>& hosts) {
  std::map<std::string, int> count;
  for (const std::string& h : hosts) ++count[h];
  std::vector<std::string> names;
  for (std::size_t r = 0; r < hosts.size(); ++r)
    names.push_back(count[hosts[r]] == 1 ? hosts[r] : hosts[r] + "/r" + std::to_string(r));
  return names;
}

LinkSummary summarize_links(const std::vector<double>& bw_gbs, const std::vector<double>& time_us,
                            const std::vector<std::string>& names) {
  LinkSummary s;
  const std::size_t n = side(bw_gbs);
  std::vector<double> bws, times;
  double lowest = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      const double bw = bw_gbs[a * n + b];
      if (!(bw > 0)) continue;
      bws.push_back(bw);
      if (a * n + b < time_us.size()) times.push_back(time_us[a * n + b]);
      if (bw < lowest) {
        lowest = bw;
        s.slowest = pair_name(names, a, b);
      }
    }
  s.pairs = bws.size();
  s.bw_median_gbs = median_of(bws);
  s.bw_min_gbs = bws.empty() ? 0 : lowest;
  s.time_median_us = median_of(times);
  return s;
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.count = values.size();
  s.median = median_of(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::abs(v - s.median));
  s.mad = median_of(deviations);
  return s;
}

bool stands_out_below(double value, const Spread& population, double threshold) {
  if (!(population.median > 0)) return false;
  // A MAD of 0 (most members equal): any member beyond the practical threshold stands out.
  const double score = population.mad > 0 ? (population.median - value) / (1.4826 * population.mad)
                                          : (value < population.median ? 1e9 : 0.0);
  return value / population.median < 1 - threshold && score >= kRobustScore;
}

LinkJudgement judge_links(const std::vector<double>& bw_gbs, std::size_t ranks, const std::vector<std::string>& names,
                          double threshold, const Spread* reference) {
  LinkJudgement j;
  j.summary = summarize_links(bw_gbs, {}, names);
  const std::size_t n = std::min(ranks, side(bw_gbs));
  const double median = j.summary.bw_median_gbs;
  if (!(median > 0)) return j;
  const double ref_median = reference && reference->median > 0 ? reference->median : 0;
  const auto bw = [&](std::size_t a, std::size_t b) { return bw_gbs[a * n + b]; };
  // Nodes first: each node's median link against the nodes' median links. A bad NIC or cable of
  // one node moves all its links and barely the others' medians, so the nodes' spread stays that
  // of good nodes (the pairs' spread would hold the bad node's pairs).
  std::vector<double> node_bw(n, 0.0);
  std::vector<std::size_t> links(n, 0);
  for (std::size_t a = 0; a < n; ++a) {
    std::vector<double> mine;
    for (std::size_t b = 0; b < n; ++b)
      if (a != b && bw(a, b) > 0) mine.push_back(bw(a, b));
    links[a] = mine.size();
    node_bw[a] = median_of(mine);
  }
  std::vector<double> measured_nodes;
  for (std::size_t a = 0; a < n; ++a)
    if (links[a] > 0) measured_nodes.push_back(node_bw[a]);
  const Spread nodes = spread_of(measured_nodes);
  std::vector<bool> slow_node(n, false);
  // Two ranks: their one link is both nodes' every link: the pair is named, not a node.
  for (std::size_t a = 0; a < n && n > 2; ++a) {
    if (links[a] == 0) continue;
    slow_node[a] = (measured_nodes.size() >= 3 && stands_out_below(node_bw[a], nodes, threshold)) ||
                   (ref_median > 0 && stands_out_below(node_bw[a], *reference, threshold));
  }
  // More than half the nodes slow (every pair slower than the reference's): the change is the
  // network's, not a node's; the pairs are told.
  if (2 * static_cast<std::size_t>(std::count(slow_node.begin(), slow_node.end(), true)) > n)
    slow_node.assign(n, false);
  // Pairs: against the pairs between good nodes (a slow node's pairs would widen their spread).
  std::vector<double> good_pairs;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b)
      if (bw(a, b) > 0 && !slow_node[a] && !slow_node[b]) good_pairs.push_back(bw(a, b));
  const Spread pairs = spread_of(good_pairs);
  j.mad_gbs = pairs.mad;
  std::vector<std::size_t> slow_links(n, 0);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      const double v = bw(a, b);
      if (!(v > 0)) continue;
      const bool below_threshold = v / median < 1 - threshold || (ref_median > 0 && v / ref_median < 1 - threshold);
      const bool slow = (slow_node[a] || slow_node[b]) ? below_threshold
                                                       : (n > 2 && stands_out_below(v, pairs, threshold)) ||
                                                             (ref_median > 0 && stands_out_below(v, *reference, threshold));
      if (!slow) continue;
      j.all_slow.push_back({a, b, v, v / median, ref_median > 0 ? v / ref_median : 0.0});
      ++slow_links[a], ++slow_links[b];
    }
  for (std::size_t a = 0; a < n; ++a)
    if (slow_node[a]) j.nodes.push_back({a, slow_links[a], links[a], node_bw[a] / median, ref_median > 0 ? node_bw[a] / ref_median : 0.0});
  std::sort(j.nodes.begin(), j.nodes.end(), [](const SlowNode& x, const SlowNode& y) { return x.median_ratio < y.median_ratio; });
  std::sort(j.all_slow.begin(), j.all_slow.end(), [](const SlowPair& x, const SlowPair& y) { return x.bw_gbs < y.bw_gbs; });
  for (const SlowPair& p : j.all_slow)
    if (!slow_node[p.a] && !slow_node[p.b]) j.pairs.push_back(p);
  return j;
}

}  // namespace hpcnn
