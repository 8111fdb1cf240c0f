#include "analysis/report.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "base/errors.hpp"
#include "base/program_path.hpp"
#include "analysis/plots.hpp"
#include "results/table.hpp"
#include "analysis/table_presets.hpp"
#include "analysis/trend.hpp"

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
  const TablePreset* preset = find_table_preset(table);
  if (!preset || !preset->plot) {
    std::string have;
    for (const TablePreset& p : table_presets())
      if (p.plot) have.append(have.empty() ? "" : ", ").append(p.name);
    throw UsageError("--plot: no plot for table '" + table + "' (plots: " + have + ")");
  }
  std::ostringstream s;
  s.precision(10);  // the inline data: message sizes of 2^20 and more stay exact
  s << (svg ? "set terminal svg size 900,600 dynamic\n" : "set terminal pngcairo size 900,600\n");
  // The legend below the plot: beside it, long labels squeeze the plot to a strip.
  s << "set output " << gnuplot_quoted(file) << "\nset grid\nset key below\n";
  PlotScript script(rows, s);
  preset->plot(script);
  return s.str();
}

namespace {

// Runs gnuplot on the script (which names the output file).
void run_gnuplot(const std::string& script, const std::string& file) {
  if (program_path("gnuplot").empty()) throw RuntimeError("--plot needs gnuplot, which is not installed (apt-get install gnuplot-nox)");
  // gnuplot's messages go to a temporary file: its warnings (an x range of one point widened)
  // are no news to the user; when it fails, its first line says why.
  const char* tmp = std::getenv("TMPDIR");
  std::string messages = std::string(tmp && *tmp && !std::strchr(tmp, '\'') ? tmp : "/tmp") + "/hpcnn-gnuplot-XXXXXX";
  const int fd = mkstemp(messages.data());
  if (fd < 0) throw RuntimeError("--plot: cannot make a temporary file like " + messages);
  close(fd);
  std::FILE* p = popen(("gnuplot 2>'" + messages + "'").c_str(), "w");
  if (!p) {
    std::remove(messages.c_str());
    throw RuntimeError("--plot: cannot start gnuplot");
  }
  std::fwrite(script.data(), 1, script.size(), p);
  const int status = pclose(p);
  std::string first_error;
  {
    std::ifstream in(messages);
    for (std::string line; first_error.empty() && std::getline(in, line);)
      if (line.find_first_not_of(" \t^") != std::string::npos && line.rfind("Warning", 0) != 0) first_error = line;
  }
  std::remove(messages.c_str());
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw RuntimeError("--plot: gnuplot failed writing " + file + (first_error.empty() ? "" : ": " + first_error));
}

}  // namespace

void plot_rows(const std::string& table, const std::vector<Record>& rows, const std::string& file) {
  run_gnuplot(gnuplot_script(table, rows, file), file);
}

namespace {

// "2026-11-25T04:21:28Z" -> "11-25 04:21" (with seconds, "11-25 04:21:28"): a run's tick label,
// which tells runs of one day apart.
std::string run_tick(const std::string& iso_time, bool seconds) {
  return iso_time.size() >= 19 ? iso_time.substr(5, 5) + " " + iso_time.substr(11, seconds ? 8 : 5) : iso_time;
}

// Whether two runs of the history started in the same minute: then the ticks say the seconds.
bool runs_share_a_minute(const std::vector<TrendNight>& nights) {
  std::set<std::string> minutes;
  for (const TrendNight& n : nights)
    if (n.value && !minutes.insert(run_tick(n.time, false)).second) return true;
  return false;
}

// Text for a gnuplot title: broken into lines of at most `width` characters at blanks.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out, line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && line.size() + 1 + w.size() > width) out.append(out.empty() ? "" : "\n").append(line), line.clear();
    line.append(line.empty() ? "" : " ").append(w);
  }
  return out.append(out.empty() || line.empty() ? "" : "\n").append(line);
}

}  // namespace

