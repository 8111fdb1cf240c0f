#include "results/report.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "base/errors.hpp"
#include "results/trend.hpp"

namespace hpcnn {

namespace {

std::optional<double> as_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// The value as exact text: numbers in full precision, so keys do not depend on print formats.
std::string exact_text(const Record& row, const std::string& name) {
  const Value* v = row.get(name);
  if (!v) return {};
  if (const auto* i = std::get_if<std::int64_t>(v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  return std::get<std::string>(*v);
}

std::string quoted(const std::string& s) {  // a gnuplot double-quoted string
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

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

std::vector<std::pair<std::string, std::string>> parse_where(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--where: '" + item + "' is not FIELD=VALUE");
    const std::string name = item.substr(0, eq);
    if (!find_field(name)) throw UsageError("--where: unknown field '" + name + "' (see --help)");
    out.emplace_back(name, item.substr(eq + 1));
  }
  if (out.empty()) throw UsageError("--where: empty condition");
  return out;
}

bool row_matches(const Record& row, const std::vector<std::pair<std::string, std::string>>& where) {
  for (const auto& [name, want] : where) {
    const Value* v = row.get(name);
    if (!v) return false;
    if (const auto* s = std::get_if<std::string>(v)) {
      if (*s != want) return false;
      continue;
    }
    const auto w = as_number(want);
    const double have = *row.number(name);
    if (!w || !(std::fabs(have - *w) <= 1e-12 * std::max(1.0, std::fabs(*w)))) return false;
  }
  return true;
}

void sort_rows(std::vector<Record>& rows, const std::vector<std::string>& by) {
  std::stable_sort(rows.begin(), rows.end(), [&by](const Record& a, const Record& b) {
    for (const std::string& f : by) {
      const Value *va = a.get(f), *vb = b.get(f);
      if (!va || !vb) {
        if (va != vb) return va != nullptr;  // missing last
        continue;
      }
      const auto na = a.number(f), nb = b.number(f);
      if (na && nb) {
        if (*na != *nb) return *na < *nb;
      } else if (a.text(f) != b.text(f)) {
        return a.text(f) < b.text(f);
      }
    }
    return false;
  });
}

namespace {
// The settings that identify a point: the Key fields of the field table.
const std::vector<std::string>& settings_fields() {
  static const std::vector<std::string> keys = key_fields();
  return keys;
}
}  // namespace

std::string settings_key(const Record& row) {
  std::string key;
  for (const std::string& f : settings_fields())
    if (row.get(f)) key.append(key.empty() ? "" : " ").append(f).append("=").append(row.text(f));
  return key;
}

std::string exact_settings_key(const Record& row) {
  std::string key;
  for (const std::string& f : settings_fields())
    if (row.get(f)) key.append(f).append("=").append(exact_text(row, f)).append("\x1f");
  return key;
}

double parse_tolerance(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  const auto v = as_number(t);
  if (!v || *v < 0 || !std::isfinite(*v)) throw UsageError("--tolerance: '" + text + "' is not a percentage like 5%");
  return percent ? *v / 100.0 : *v;
}

std::string gnuplot_script(const std::string& table, const std::vector<Record>& rows, const std::string& file) {
  const bool svg = file.size() > 4 && file.compare(file.size() - 4, 4, ".svg") == 0;
  const bool png = file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0;
  if (!svg && !png) throw UsageError("--plot: '" + file + "' must end in .png or .svg");
  std::ostringstream s;
  s << (svg ? "set terminal svg size 900,600 dynamic\n" : "set terminal pngcairo size 900,600\n");
  s << "set output " << quoted(file) << "\nset grid\nset key outside right top\n";

  // A curve's label: the values of `label_fields`, space-separated.
  using LabelOf = std::function<std::string(const Record&)>;
  auto joined = [](const std::vector<std::string>& label_fields) -> LabelOf {
    return [label_fields](const Record& r) {
      std::string label;
      for (const std::string& f : label_fields)
        if (r.get(f) && !r.text(f).empty()) label.append(label.empty() ? "" : " ").append(r.text(f));
      return label;
    };
  };
  // Series: rows grouped by their label; points sorted by x.
  auto series = [&rows](const std::string& x, const LabelOf& label_of) {
    std::map<std::string, std::vector<const Record*>> groups;
    for (const Record& r : rows)
      if (r.number(x)) groups[label_of(r)].push_back(&r);
    for (auto& [label, g] : groups)
      std::stable_sort(g.begin(), g.end(), [&x](const Record* a, const Record* b) { return *a->number(x) < *b->number(x); });
    return groups;
  };
  // `style` (optional): gnuplot line options for a curve, from its first row.
  auto line_plot = [&](const std::string& x, const std::vector<std::string>& ys, const LabelOf& label_of,
                       bool linear_line, const std::function<std::string(const Record&)>& style = nullptr) {
    const auto groups = series(x, label_of);
    if (groups.empty()) throw RuntimeError("--plot: no rows with '" + x + "' to plot");
    std::vector<std::string> plots;
    int n = 0;
    for (const auto& [label, g] : groups) {
      for (const std::string& y : ys) {
        const std::string block = "$d" + std::to_string(n++);
        s << block << " << EOD\n";
        for (const Record* r : g)
          if (r->number(y)) s << *r->number(x) << " " << *r->number(y) << "\n";
        s << "EOD\n";
        plots.push_back(block + " using 1:2 with linespoints " + (style ? style(*g.front()) + " " : "") + "title " +
                        quoted(label + (ys.size() > 1 ? " " + y : "")));
      }
      if (linear_line) {  // linear scaling from the smallest x of the series
        const Record* first = g.front();
        const std::string block = "$d" + std::to_string(n++);
        s << block << " << EOD\n";
        for (const Record* r : g) {
          const double xv = *r->number(x);
          const double lin = r->number("linear_img_per_s") ? *r->number("linear_img_per_s")
                                                           : *first->number("img_per_s") * xv / *first->number(x);
          s << xv << " " << lin << "\n";
        }
        s << "EOD\n";
        plots.push_back(block + " using 1:2 with lines dashtype 2 title " + quoted(label + " linear"));
      }
    }
    s << "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i) s << (i ? ", \\\n     " : "") << plots[i];
    s << "\n";
  };

  if (table == "throughput") {
    s << "set title 'Throughput vs batch size'\nset xlabel 'batch (images per rank)'\nset ylabel 'images/s'\n"
         "set logscale x 2\n";
    line_plot("batch", {"img_per_s"}, joined({"suite", "model", "backend", "dataset", "threads", "ranks"}), false);
  } else if (table == "scaling") {
    std::string x = "ranks";
    for (const Record& r : rows)
      if (r.get("workers")) x = "workers";
    s << "set title 'Scaling'\nset xlabel '" << x << "'\nset ylabel 'images/s'\n";
    line_plot(x, {"img_per_s"}, joined({"model", "backend", "exchange", "batch", "scaling"}), true);
  } else if (table == "accuracy") {
    s << "set title 'Accuracy per epoch'\nset xlabel 'epoch'\nset ylabel 'accuracy (%)'\n";
    line_plot("epoch", {"test_acc", "train_acc"},
              joined({"model", "backend", "dataset", "exchange", "workers", "batch", "lr", "optimizer", "seed"}), false);
  } else if (table == "convergence") {
    // Side by side: test accuracy per epoch, and against the training time so far. A curve per
    // exchange and worker count: the colour says the worker count, the line the exchange (solid
    // the first, dashed the next...); settings that vary besides go into the label, the others
    // into the title; the target accuracy is a dotted line.
    const ConvergenceLegend legend(rows);
    s << "set multiplot layout 1,2 title " << quoted(legend.title()) << "\nset key inside right bottom\n";
    s << "set ylabel 'test accuracy (%)'\n" << legend.target_line();
    s << "set xlabel 'epoch'\n";
    const LabelOf label = [&legend](const Record& r) { return legend.label(r); };
    const auto style = [&legend](const Record& r) { return legend.style(r); };
    line_plot("epoch", {"test_acc"}, label, false, style);
    s << "set xlabel 'training time (s), evaluations excluded'\n";
    line_plot("train_time_s", {"test_acc"}, label, false, style);
    s << "unset multiplot\n";
  } else if (table == "breakdown") {
    const char* phases[] = {"load_s", "forward_s", "backward_s", "comm_wait_s", "update_s"};
    s << "set title 'Time per iteration by phase (medians)'\nset ylabel 'seconds'\n"
         "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
         "set boxwidth 0.7\nset xtics rotate by -30\n$d << EOD\n";
    int n = 0;
    for (const Record& r : rows) {
      if (!r.number("forward_s")) continue;
      ++n;
      std::string label = r.text("model");
      if (!r.text("mode").empty()) label.append(" ").append(r.text("mode"));
      label.append("/").append(r.text("backend")).append("/b").append(r.text("batch"));
      if (r.number("ranks") && *r.number("ranks") > 1) label += "/r" + r.text("ranks");
      s << quoted(label);
      for (const char* p : phases) s << " " << r.number(p).value_or(0.0);
      s << "\n";
    }
    s << "EOD\n";
    if (n == 0) throw RuntimeError("--plot: no rows with phase times to plot");
    s << "plot $d using 2:xtic(1) title 'load', '' using 3 title 'forward', '' using 4 title 'backward', "
         "'' using 5 title 'communication wait', '' using 6 title 'update'\n";
  } else {
    throw UsageError("--plot: no plot for table '" + table + "' (plots: throughput, scaling, breakdown, accuracy, convergence)");
  }
  return s.str();
}

namespace {

// Runs gnuplot on the script (which names the output file).
void run_gnuplot(const std::string& script, const std::string& file) {
  bool found = false;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (!found && std::getline(dirs, dir, ':'))
      found = !dir.empty() && access((dir + "/gnuplot").c_str(), X_OK) == 0;
  }
  if (!found) throw RuntimeError("--plot needs gnuplot, which is not installed (apt-get install gnuplot-nox)");
  std::FILE* p = popen("gnuplot", "w");
  if (!p) throw RuntimeError("--plot: cannot start gnuplot");
  std::fwrite(script.data(), 1, script.size(), p);
  const int status = pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw RuntimeError("--plot: gnuplot failed writing " + file);
}

}  // namespace

void plot_rows(const std::string& table, const std::vector<Record>& rows, const std::string& file) {
  run_gnuplot(gnuplot_script(table, rows, file), file);
}

std::string trend_gnuplot_script(const std::vector<PointTrend>& trends, const std::string& file) {
  const bool svg = file.size() > 4 && file.compare(file.size() - 4, 4, ".svg") == 0;
  const bool png = file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0;
  if (!svg && !png) throw UsageError("--plot: '" + file + "' must end in .png or .svg");
  if (trends.empty()) throw RuntimeError("--plot: no point has a history to plot");
  const int height = 80 + 240 * static_cast<int>(trends.size());
  std::ostringstream s;
  s << (svg ? "set terminal svg size 1000," : "set terminal pngcairo size 1000,") << height << (svg ? " dynamic\n" : "\n");
  s << "set output " << quoted(file) << "\nset grid\nset key outside right top\n"
    << "set xdata time\nset timefmt '%s'\nset format x '%m-%d'\n"
    << "set multiplot layout " << trends.size() << ",1 title 'hpcnn trends: metric per run, the band it was judged "
       "against, flagged runs'\n";
  int n = 0;
  for (const PointTrend& t : trends) {
    // Columns: time, value, band low, band high, flagged value (or NaN).
    const std::string block = "$t" + std::to_string(n++);
    s << block << " << EOD\n";
    for (const TrendNight& night : t.nights) {
      const auto when = iso_epoch_seconds(night.time);
      if (!when || !night.value) continue;
      const bool judged = night.center && night.band;
      const bool flagged = night.flag == NightFlag::Worse || night.flag == NightFlag::Status;
      s << *when << " " << *night.value << " ";
      if (judged)
        s << *night.center - *night.band << " " << *night.center + *night.band;
      else
        s << "NaN NaN";
      if (flagged)
        s << " " << *night.value << "\n";
      else
        s << " NaN\n";
    }
    s << "EOD\n";
    s << "set title " << quoted(t.settings + " [" + verdict_name(t.verdict) + (t.detail.empty() ? "" : " " + t.detail) + "]")
      << " noenhanced\nset ylabel " << quoted(t.metric) << " noenhanced\n";
    s << "plot " << block << " using 1:3:4 with filledcurves fillcolor rgb '#d0e0ff' title 'band', \\\n     " << block
      << " using 1:2 with linespoints pt 7 ps 0.6 lc rgb '#1f4e99' title " << quoted(t.metric) << " noenhanced, \\\n     "
      << block << " using 1:5 with points pt 6 ps 1.8 lw 2 lc rgb '#d01010' title 'flagged'\n";
  }
  s << "unset multiplot\n";
  return s.str();
}

void plot_trends(const std::vector<PointTrend>& trends, const std::string& file) {
  run_gnuplot(trend_gnuplot_script(trends, file), file);
}

}  // namespace hpcnn
