#include "suites/summary_page.hpp"

#if __has_include(<config.h>)
#include <config.h>
#endif

#include <algorithm>
#include <cstdio>
#include <map>

#include "base/errors.hpp"
#include "analysis/html_page.hpp"
#include "analysis/link_matrix.hpp"
#include "analysis/report.hpp"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

namespace hpcnn {

namespace {

std::string joined(const std::vector<std::string>& words, const char* sep) {
  std::string out;
  for (const std::string& w : words) out.append(out.empty() ? "" : sep).append(w);
  return out;
}

// A row's colour: what needs a look stands out (the palette reads for every colour vision).
std::string row_class(Verdict v) {
  if (is_failure(v)) return "fail";
  if (v == Verdict::Unstable) return "unstable";
  if (v == Verdict::Faster) return "faster";
  return "ok";
}

// "n1 x 4, n2 x 4": the ranks' hosts, each once.
std::string hosts_text(const std::vector<std::string>& hosts) {
  std::vector<std::pair<std::string, int>> counted;
  for (const std::string& h : hosts) {
    auto it = std::find_if(counted.begin(), counted.end(), [&h](const auto& c) { return c.first == h; });
    if (it == counted.end())
      counted.emplace_back(h, 1);
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [host, ranks] : counted)
    out.append(out.empty() ? "" : ", ").append(host).append(ranks > 1 ? " x " + std::to_string(ranks) : "");
  return out;
}

std::string provenance_text(const Provenance& p) {
  std::string t = "reproducer:   " + p.reproducer + "\ncommand line: " + p.command_line + "\n";
  t += "started:      " + p.start_time + (p.end_time.empty() ? "" : ", ended " + p.end_time) + "\n";
  if (!p.run_starts.empty() && p.restarts > 0)
    t += "resumed:      " + std::to_string(p.restarts) + " time(s); runs started " + p.run_starts + "\n";
  if (!p.job_id.empty()) t += "job:          " + p.job_id + "\n";
  if (!p.session.empty()) t += "session:      " + p.session + "\n";
  t += "ranks:        " + std::to_string(p.mpi_size) + " on " + hosts_text(p.hosts) + "\n";
  if (!p.machine.empty()) t += "machine:      " + p.machine + "\n";
  t += "hpcnn:        " + p.hpcnn_version + (p.configure_options.empty() ? "" : " (configure " + p.configure_options + ")") + "\n";
  t += "libraries:\n";
  for (const auto& [name, version] : p.libraries) t += "  " + name + ": " + version + "\n";
  t += "settings:\n";
  for (const auto& [option, value] : p.settings) t += "  " + option + " = " + value + "\n";
  return t;
}

// A plot of the page, or the line that says why there is none.
template <class Draw>
void figure_or_why(HtmlPage& page, Draw draw, const std::string& caption) {
  try {
    page.figure(inline_svg(draw()), caption);
  } catch (const RuntimeError& e) {
    page.paragraph(std::string("plot left out: ") + e.what(), "problem");
  } catch (const UsageError& e) {
    page.paragraph(std::string("plot left out: ") + e.what(), "problem");
  }
}

// A map shows at most this many nodes, the worst first: a page of a thousand nodes stays readable.
constexpr std::size_t kMapNodes = 64;

std::string ratio_text(double r) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", r);
  return text;
}

// The colour of a ratio to the median: named, below the threshold, or fine.
std::string ratio_class(double ratio, bool named, double threshold) {
  if (!(ratio > 0)) return "na";
  if (named) return "bad";
  return ratio < 1 - threshold ? "low" : "ok";
}

// Nodes x per-node points, each cell the node's pace against the median node; the nodes sorted by
// their worst cell.
void node_map(HtmlPage& page, const PopulationReport& r) {
  std::map<std::string, double> worst;
  for (const auto& m : r.node_maps)
    for (const auto& [node, ratio] : m.ratio) {
      auto [at, fresh] = worst.emplace(node, ratio);
      if (!fresh) at->second = std::min(at->second, ratio);
    }
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [node, ratio] : worst) order.emplace_back(ratio, node);
  std::sort(order.begin(), order.end());
  std::vector<std::string> header = {"node", "worst"};
  for (const auto& m : r.node_maps) header.push_back(m.label);
  std::vector<std::vector<std::string>> cells, classes;
  for (std::size_t k = 0; k < order.size() && k < kMapNodes; ++k) {
    const std::string& node = order[k].second;
    std::vector<std::string> row = {node, ratio_text(order[k].first)}, cls = {"", ""};
    bool named = false;
    for (const auto& m : r.node_maps) {
      const auto it = m.ratio.find(node);
      const bool here = m.named.count(node) > 0;
      named = named || here;
      row.push_back(it == m.ratio.end() ? "-" : ratio_text(it->second));
      cls.push_back(it == m.ratio.end() ? "na" : ratio_class(it->second, here, r.threshold));
    }
    cls[1] = ratio_class(order[k].first, named, r.threshold);
    cells.push_back(std::move(row));
    classes.push_back(std::move(cls));
  }
  page.heading("Node map", 3);
  page.paragraph("Each node's pace (its own timed iterations over its own time) against the median node of each point, "
                 "worst nodes first" + std::string(order.size() > kMapNodes ? " (the worst " + std::to_string(kMapNodes) +
                                                                                 " of " + std::to_string(order.size()) + ")"
                                                                           : "") +
                 "; named nodes in red, below " + ratio_text(1 - r.threshold) + " but within the night's spread in yellow.");
  page.cell_table(header, cells, classes);
}

