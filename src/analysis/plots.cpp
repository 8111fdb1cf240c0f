#include "analysis/plots.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "base/errors.hpp"

namespace hpcnn {

std::string gnuplot_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {  // a line break of a title: gnuplot's escape, the script line goes on
      out += "\\n";
      continue;
    }
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
                           const StyleOf& style) {
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

// The scaling plot's curves: rows grouped by the settings that set a family apart, each family's
// points in the order of x; the settings every row shares make the title.
class ScalingFamilies {
 public:
  struct Curve {
    std::string label;
    std::vector<const Record*> points;
  };
  ScalingFamilies(const std::vector<Record>& rows, const std::string& x) {
    std::map<std::string, std::set<std::string>> values;
    std::vector<const Record*> plotted;
    for (const Record& r : rows)
      if (r.number(x) && r.number("img_per_s")) plotted.push_back(&r);
    for (const Record* r : plotted)
      for (const std::string& f : fields()) values[f].insert(r->get(f) ? r->text(f) : "");
    for (const std::string& f : fields()) (values[f].size() > 1 ? varying_ : common_).push_back(f);
    std::map<std::string, std::size_t> index;
    for (const Record* r : plotted) {
      const std::string label = words(*r, varying_, ", ");
      const auto [it, fresh] = index.emplace(label, curves.size());
      if (fresh) curves.push_back({label.empty() ? "measured" : label, {}});
      curves[it->second].points.push_back(r);
    }
    for (Curve& c : curves)
      std::stable_sort(c.points.begin(), c.points.end(),
                       [&x](const Record* a, const Record* b) { return *a->number(x) < *b->number(x); });
    if (!plotted.empty()) first_ = plotted.front();
  }
  std::string title() const {
    const std::string shared = first_ ? words(*first_, common_, ", ") : "";
    return shared.empty() ? "Scaling" : "Scaling: " + shared;
  }
  // Which point each linear line starts from: "the 1-worker point" when every curve has one.
  std::string caption(const std::string& x) const {
    bool all_from_one = true;
    for (const Curve& c : curves) all_from_one = all_from_one && *c.points.front()->number(x) == 1;
    const std::string unit = x == "workers" ? "worker" : "rank";
    return std::string("dashed: linear scaling from each curve's ") +
           (all_from_one ? "1-" + unit + " point" : "smallest " + x) + "; efficiency: images/s over that line";
  }
  std::vector<Curve> curves;

 private:
  static const std::vector<std::string>& fields() {
    static const std::vector<std::string> f = {"suite",    "model", "backend", "dataset",   "exchange",     "batch",
                                               "scaling", "topology", "link_gbps", "network_model"};
    return f;
  }
  // How a curve or the title names a setting: the value alone where it says what it is.
  static std::string word(const std::string& field, const std::string& value) {
    if (field == "batch") return "batch " + value;
    if (field == "scaling") return value + " scaling";
    if (field == "link_gbps") return value + " Gb/s";
    if (field == "network_model") return value + " network";
    return value;
  }
  static std::string words(const Record& r, const std::vector<std::string>& fields, const char* sep) {
    std::string out;
    for (const std::string& f : fields)
      if (r.get(f) && !r.text(f).empty()) out.append(out.empty() ? "" : sep).append(word(f, r.text(f)));
    return out;
  }
  std::vector<std::string> varying_, common_;
  const Record* first_ = nullptr;
};

}  // namespace

void plot_throughput(PlotScript& p) {
  p.out << "set title 'Throughput vs batch size'\nset xlabel 'batch (images per rank)'\nset ylabel 'images/s'\n"
           "set logscale x 2\n";
  p.line_plot("batch", {"img_per_s"}, PlotScript::joined({"suite", "model", "backend", "dataset", "threads", "ranks"}));
}

