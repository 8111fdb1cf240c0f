#include "results/plots.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "base/errors.hpp"

namespace hpcnn {

std::string gnuplot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

PlotScript::LabelOf PlotScript::joined(std::vector<std::string> fields) {
  return [fields = std::move(fields)](const Record& r) {
    std::string label;
    for (const std::string& f : fields)
      if (r.get(f) && !r.text(f).empty()) label.append(label.empty() ? "" : " ").append(r.text(f));
    return label;
  };
}

void PlotScript::line_plot(const std::string& x, const std::vector<std::string>& ys, const LabelOf& label_of,
                           bool linear_line, const StyleOf& style) {
  // Series: rows grouped by their label; points sorted by x.
  std::map<std::string, std::vector<const Record*>> groups;
  for (const Record& r : rows)
    if (r.number(x)) groups[label_of(r)].push_back(&r);
  for (auto& [label, g] : groups)
    std::stable_sort(g.begin(), g.end(), [&x](const Record* a, const Record* b) { return *a->number(x) < *b->number(x); });
  if (groups.empty()) throw RuntimeError("--plot: no rows with '" + x + "' to plot");
  std::vector<std::string> plots;
  for (const auto& [label, g] : groups) {
    for (const std::string& y : ys) {
      const std::string block = "$d" + std::to_string(blocks_++);
      out << block << " << EOD\n";
      for (const Record* r : g)
        if (r->number(y)) out << *r->number(x) << " " << *r->number(y) << "\n";
      out << "EOD\n";
      plots.push_back(block + " using 1:2 with linespoints " + (style ? style(*g.front()) + " " : "") + "title " +
                      gnuplot_quoted(label + (ys.size() > 1 ? " " + y : "")));
    }
    if (linear_line) {  // linear scaling from the smallest x of the series
      const Record* first = g.front();
      const std::string block = "$d" + std::to_string(blocks_++);
      out << block << " << EOD\n";
      for (const Record* r : g) {
        const double xv = *r->number(x);
        const double lin = r->number("linear_img_per_s") ? *r->number("linear_img_per_s")
                                                         : *first->number("img_per_s") * xv / *first->number(x);
        out << xv << " " << lin << "\n";
      }
      out << "EOD\n";
      plots.push_back(block + " using 1:2 with lines dashtype 2 title " + gnuplot_quoted(label + " linear"));
    }
  }
  out << "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i) out << (i ? ", \\\n     " : "") << plots[i];
  out << "\n";
}

namespace {

// The convergence plot's legend: what stays the same goes into the title, exchange and worker
// count (and anything else that varies) into each curve's label and style.
class ConvergenceLegend {
 public:
  explicit ConvergenceLegend(const std::vector<Record>& rows) {
    for (const Record& r : rows)
      for (const char* f : {"model", "dataset", "sharding", "cache", "batch", "exchange", "workers", "target_accuracy"})
        if (r.get(f)) values_[f].insert(r.text(f));
    for (const std::string& w : values_["workers"]) workers_.push_back(w);
    std::sort(workers_.begin(), workers_.end(),
              [](const std::string& a, const std::string& b) { return std::atof(a.c_str()) < std::atof(b.c_str()); });
    for (const std::string& e : values_["exchange"]) exchanges_.push_back(e);
    std::map<std::string, std::set<std::string>> sharding_of;
    for (const Record& r : rows) sharding_of[r.text("exchange")].insert(r.text("sharding"));
    for (const auto& [exchange, shardings] : sharding_of) sharding_per_exchange_varies_ |= shardings.size() > 1;
  }
  std::string title() const {
    std::string t = "Test accuracy";
    if (const std::string m = single("model"); !m.empty()) t += ": " + m;
    if (const std::string d = single("dataset"); !d.empty()) t += " on " + d;
    if (const std::string b = single("batch"); !b.empty()) t += ", batch " + b + " per worker";
    return t;
  }
  std::string label(const Record& r) const {
    std::string l = r.text("exchange") + ", " + r.text("workers") + (r.text("workers") == "1" ? " worker" : " workers");
    for (const char* f : {"model", "dataset", "cache", "batch"})
      if (varies(f) && r.get(f)) l += std::string(", ") + f + " " + r.text(f);
    if (sharding_per_exchange_varies_) l += ", sharding " + r.text("sharding");  // not when the exchange says it
    return l;
  }
  std::string style(const Record& r) const {
    const auto index = [](const std::vector<std::string>& v, const std::string& x) {
      return static_cast<int>(std::find(v.begin(), v.end(), x) - v.begin());
    };
    const int w = index(workers_, r.text("workers")), e = index(exchanges_, r.text("exchange"));
    return "linecolor " + std::to_string(w + 1) + " dashtype " + std::to_string(e + 1) + " pointtype " +
           std::to_string(e + 1) + " linewidth 1.5";
  }
  // A dotted horizontal line at the one target accuracy the rows share (none when they differ).
  std::string target_line() const {
    const std::string t = single("target_accuracy");
    if (t.empty()) return {};
    return "set arrow from graph 0, first " + t + " to graph 1, first " + t + " nohead dashtype 3 linecolor 'gray40'\n" +
           "set label 'target " + t + " %' at graph 0.98, first " + t + " right offset 0,-0.7 textcolor 'gray40'\n";
  }