// One link test's matrix of pair bandwidths against the median pair, rows and columns ordered by
// each node's median link (worst first).
void link_map(HtmlPage& page, const PopulationReport::LinkMap& m, double threshold) {
  const std::size_t n = m.names.size();
  if (n == 0 || m.ratio.size() != n * n) return;
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t a = 0; a < n; ++a) {
    std::vector<double> mine;
    for (std::size_t b = 0; b < n; ++b)
      if (m.ratio[a * n + b] > 0) mine.push_back(m.ratio[a * n + b]);
    order.emplace_back(median_of(mine), a);
  }
  std::sort(order.begin(), order.end());
  const std::size_t shown = std::min(n, kMapNodes);
  std::vector<std::string> header = {""};
  for (std::size_t k = 0; k < shown; ++k) header.push_back(m.names[order[k].second]);
  std::vector<std::vector<std::string>> cells, classes;
  for (std::size_t i = 0; i < shown; ++i) {
    const std::size_t a = order[i].second;
    std::vector<std::string> row = {m.names[a]}, cls = {""};
    for (std::size_t k = 0; k < shown; ++k) {
      const std::size_t b = order[k].second;
      const double ratio = m.ratio[a * n + b];
      const bool named = m.named_pairs.count({std::min(a, b), std::max(a, b)}) > 0 ||
                         ((m.named_nodes.count(a) || m.named_nodes.count(b)) && ratio < 1 - threshold);
      row.push_back(a == b || !(ratio > 0) ? "" : ratio_text(ratio));
      cls.push_back(a == b || !(ratio > 0) ? "na" : ratio_class(ratio, named, threshold));
    }
    cells.push_back(std::move(row));
    classes.push_back(std::move(cls));
  }
  page.heading("Link matrix: " + m.label, 3);
  page.paragraph("Every pair's bandwidth (both ways at once) against the median pair, nodes ordered by their median link, "
                 "worst first" + std::string(n > shown ? " (the worst " + std::to_string(shown) + " of " + std::to_string(n) + ")" : "") +
                 "; empty: not measured.");
  page.cell_table(header, cells, classes);
}

void population_section(HtmlPage& page, const PopulationReport& r) {
  page.heading("Nodes and links");
  page.paragraph(std::to_string(r.points) + " per-node point(s), " + std::to_string(r.tests) + " link test(s), " +
                     std::to_string(r.flagged.size()) + " named (each against the median node or pair of the night).",
                 r.flagged.empty() ? "" : "problem");
  for (const std::string& line : r.flagged) page.paragraph(line, "problem");
  if (!r.node_maps.empty()) node_map(page, r);
  for (const auto& m : r.link_maps) link_map(page, m, r.threshold);
}

}  // namespace

void SummaryPage::table(const TablePreset& table, std::vector<Record> rows, std::vector<std::string> columns) {
  tables_.push_back({&table, std::move(rows), std::move(columns)});
}