// Scaling (ref. [1] Figs 5-7): images/s against workers (or ranks) above, the efficiency below.
// A curve per family, named by the settings that differ between families (exchange, batch...);
// those every row shares go into the title once. Each family's linear line, dashed in the curve's
// colour, starts from that family's smallest point (its 1-worker point where it has one), so it
// is straight whatever baseline each run measured for itself; the efficiency drawn is the curve
// over that line. The legend sits below the efficiency panel, never over the data.
void plot_scaling(PlotScript& p) {
  std::string x = "ranks";
  for (const Record& r : p.rows)
    if (r.get("workers")) x = "workers";
  const ScalingFamilies families(p.rows, x);
  if (families.curves.empty()) throw RuntimeError("--plot: no rows with '" + x + "' and img_per_s to plot");
  double lo = 0, hi = 0;
  for (const ScalingFamilies::Curve& c : families.curves)
    for (const Record* r : c.points) {
      const double v = *r->number(x);
      lo = lo > 0 ? std::min(lo, v) : v, hi = std::max(hi, v);
    }
  std::vector<std::string> blocks;
  for (const ScalingFamilies::Curve& c : families.curves) {
    blocks.push_back("$d" + std::to_string(blocks.size()));
    const double x0 = *c.points.front()->number(x), y0 = *c.points.front()->number("img_per_s");
    p.out << blocks.back() << " << EOD\n";
    for (const Record* r : c.points) {  // x, images/s, linear, efficiency
      const double xv = *r->number(x), y = *r->number("img_per_s"), linear = y0 * xv / x0;
      p.out << xv << " " << y << " " << linear << " " << (linear > 0 ? y / linear : 0.0) << "\n";
    }
    p.out << "EOD\n";
  }
  p.out << "set multiplot layout 2,1 title " << gnuplot_quoted(families.title() + "\n" + families.caption(x)) << "\n";
  p.out << "set xlabel '" << (x == "workers" ? "workers" : "ranks") << "'\n";
  if (lo > 0 && hi / lo > 16) p.out << "set logscale x 2\n";
  p.out << "unset key\nset ylabel 'images/s'\n" << (lo > 0 && hi / lo > 16 ? "set logscale y 2\n" : "");
  p.out << "plot ";
  for (std::size_t k = 0; k < blocks.size(); ++k)
    p.out << (k ? ", \\\n     " : "") << blocks[k] << " using 1:2 with linespoints linecolor " << k + 1 << " pointtype " << k + 1
          << " linewidth 1.5, \\\n     " << blocks[k] << " using 1:3 with lines dashtype 2 linecolor " << k + 1;
  p.out << "\nunset logscale y\nset ylabel 'efficiency'\nset yrange [0:*]\nset key below\n";
  p.out << "plot ";
  for (std::size_t k = 0; k < blocks.size(); ++k)
    p.out << (k ? ", \\\n     " : "") << blocks[k] << " using 1:4 with linespoints linecolor " << k + 1 << " pointtype "
          << k + 1 << " linewidth 1.5 title " << gnuplot_quoted(families.curves[k].label);
  p.out << "\nunset multiplot\n";
}

// OSU/nccl-tests style: bus bandwidth against message size, a curve per scheme and rank count
// (and where the buffers live, when that differs).
void plot_allreduce(PlotScript& p) {
  std::set<std::string> memories;
  for (const Record& r : p.rows) memories.insert(r.text("exchange_memory"));
  p.out << "set title 'Allreduce bus bandwidth against message size'\nset xlabel 'message size (bytes)'\n"
           "set ylabel 'bus bandwidth (GB/s)'\nset logscale x 2\nset format x '%.0s%cB'\n";
  const bool by_memory = memories.size() > 1;
  p.line_plot("size_bytes", {"busbw_gbs"}, [by_memory](const Record& r) {
    std::string l = r.text("exchange") + ", " + r.text("ranks") + " ranks";
    if (by_memory) l += ", " + r.text("exchange_memory") + " memory";
    return l;
  });
}

void plot_accuracy(PlotScript& p) {
  p.out << "set title 'Accuracy per epoch'\nset xlabel 'epoch'\nset ylabel 'accuracy (%)'\n";
  p.line_plot("epoch", {"test_acc", "train_acc"},
              PlotScript::joined({"model", "backend", "dataset", "exchange", "workers", "batch", "lr", "optimizer", "seed"}));
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
  p.line_plot("epoch", {"test_acc"}, label, style);
  p.out << "set xlabel 'training time (s), evaluations excluded'\n";
  p.line_plot("train_time_s", {"test_acc"}, label, style);
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
    if (!r.text("exchange").empty()) {  // hpcnn-scale --data (E8): scheme, workers, loading
      label.append(" ").append(r.text("exchange")).append(" ").append(r.text("workers")).append("w");
      if (r.number("cache")) label.append(*r.number("cache") != 0 ? " cached" : " files");
    } else {
      if (!r.text("mode").empty()) label.append(" ").append(r.text("mode"));
      label.append("/").append(r.text("backend")).append("/b").append(r.text("batch"));
      if (r.number("ranks") && *r.number("ranks") > 1) label += "/r" + r.text("ranks");
    }
    p.out << gnuplot_quoted(label);
    for (const char* phase : phases) p.out << " " << r.number(phase).value_or(0.0);
    p.out << "\n";
  }
  p.out << "EOD\n";
  if (n == 0) throw RuntimeError("--plot: no rows with phase times to plot");
  p.out << "plot $d using 2:xtic(1) title 'load', '' using 3 title 'forward', '' using 4 title 'backward', "
           "'' using 5 title 'communication wait', '' using 6 title 'update'\n";
}

