#include "analysis/population.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <cmath>
#include <tuple>

#include "analysis/html_page.hpp"
#include "analysis/link_matrix.hpp"
#include "base/errors.hpp"
#include "results/bounded_series.hpp"

namespace hpcnn {

namespace {

std::string number_text(const char* format, double v) {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string bytes_text(double bytes) {
  char text[32];
  if (bytes >= 1 << 20 && static_cast<long long>(bytes) % (1 << 20) == 0) std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10 && static_cast<long long>(bytes) % (1 << 10) == 0) std::snprintf(text, sizeof text, "%.0f KiB", bytes / (1 << 10));
  else std::snprintf(text, sizeof text, "%.0f B", bytes);
  return text;
}

// One link test of one run: its hosts and, per pair, the best bandwidth over the run's rounds.
struct LinkTest {
  std::string run;  // the session, or the file of a run without one
  double bytes = 0;
  std::vector<std::string> names;
  std::size_t ranks = 0;
  std::vector<double> bw;  // [ranks][ranks]
  std::size_t rounds = 0;  // repetitions of the test in the run
  std::size_t pairs_again = 0;  // pairs measured again on their own (folded_into)
};

// A test of the same run and size on some of a larger test's hosts (the second look at a named
// pair: acceptance.sh measures it again on its two nodes) gives those pairs another round: each
// pair's figure is its best, as for the larger test's own rounds. True when `small` was folded.
bool folded_into(LinkTest& big, const LinkTest& small) {
  if (small.ranks >= big.ranks || small.run != big.run || small.bytes != big.bytes) return false;
  std::vector<std::size_t> at;
  for (const std::string& name : small.names) {
    const auto it = std::find(big.names.begin(), big.names.end(), name);
    if (it == big.names.end()) return false;
    at.push_back(static_cast<std::size_t>(it - big.names.begin()));
  }
  for (std::size_t a = 0; a < small.ranks; ++a)
    for (std::size_t b = 0; b < small.ranks; ++b) {
      if (a == b) continue;
      double& into = big.bw[at[a] * big.ranks + at[b]];
      into = std::max(into, small.bw[a * small.ranks + b]);
    }
  big.pairs_again += small.ranks * (small.ranks - 1) / 2;
  return true;
}

std::vector<LinkTest> link_tests(const std::vector<ResultRun>& runs) {
  std::map<std::tuple<std::string, double, std::vector<std::string>>, LinkTest> tests;
  for (const ResultRun& run : runs)
    for (const ResultPoint& point : run.points) {
      if (point.record.text("exchange") != "links" || point.record.text("status") != "ok") continue;
      const Array* bw = nullptr;
      for (const Array& a : point.arrays)
        if (a.name == "link_bw_gbs") bw = &a;
      const std::size_t n = bw && bw->dims.size() == 2 ? bw->dims[0] : 0;
      if (n < 2 || bw->dims[1] != n || bw->data.size() != n * n) continue;
      const double bytes = point.record.number("size_bytes").value_or(0);
      const std::vector<std::string> names = rank_names(run.provenance.hosts);
      const std::string session = run.provenance.session.empty() ? run.path : run.provenance.session;
      LinkTest& t = tests[{session, bytes, names}];
      if (t.bw.empty()) {
        t.run = session, t.bytes = bytes, t.names = names, t.ranks = n;
        t.bw.assign(n * n, 0.0);
      }
      if (t.ranks != n) continue;
      for (std::size_t k = 0; k < n * n; ++k) t.bw[k] = std::max(t.bw[k], bw->data[k]);
      ++t.rounds;
    }
  std::vector<LinkTest> all;
  for (auto& [key, t] : tests) all.push_back(std::move(t));
  // Largest first, so that a second look finds the night's test it belongs to.
  std::stable_sort(all.begin(), all.end(), [](const LinkTest& a, const LinkTest& b) { return a.ranks > b.ranks; });
  std::vector<LinkTest> out;
  for (LinkTest& t : all)
    if (std::none_of(out.begin(), out.end(), [&](LinkTest& big) { return folded_into(big, t); })) out.push_back(std::move(t));
  return out;
}

std::string name_of(const LinkTest& t, std::size_t r) { return rank_name(t.names, r); }

// One-node suites: their ranks are independent copies of one measurement (not coupled by an
// exchange, as hpcnn-scale's and hpcnn-allreduce's are).
bool one_node_suite(const std::string& suite) {
  return suite == "hpcnn-train" || suite == "hpcnn-infer" || suite == "hpcnn-blas";
}

// What a point measured, without its rank count (waves of nodes differ in it), for a heading.
std::string point_key(const Record& r) {
  std::string key;
  for (const std::string& f : key_fields())
    if (f != "ranks" && f != "suite" && r.get(f)) key.append(key.empty() ? "" : " ").append(f).append("=").append(r.text(f));
  return key;
}

// The point in a few words for its lines: "hpcnn-train resnet18 dnnl fp32 batch 32".
std::string point_label(const Record& r) {
  std::string label = r.text("suite");
  for (const char* f : {"sweep", "model", "size", "backend", "precision"})
    if (r.get(f) && !r.text(f).empty()) label.append(" ").append(r.text(f));
  if (r.get("batch")) label.append(" batch ").append(r.text("batch"));
  return label;
}

// One point of one run over its nodes: per node the best (shortest) mean iteration of its rounds.
struct NodePoint {
  std::string run, suite, key, label;
  std::map<std::string, double> mean_iter_s;  // node -> seconds per timed iteration
};

std::vector<NodePoint> node_points(const std::vector<ResultRun>& runs) {
  std::map<std::tuple<std::string, std::string, std::string>, NodePoint> points;
  for (const ResultRun& run : runs) {
    const std::vector<std::string> names = rank_names(run.provenance.hosts);
    for (const ResultPoint& point : run.points) {
      const std::string suite = point.record.text("suite");
      if (!one_node_suite(suite) || point.record.text("status") != "ok") continue;
      std::optional<SeriesView> iter = read_series(point, "iter_time_s");
      if (!iter) iter = read_series(point, "call_time_s");
      if (!iter || iter->ranks != names.size() || names.empty() ||
          std::any_of(iter->count.begin(), iter->count.end(), [](std::size_t n) { return n == 0; }))
        continue;
      const std::string session = run.provenance.session.empty() ? run.path : run.provenance.session;
      const std::string key = point_key(point.record);
      NodePoint& p = points[{session, suite, key}];
      p.run = session, p.suite = suite, p.key = key, p.label = point_label(point.record);
      for (std::size_t r = 0; r < names.size(); ++r) {
        const double mean = iter->mean(r);
        auto [at, fresh] = p.mean_iter_s.emplace(names[r], mean);
        if (!fresh) at->second = std::min(at->second, mean);
      }
    }
  }
  std::vector<NodePoint> out;
  for (auto& [key, p] : points) out.push_back(std::move(p));
  return out;
}

// Every node of a point against the median node: its pace (1 / mean iteration) below (1 - threshold)
// of the median pace and beyond kRobustScore robust deviations of the paces.
void judge_nodes(const NodePoint& p, double threshold, const Spread* reference, PopulationReport& report) {
  std::vector<double> paces;
  for (const auto& [node, mean] : p.mean_iter_s) paces.push_back(mean > 0 ? 1 / mean : 0);
  const Spread tonight = spread_of(paces);
  const double median = tonight.median;
  const bool by_tonight = paces.size() >= kPopulationMinNodes;
  const double ref_median = reference && reference->median > 0 ? reference->median : 0;
  char line[768];
  std::snprintf(line, sizeof line, "%s over %zu nodes: median node %.4g s per iteration, robust spread (MAD) %.2g%%%s",
                p.label.c_str(), paces.size(), median > 0 ? 1 / median : 0.0, median > 0 ? 100 * tonight.mad / median : 0.0,
                ref_median > 0 ? ("; reference " + number_text("%.4g", 1 / ref_median) + " s per iteration over " +
                                  std::to_string(reference->count) + " nodes and runs").c_str()
                               : "");
  report.headings.push_back(line);
  ++report.points;
  for (const auto& [node, mean] : p.mean_iter_s) report.nodes[node];
  if (!(median > 0)) return;
  PopulationReport::NodeMap& map = report.node_maps.emplace_back();
  map.label = p.label;
  for (const auto& [node, mean] : p.mean_iter_s) map.ratio[node] = mean > 0 ? 1 / mean / median : 0.0;
  std::vector<std::pair<double, std::string>> slow;
  for (const auto& [node, mean] : p.mean_iter_s) {
    const double pace = mean > 0 ? 1 / mean : 0;
    if ((by_tonight && stands_out_below(pace, tonight, threshold)) ||
        (ref_median > 0 && stands_out_below(pace, *reference, threshold)))
      slow.emplace_back(pace / median, node);
  }
  std::sort(slow.begin(), slow.end());
  for (const auto& [ratio, node] : slow) {
    const double mean = p.mean_iter_s.at(node);
    std::string against = by_tonight ? number_text("%.2f", ratio) + " of the nodes' median (" + std::to_string(paces.size()) + " nodes)"
                                     : "";
    if (ref_median > 0) against += (against.empty() ? "" : " and ") + number_text("%.2f", 1 / mean / ref_median) + " of its reference";
    std::snprintf(line, sizeof line, "%s: %s %s; %.4g s per iteration against the median node's %.4g s: REGRESSION",
                  node.c_str(), p.label.c_str(), against.c_str(), mean, 1 / median);
    report.flagged.push_back(line);
    report.nodes[node].push_back(line);
    map.named.insert(node);
  }
  if (slow.empty()) {
    std::snprintf(line, sizeof line, "%s: no node below %.0f%% of %s and beyond %.1f robust deviations (%zu nodes)",
                  p.label.c_str(), 100 * (1 - threshold),
                  by_tonight && ref_median > 0 ? "the nodes' median or its reference"
                  : by_tonight                 ? "the nodes' median"
                                               : "its reference",
                  kRobustScore, paces.size());
    report.passed.push_back(line);
  }
}

}  // namespace

void check_reference_class(const std::vector<ResultRun>& runs, const std::vector<ResultRun>& reference,
                           const std::string& reference_name) {
  std::string ref_machine;
  for (const ResultRun& r : reference)
    if (ref_machine.empty()) ref_machine = r.provenance.machine;
  if (ref_machine.empty()) return;
  for (const ResultRun& run : runs) {
    const std::string& m = run.provenance.machine;
    if (!m.empty() && m != ref_machine)
      throw UsageError("--compare: " + run.path + " ran on another node class (" + m + ") than the reference " +
                       reference_name + " (" + ref_machine + "): judge each class against a reference of its own");
  }
}

PopulationReport judge_population(const std::vector<ResultRun>& runs, double threshold,
                                  const std::vector<ResultRun>* reference) {
  PopulationReport report;
  report.threshold = threshold;
  // The reference's populations: every node's pace of a point, every pair's bandwidth of a test,
  // pooled over its runs (any nodes of the class).
  std::map<std::pair<std::string, std::string>, std::vector<double>> ref_paces;
  std::map<std::pair<double, std::size_t>, std::vector<double>> ref_pairs;
  if (reference) {
    for (const NodePoint& p : node_points(*reference))
      for (const auto& [node, mean] : p.mean_iter_s)
        if (mean > 0) ref_paces[{p.suite, p.key}].push_back(1 / mean);
    for (const LinkTest& t : link_tests(*reference))
      for (std::size_t a = 0; a < t.ranks; ++a)
        for (std::size_t b = a + 1; b < t.ranks; ++b)
          if (t.bw[a * t.ranks + b] > 0) ref_pairs[{t.bytes, t.ranks}].push_back(t.bw[a * t.ranks + b]);
  }
  for (const NodePoint& p : node_points(runs)) {
    const auto ref = ref_paces.find({p.suite, p.key});
    const Spread ref_spread = ref == ref_paces.end() ? Spread{} : spread_of(ref->second);
    if (p.mean_iter_s.size() >= kPopulationMinNodes || ref_spread.count > 0)
      judge_nodes(p, threshold, ref_spread.count > 0 ? &ref_spread : nullptr, report);
  }
  for (const LinkTest& t : link_tests(runs)) {
    const auto ref = ref_pairs.find({t.bytes, t.ranks});
    const Spread ref_spread = ref == ref_pairs.end() ? Spread{} : spread_of(ref->second);
    const LinkJudgement j = judge_links(t.bw, t.ranks, t.names, threshold, ref_spread.count > 0 ? &ref_spread : nullptr);
    const std::string size = bytes_text(t.bytes);
    char line[768];
    std::snprintf(line, sizeof line,
                  "links at %s over %zu ranks (%zu pairs, best of %zu round(s) of the test%s): median pair %.4g GB/s each "
                  "way, MAD %.2g GB/s, slowest %s at %.2f of it%s",
                  size.c_str(), t.ranks, j.summary.pairs, t.rounds,
                  t.pairs_again > 0 ? (", " + std::to_string(t.pairs_again) + " pair(s) measured again on their own").c_str() : "",
                  j.summary.bw_median_gbs, j.mad_gbs,
                  j.summary.slowest.c_str(), j.summary.bw_median_gbs > 0 ? j.summary.bw_min_gbs / j.summary.bw_median_gbs : 0.0,
                  ref_spread.count > 0 ? ("; reference median pair " + number_text("%.4g", ref_spread.median) + " GB/s over " +
                                          std::to_string(ref_spread.count) + " pairs and runs").c_str()
                                       : "");
    report.headings.push_back(line);
    ++report.tests;
    char group[96];
    std::snprintf(group, sizeof group, "links at %s over %zu ranks", size.c_str(), t.ranks);
    std::vector<std::string>& lines = report.link_tests[group];
    for (std::size_t r = 0; r < t.ranks; ++r) report.nodes[name_of(t, r)];
    PopulationReport::LinkMap& map = report.link_maps.emplace_back();
    map.label = group;
    for (std::size_t r = 0; r < t.ranks; ++r) map.names.push_back(name_of(t, r));
    map.ratio.assign(t.bw.size(), 0.0);
    if (j.summary.bw_median_gbs > 0)
      for (std::size_t k = 0; k < t.bw.size(); ++k) map.ratio[k] = t.bw[k] / j.summary.bw_median_gbs;
    for (const SlowNode& node : j.nodes) map.named_nodes.insert(node.rank);
    for (const SlowPair& pair : j.pairs) map.named_pairs.insert({pair.a, pair.b});
    for (const SlowNode& node : j.nodes) {
      std::snprintf(line, sizeof line,
                    "%s: %zu of its %zu links at %s below %.0f%% of the median pair%s (its links' median: %.2f of the "
                    "median pair%s; %zu ranks): REGRESSION",
                    name_of(t, node.rank).c_str(), node.slow_links, node.links, size.c_str(), 100 * (1 - threshold),
                    ref_spread.count > 0 ? " or of the reference's" : "", node.median_ratio,
                    ref_spread.count > 0 ? (", " + number_text("%.2f", node.median_reference_ratio) + " of the reference's").c_str() : "",
                    t.ranks);
      report.flagged.push_back(line);
      report.nodes[name_of(t, node.rank)].push_back(line);
      lines.push_back(line);
    }
    for (const SlowPair& p : j.pairs) {
      std::snprintf(line, sizeof line, "link %s-%s: %s at %.0f%% of the median pair%s (%.4g against %.4g GB/s): REGRESSION",
                    name_of(t, p.a).c_str(), name_of(t, p.b).c_str(), size.c_str(), 100 * p.ratio,
                    ref_spread.count > 0 ? (" and " + number_text("%.0f", 100 * p.reference_ratio) + "% of the reference's").c_str() : "",
                    p.bw_gbs, j.summary.bw_median_gbs);
      report.flagged.push_back(line);
      lines.push_back(line);
    }
    if (j.nodes.empty() && j.pairs.empty()) {
      std::snprintf(line, sizeof line, "links at %s: no pair below %.0f%% of the median pair and beyond %.1f robust deviations (%zu pairs)",
                    size.c_str(), 100 * (1 - threshold), kRobustScore, j.summary.pairs);
      report.passed.push_back(line);
    }
  }
  return report;
}

std::string population_junit(const PopulationReport& report) {
  std::size_t cases = report.nodes.size() + report.link_tests.size(), failures = 0;
  std::string body;
  const auto add = [&](const std::string& kind, const std::string& name, const std::vector<std::string>& lines) {
    body += "    <testcase classname=\"population." + kind + "\" name=\"" + html_escaped(name) + "\"";
    if (lines.empty()) {
      body += "/>\n";
      return;
    }
    ++failures;
    body += ">\n";
    for (const std::string& l : lines)
      body += "      <failure message=\"" + html_escaped(l) + "\" type=\"REGRESSION\"/>\n";
    body += "    </testcase>\n";
  };
  for (const auto& [node, lines] : report.nodes) add("node", node, lines);
  for (const auto& [test, lines] : report.link_tests) add("links", test, lines);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"hpcnn population\" tests=\"" +
         std::to_string(cases) + "\" failures=\"" + std::to_string(failures) + "\">\n" + body + "  </testsuite>\n</testsuites>\n";
}

}  // namespace hpcnn