void SummaryPage::verdicts(std::string reference, std::string rates_at, std::vector<PointVerdict> verdicts) {
  verdicts_.push_back({std::move(reference), std::move(rates_at), std::move(verdicts)});
}

void SummaryPage::trend(std::string heading, std::vector<PointTrend> trends) {
  trends_.push_back({std::move(heading), std::move(trends)});
}

void SummaryPage::stability(std::string heading, std::vector<PointStability> points) {
  stability_.push_back({std::move(heading), std::move(points)});
}

void SummaryPage::runs(const std::vector<ResultRun>& runs) {
  for (const ResultRun& r : runs) runs_.emplace_back(r.path, r.provenance);
}

void SummaryPage::write(const std::string& file) const {
  HtmlPage page("hpcnn results: " + joined(paths_, ", "));
  page.paragraph("hpcnn-summary " PACKAGE_VERSION " over " + joined(paths_, ", ") + ": " + std::to_string(runs_.size()) +
                 " result file(s).");
  if (!left_out_.empty()) {
    page.heading("Left out");
    for (const std::string& why : left_out_) page.paragraph(why, "problem");
  }
  for (const Verdicts& v : verdicts_) {
    const VerdictRows rows = verdict_rows(v.verdicts);
    std::size_t failures = 0, unstable = 0;
    std::vector<std::string> classes;
    for (const PointVerdict* p : rows.verdicts) {
      failures += is_failure(p->verdict);
      unstable += p->verdict == Verdict::Unstable;
      classes.push_back(row_class(p->verdict));
    }
    page.heading("Verdicts against " + v.reference);
    page.paragraph(std::to_string(rows.rows.size()) + " verdicts, " + std::to_string(failures) + " failures, " +
                   std::to_string(unstable) + " unstable; rates: " + v.rates_at + ".",
                   failures ? "problem" : "");
    if (!rows.common.empty()) page.paragraph("Settings of every row: " + rows.common, "common");
    page.table(rows.header, rows.rows, classes, {false, false, true, true, true, false, true, false, false, false});
  }
  for (const Trend& t : trends_) {
    const TrendRows rows = trend_rows(t.trends);
    std::vector<std::string> classes;
    for (const PointTrend& p : t.trends) classes.push_back(row_class(p.verdict));
    page.heading("Trend");
    page.paragraph(t.heading);
    if (!rows.common.empty()) page.paragraph("Settings of every row: " + rows.common, "common");
    page.table(rows.header, rows.rows, classes, {false, false, true, true, true, true, true, true, true, false, false});
    figure_or_why(page, [&t] { return plot_trends_svg(t.trends); },
                  "Each point's metric per run (x: the run's start time, UTC), the band the run was judged against, "
                  "flagged runs circled.");
  }
  for (const Stability& s : stability_) {
    const StabilityRows rows = stability_rows(s.points);
    std::size_t unstable = 0;
    std::vector<std::string> classes;
    for (const PointStability* p : rows.points) {
      unstable += p->unstable;
      classes.push_back(p->unstable ? "unstable" : "ok");
    }
    page.heading("Stability");
    page.paragraph(s.heading);
    page.paragraph(std::to_string(rows.rows.size()) + " points and metrics, " + std::to_string(unstable) + " unstable.",
                   unstable ? "problem" : "");
    if (!rows.common.empty()) page.paragraph("Settings of every row: " + rows.common, "common");
    page.table(rows.header, rows.rows, classes, {false, false, true, true, true, true, true, true, true, false});
  }
  for (const PopulationReport& r : population_) population_section(page, r);
  for (const Table& t : tables_) {
    page.heading(std::string("Table ") + t.preset->name);
    page.paragraph(t.preset->help);
    page.records(t.rows, t.columns);
    if (t.preset->plot && !t.rows.empty())
      figure_or_why(page, [&t] { return plot_rows_svg(t.preset->name, t.rows); },
                    std::string("hpcnn-summary --table ") + t.preset->name + " --plot");
  }
  page.heading("Runs (" + std::to_string(runs_.size()) + ")");
  for (const auto& [path, p] : runs_)
    page.details(path + ": " + p.suite + ", " + p.start_time + ", " + std::to_string(p.mpi_size) + " rank(s)" +
                     (p.job_id.empty() ? "" : ", job " + p.job_id),
                 provenance_text(p));
  write_html(file, page);
}

}  // namespace hpcnn