// Per-operator profile (ref. [4] Figs 5, 7, 10): milliseconds per iteration of each operator
// kind, a bar per profiled point side by side, the kinds in the order of their largest time. A
// point's bar is named by the settings that differ between points; the shared ones make the title.
// Repeated runs of one point (the same name) are averaged.
void plot_ops(PlotScript& p) {
  static const char* const fields[] = {"suite", "model", "backend", "mode", "precision", "batch", "threads", "ranks", "fusion", "layout"};
  std::map<std::string, std::set<std::string>> values;
  for (const Record& r : p.rows)
    if (r.number("op_time_s"))
      for (const char* f : fields) values[f].insert(r.get(f) ? r.text(f) : "");
  // A value that names itself (hpcnn-train, lenet5, dnnl, train, fp32) alone, others with their field.
  const auto word = [](const std::string& f, const std::string& v) {
    return f == "suite" || f == "model" || f == "backend" || f == "mode" || f == "precision" ? v : f + " " + v;
  };
  const auto name_of = [&values, &word](const Record& r, bool varying) {
    std::string out;
    for (const char* f : fields)
      if ((values[f].size() > 1) == varying && r.get(f) && !r.text(f).empty())
        out.append(out.empty() ? "" : ", ").append(word(f, r.text(f)));
    return out;
  };
  std::vector<std::string> points, kinds;  // in the order they first appear
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> ms;  // (kind, point) -> sum, count
  std::string title;
  for (const Record& r : p.rows) {
    const auto t = r.number("op_time_s");
    if (!t || r.text("op").empty()) continue;
    const std::string point = name_of(r, true).empty() ? "measured" : name_of(r, true);
    if (title.empty()) title = name_of(r, false);
    if (std::find(points.begin(), points.end(), point) == points.end()) points.push_back(point);
    if (std::find(kinds.begin(), kinds.end(), r.text("op")) == kinds.end()) kinds.push_back(r.text("op"));
    auto& [sum, count] = ms[{r.text("op"), point}];
    sum += *t * 1e3, ++count;
  }
  if (kinds.empty()) throw RuntimeError("--plot: no rows with per-operator times (run with --profile ops)");
  const auto largest = [&](const std::string& kind) {
    double m = 0;
    for (const std::string& pt : points)
      if (auto it = ms.find({kind, pt}); it != ms.end()) m = std::max(m, it->second.first / it->second.second);
    return m;
  };
  std::stable_sort(kinds.begin(), kinds.end(), [&](const std::string& a, const std::string& b) { return largest(a) > largest(b); });
  p.out << "set title " << gnuplot_quoted("Time per operator kind per iteration" + (title.empty() ? "" : "\n" + title)) << "\n"
        << "set ylabel 'ms per iteration'\nset style data histograms\nset style histogram clustered gap 1\n"
           "set style fill solid 0.8 border -1\nset xtics rotate by 30 right noenhanced\nset lmargin 18\nset yrange [0:*]\n"
        << (points.size() == 1 ? "unset key\n" : "") << "$d << EOD\n";
  for (const std::string& kind : kinds) {
    p.out << gnuplot_quoted(kind);
    for (const std::string& pt : points) {
      const auto it = ms.find({kind, pt});
      p.out << " " << (it == ms.end() ? 0.0 : it->second.first / it->second.second);
    }
    p.out << "\n";
  }
  p.out << "EOD\nplot ";
  for (std::size_t k = 0; k < points.size(); ++k)
    p.out << (k ? ", \\\n     " : "") << (k ? "''" : "$d") << " using " << k + 2 << (k ? "" : ":xtic(1)") << " title "
          << gnuplot_quoted(points[k]) << " noenhanced";
  p.out << "\n";
}

}  // namespace hpcnn