std::string trend_gnuplot_script(const std::vector<PointTrend>& trends, const std::string& file) {
  const bool svg = file.size() > 4 && file.compare(file.size() - 4, 4, ".svg") == 0;
  const bool png = file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0;
  if (!svg && !png) throw UsageError("--plot: '" + file + "' must end in .png or .svg");
  if (trends.empty()) throw RuntimeError("--plot: no point has a history to plot");
  // The settings every point shares head the page; each panel is titled by its own.
  std::vector<std::string> labels;
  for (const PointTrend& t : trends) labels.push_back(t.settings);
  const SettingsSplit settings = split_settings(labels);
  const std::string heading = wrapped(
      "hpcnn trends: metric per run, the band it was judged against, flagged runs" +
          (settings.common.empty() ? std::string() : ". Every point: " + settings.common),
      110);
  const int lines = 1 + static_cast<int>(std::count(heading.begin(), heading.end(), '\n'));
  const int height = 60 + 20 * lines + 260 * static_cast<int>(trends.size());
  std::ostringstream s;
  s << (svg ? "set terminal svg size 1000," : "set terminal pngcairo size 1000,") << height << (svg ? " dynamic\n" : "\n");
  s << "set output " << gnuplot_quoted(file) << "\nset grid\nset key outside right top\n"
    << "set xlabel 'run (its UTC start)'\nset xtics rotate by -30\nset offsets 0.5, 0.5, 0, 0\n"
    << "set multiplot layout " << trends.size() << ",1 title " << gnuplot_quoted(heading) << " noenhanced\n";
  for (std::size_t n = 0; n < trends.size(); ++n) {
    const PointTrend& t = trends[n];
    // x is the run's place in the history (every run its own tick, however close in time), the
    // tick its start time. Columns: run, value, band low, band high, flagged value (or NaN).
    const std::string block = "$t" + std::to_string(n);
    std::string ticks;
    int run = 0;
    const std::size_t every = std::max<std::size_t>(1, (t.nights.size() + 24) / 25);  // at most 25 labels
    const bool seconds = runs_share_a_minute(t.nights);
    s << block << " << EOD\n";
    for (const TrendNight& night : t.nights) {
      if (!night.value) continue;
      ++run;
      if ((run - 1) % every == 0)
        ticks.append(ticks.empty() ? "" : ", ").append(gnuplot_quoted(run_tick(night.time, seconds)) + " " + std::to_string(run));
      const bool judged = night.center && night.band;
      const bool flagged = night.flag == NightFlag::Worse || night.flag == NightFlag::Status;
      s << run << " " << *night.value << " ";
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
    s << "set xtics (" << ticks << ")\n";
    s << "set title " << gnuplot_quoted(settings.own[n] + " [" + verdict_name(t.verdict) + (t.detail.empty() ? "" : " " + t.detail) + "]")
      << " noenhanced\nset ylabel " << gnuplot_quoted(t.metric) << " noenhanced\n";
    s << "plot " << block << " using 1:3:4 with filledcurves fillcolor rgb '#d0e0ff' title 'band', \\\n     " << block
      << " using 1:2 with linespoints pt 7 ps 0.6 lc rgb '#1f4e99' title " << gnuplot_quoted(t.metric) << " noenhanced, \\\n     "
      << block << " using 1:5 with points pt 6 ps 1.8 lw 2 lc rgb '#d01010' title 'flagged'\n";
  }
  s << "unset multiplot\n";
  return s.str();
}

void plot_trends(const std::vector<PointTrend>& trends, const std::string& file) {
  run_gnuplot(trend_gnuplot_script(trends, file), file);
}

namespace {

// draw(file) writes an SVG into a temporary folder; its text is returned and the folder removed.
std::string svg_text_of(const std::function<void(const std::string&)>& draw) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hpcnn-plot-XXXXXX";
  if (!mkdtemp(pattern.data())) throw RuntimeError("--html: cannot make a temporary folder like " + pattern);
  const std::string file = pattern + "/plot.svg";
  std::string text;
  try {
    draw(file);
    std::ifstream in(file, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(pattern, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::remove_all(pattern, ec);
  return text;
}

}  // namespace

std::string plot_rows_svg(const std::string& table, const std::vector<Record>& rows) {
  return svg_text_of([&](const std::string& file) { plot_rows(table, rows, file); });
}

std::string plot_trends_svg(const std::vector<PointTrend>& trends) {
  return svg_text_of([&](const std::string& file) { plot_trends(trends, file); });
}

}  // namespace hpcnn