 private:
  bool varies(const char* f) const {
    const auto it = values_.find(f);
    return it != values_.end() && it->second.size() > 1;
  }
  std::string single(const char* f) const {
    const auto it = values_.find(f);
    return it != values_.end() && it->second.size() == 1 ? *it->second.begin() : std::string();
  }
  std::map<std::string, std::set<std::string>> values_;
  std::vector<std::string> workers_, exchanges_;
  bool sharding_per_exchange_varies_ = false;
};

}  // namespace

void plot_throughput(PlotScript& p) {
  p.out << "set title 'Throughput vs batch size'\nset xlabel 'batch (images per rank)'\nset ylabel 'images/s'\n"
           "set logscale x 2\n";
  p.line_plot("batch", {"img_per_s"}, PlotScript::joined({"suite", "model", "backend", "dataset", "threads", "ranks"}), false);
}

void plot_scaling(PlotScript& p) {
  std::string x = "ranks";
  for (const Record& r : p.rows)
    if (r.get("workers")) x = "workers";
  // Simulated points (hpcnn-simulate) beside measured ones: their own curves, named by network;
  // node counts over a wide range on log axes.
  double lo = 0, hi = 0;
  for (const Record& r : p.rows)
    if (const auto v = r.number(x)) lo = lo > 0 ? std::min(lo, *v) : *v, hi = std::max(hi, *v);
  p.out << "set title 'Scaling'\nset xlabel '" << x << "'\nset ylabel 'images/s'\n";
  if (lo > 0 && hi / lo > 16) p.out << "set logscale xy 2\n";
  p.line_plot(x, {"img_per_s"},
              PlotScript::joined({"suite", "model", "backend", "exchange", "batch", "scaling", "topology", "link_gbps",
                                  "network_model"}),
              true);
}

void plot_accuracy(PlotScript& p) {
  p.out << "set title 'Accuracy per epoch'\nset xlabel 'epoch'\nset ylabel 'accuracy (%)'\n";
  p.line_plot("epoch", {"test_acc", "train_acc"},
              PlotScript::joined({"model", "backend", "dataset", "exchange", "workers", "batch", "lr", "optimizer", "seed"}),
              false);
}

// Side by side: test accuracy per epoch, and against the training time so far. A curve per
// exchange and worker count: the colour says the worker count, the line the exchange (solid the
// first, dashed the next...); settings that vary besides go into the label, the others into the
// title; the target accuracy is a dotted line.
void plot_convergence(PlotScript& p) {
  const ConvergenceLegend legend(p.rows);
  p.out << "set multiplot layout 1,2 title " << gnuplot_quoted(legend.title()) << "\nset key inside right bottom\n";
  p.out << "set ylabel 'test accuracy (%)'\n" << legend.target_line();
  p.out << "set xlabel 'epoch'\n";
  const PlotScript::LabelOf label = [&legend](const Record& r) { return legend.label(r); };
  const PlotScript::StyleOf style = [&legend](const Record& r) { return legend.style(r); };
  p.line_plot("epoch", {"test_acc"}, label, false, style);
  p.out << "set xlabel 'training time (s), evaluations excluded'\n";
  p.line_plot("train_time_s", {"test_acc"}, label, false, style);
  p.out << "unset multiplot\n";
}

void plot_breakdown(PlotScript& p) {
  const char* phases[] = {"load_s", "forward_s", "backward_s", "comm_wait_s", "update_s"};
  p.out << "set title 'Time per iteration by phase (medians)'\nset ylabel 'seconds'\n"
           "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
           "set boxwidth 0.7\nset xtics rotate by -30\n$d << EOD\n";
  int n = 0;
  for (const Record& r : p.rows) {
    if (!r.number("forward_s")) continue;
    ++n;
    std::string label = r.text("model");
    if (!r.text("mode").empty()) label.append(" ").append(r.text("mode"));
    label.append("/").append(r.text("backend")).append("/b").append(r.text("batch"));
    if (r.number("ranks") && *r.number("ranks") > 1) label += "/r" + r.text("ranks");
    p.out << gnuplot_quoted(label);
    for (const char* phase : phases) p.out << " " << r.number(phase).value_or(0.0);
    p.out << "\n";
  }
  p.out << "EOD\n";
  if (n == 0) throw RuntimeError("--plot: no rows with phase times to plot");
  p.out << "plot $d using 2:xtic(1) title 'load', '' using 3 title 'forward', '' using 4 title 'backward', "
           "'' using 5 title 'communication wait', '' using 6 title 'update'\n";
}

}  // namespace hpcnn
