#include "results/verdict.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "base/errors.hpp"
#include "results/report.hpp"
#include "results/table.hpp"

namespace hpcnn {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Two-sided 95% Student t quantile for df degrees of freedom.
double t95(std::size_t df) {
  static const double table[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
  return df < sizeof table / sizeof table[0] ? table[df] : df < 30 ? 2.045 : df < 60 ? 2.00 : 1.96;
}

struct Group {
  std::string label, suite;
  std::vector<const Record*> rows;
};

std::map<std::string, Group> group_rows(const std::vector<Record>& rows, std::vector<std::string>& order) {
  std::map<std::string, Group> groups;
  for (const Record& r : rows) {
    const std::string key = exact_settings_key(r);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      it->second.label = settings_key(r);
      it->second.suite = r.text("suite");
    }
    it->second.rows.push_back(&r);
  }
  return groups;
}

std::optional<double> median_metric(const std::vector<const Record*>& rows, const std::string& metric) {
  std::vector<double> v;
  for (const Record* r : rows)
    if (const auto x = r->number(metric); x && std::isfinite(*x)) v.push_back(*x);
  if (v.empty()) return std::nullopt;
  return median_of(v);
}

std::string first_problem(const std::vector<const Record*>& rows, bool ignore_outliers) {
  for (const Record* r : rows)
    if (std::string p = point_problem(*r, ignore_outliers); !p.empty()) return p;
  return {};
}

std::string number_text(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped: show them as '?'.
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? '?' : c;
    }
  }
  return out;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::Faster: return "faster";
    case Verdict::Regression: return "REGRESSION";
    case Verdict::MissingNow: return "MISSING-now";
    case Verdict::MissingReference: return "MISSING-reference";
    case Verdict::Status: return "STATUS";
  }
  return "?";
}

std::string point_problem(const Record& row, bool ignore_outliers) {
  // Wrong elements first: the most specific reason (such a point's status is failed too).
  if (const auto wrong = row.number("wrong"); wrong && *wrong > 0) return row.text("wrong") + " wrong elements";
  const std::string status = row.text("status");
  if (!status.empty() && status != "ok") {
    const std::string reason = row.text("status_reason");
    return "status " + status + (reason.empty() ? "" : ": " + reason);
  }
  if (row.text("phase_check") == "failed") return "phase check failed (gap " + row.text("phase_gap_max") + ")";
  if (const auto o = row.number("outlier_iters"); !ignore_outliers && o && *o > 0)
    return row.text("outlier_iters") + " outlier iterations";
  return {};
}

std::optional<double> PointVerdict::ratio() const {
  if (!reference || !now || *reference == 0) return std::nullopt;
  return *now / *reference;
}

std::string PointVerdict::message() const {
  std::string m = std::string(verdict_name(verdict)) + ": " + settings + " " + metric + " reference " +
                  number_text(reference) + " now " + number_text(now);
  if (const auto r = ratio()) m += " ratio " + number_text(r);
  char buf[64];
  std::snprintf(buf, sizeof buf, " band %.1f%% (%s)", 100.0 * band, band_source.c_str());
  m += buf;
  if (!detail.empty()) m += ": " + detail;
  return m;
}

std::vector<std::string> default_metrics(const Record& row) {
  std::vector<std::string> out;
  for (const char* headline : {"img_per_s", "busbw_gbs", "gflops"})
    if (row.number(headline)) {
      out.emplace_back(headline);
      break;
    }
  if (row.number("test_acc")) out.emplace_back("test_acc");
  return out;
}

bool higher_is_better(const std::string& metric) {
  const Field* f = find_field(metric);
  return !f || (std::string(f->unit) != "s" && std::string(f->unit) != "us");
}

std::optional<std::pair<double, std::string>> spread_band(const std::vector<const Record*>& rows, const std::string& metric) {
  // Several runs of the point: the 95% confidence interval of their mean.
  std::vector<double> v;
  for (const Record* r : rows)
    if (const auto x = r->number(metric); x && std::isfinite(*x)) v.push_back(*x);
  if (v.size() >= 2) {
    double mean = 0, ss = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    for (double x : v) ss += (x - mean) * (x - mean);
    const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    if (mean != 0)
      return std::make_pair(t95(v.size() - 1) * sd / std::sqrt(static_cast<double>(v.size())) / std::fabs(mean),
                            "ci95 (n=" + std::to_string(v.size()) + ")");
  }
  if (rows.empty()) return std::nullopt;
  const Record& r = *rows.front();
  // One run with --repeat: the confidence interval of its repeats' throughputs.
  if (metric == "img_per_s") {
    const auto lo = r.number("img_per_s_ci_low"), hi = r.number("img_per_s_ci_high"), x = r.number("img_per_s");
    const auto reps = r.number("repeats");
    if (lo && hi && x && *x > 0 && reps && *reps >= 2 && std::isfinite(*lo) && std::isfinite(*hi))
      return std::make_pair((*hi - *lo) / 2.0 / *x, std::string("ci95 (repeats)"));
  }
  // One run: the spread of its iterations, p5..p95 about the median, for the figures derived from
  // the iteration time.
  if (metric == "img_per_s" || metric == "gflops" || metric.rfind("iter_", 0) == 0) {
    const auto p5 = r.number("iter_p5_s"), p95 = r.number("iter_p95_s"), med = r.number("iter_median_s");
    if (p5 && p95 && med && *med > 0 && *p95 >= *p5) {
      const double h = (*p95 - *p5) / 2.0 / *med;  // relative spread of the time
      // Rates go as 1 / time: a time h slower is a rate h / (1 + h) lower (always below 100%, so a
      // wide spread still leaves a drop that is flagged).
      const bool rate = metric == "img_per_s" || metric == "gflops";
      return std::make_pair(rate ? h / (1.0 + h) : h, std::string("p5-p95"));
    }
  }
  return std::nullopt;
}

std::pair<std::string, double> parse_metric_tolerance(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return {"", parse_tolerance(text)};
  const std::string metric = text.substr(0, eq);
  const Field* f = find_field(metric);
  if (!f || f->type == FieldType::String)
    throw UsageError("--tolerance: '" + metric + "' in '" + text + "' is not a numeric field");
  return {metric, parse_tolerance(text.substr(eq + 1))};
}

std::vector<PointVerdict> compare_points(const std::vector<Record>& reference, const std::vector<Record>& now,
                                         const std::vector<std::string>& metrics, const Tolerances& tol) {
  std::vector<std::string> ref_order, now_order;
  const auto ref = group_rows(reference, ref_order);
  const auto cur = group_rows(now, now_order);
  std::vector<PointVerdict> out;

  auto metrics_of = [&metrics](const Group* a, const Group* b) {
    if (!metrics.empty()) return metrics;
    std::vector<std::string> m;
    for (const Group* g : {a, b})
      if (g)
        for (const Record* r : g->rows)
          for (std::string& x : default_metrics(*r))
            if (std::find(m.begin(), m.end(), x) == m.end()) m.push_back(std::move(x));
    return m;
  };
  auto band_for = [&tol](const Group& g, const std::string& metric, PointVerdict& v) {
    if (const auto it = tol.per_metric.find(metric); it != tol.per_metric.end()) {
      v.band = it->second, v.band_source = "override";
    } else if (tol.all_metrics) {
      v.band = *tol.all_metrics, v.band_source = "override";
    } else if (const auto s = spread_band(g.rows, metric); s && s->first > tol.floor) {
      v.band = s->first, v.band_source = s->second;
    } else {
      v.band = tol.floor, v.band_source = "floor";
    }
  };

  for (const std::string& key : ref_order) {
    const Group& r = ref.at(key);
    const auto it = cur.find(key);
    const Group* c = it == cur.end() ? nullptr : &it->second;
    const std::string ref_problem = first_problem(r.rows, tol.ignore_outliers);
    const std::string now_problem = c ? first_problem(c->rows, tol.ignore_outliers) : "";
    std::vector<std::string> ms = metrics_of(&r, c);
    if (ms.empty()) ms.push_back("status");  // nothing to measure: the point still gets a verdict
    for (const std::string& metric : ms) {
      PointVerdict v;
      v.suite = r.suite, v.settings = r.label, v.metric = metric;
      v.reference = median_metric(r.rows, metric);
      if (c) v.now = median_metric(c->rows, metric);
      band_for(r, metric, v);
      if (!c) {
        v.verdict = Verdict::MissingNow;
        v.detail = "no current run of this point";
      } else if (!now_problem.empty() || !ref_problem.empty()) {
        v.verdict = Verdict::Status;
        v.detail = !now_problem.empty() ? "now: " + now_problem : "reference: " + ref_problem;
      } else if (metric == "status") {
        v.verdict = Verdict::Ok;
      } else if (!v.reference && !v.now) {
        continue;  // a --metric this kind of point does not have
      } else if (!v.now) {
        v.verdict = Verdict::MissingNow;
        v.detail = "the current run has no " + metric;
      } else if (!v.reference) {
        v.verdict = Verdict::MissingReference;
        v.detail = "the reference has no " + metric;
      } else {
        const bool up = higher_is_better(metric);
        const double lo = *v.reference * (1.0 - v.band), hi = *v.reference * (1.0 + v.band);
        const bool worse = up ? *v.now < lo : *v.now > hi;
        const bool better = up ? *v.now > hi : *v.now < lo;
        v.verdict = worse ? Verdict::Regression : better ? Verdict::Faster : Verdict::Ok;
      }
      out.push_back(std::move(v));
    }
  }
  for (const std::string& key : now_order) {
    if (ref.count(key)) continue;
    const Group& c = cur.at(key);
    std::vector<std::string> ms = metrics_of(nullptr, &c);
    if (ms.empty()) ms.push_back("status");
    for (const std::string& metric : ms) {
      PointVerdict v;
      v.suite = c.suite, v.settings = c.label, v.metric = metric;
      v.now = median_metric(c.rows, metric);
      v.band = tol.floor, v.band_source = "floor";
      v.verdict = Verdict::MissingReference;
      v.detail = "no reference run of this point (bless a new reference?)";
      out.push_back(std::move(v));
    }
  }
  return out;
}

std::string verdict_table(const std::vector<PointVerdict>& verdicts) {
  std::vector<std::vector<std::string>> cells = {{"settings", "metric", "reference", "now", "ratio", "band", "verdict"}};
  for (const PointVerdict& v : verdicts) {
    char band[48];
    std::snprintf(band, sizeof band, "%.1f%% %s", 100.0 * v.band, v.band_source.c_str());
    std::string verdict = verdict_name(v.verdict);
    if (!v.detail.empty() && v.verdict == Verdict::Status) verdict += " " + v.detail;
    cells.push_back({v.settings, v.metric, number_text(v.reference), number_text(v.now), number_text(v.ratio()), band, verdict});
  }
  return aligned_text(cells);
}

std::string junit_xml(const std::vector<PointVerdict>& verdicts) {
  std::size_t failures = 0;
  for (const PointVerdict& v : verdicts) failures += is_failure(v.verdict);
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuites name=\"hpcnn-acceptance\" tests=\"" << verdicts.size() << "\" failures=\"" << failures << "\">\n";
  x << "  <testsuite name=\"hpcnn-summary --compare\" tests=\"" << verdicts.size() << "\" failures=\"" << failures
    << "\" errors=\"0\" skipped=\"0\">\n";
  for (const PointVerdict& v : verdicts) {
    // classname: suite, then the settings, dotted the way CI readers group test classes.
    std::string classname = v.suite.empty() ? "hpcnn" : v.suite;
    std::string settings = v.settings;
    std::replace(settings.begin(), settings.end(), ' ', '.');
    if (!settings.empty()) classname += "." + settings;
    x << "    <testcase classname=\"" << xml_escaped(classname) << "\" name=\"" << xml_escaped(v.metric) << "\" time=\"0\"";
    if (!is_failure(v.verdict)) {
      x << "/>\n";
      continue;
    }
    x << ">\n      <failure type=\"" << verdict_name(v.verdict) << "\" message=\"" << xml_escaped(v.message()) << "\">"
      << xml_escaped(v.message()) << "</failure>\n    </testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

void write_junit(const std::string& file, const std::vector<PointVerdict>& verdicts) {
  const std::string xml = junit_xml(verdicts);
  const std::string tmp = file + ".tmp." + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) throw RuntimeError("--junit: cannot write '" + file + "'");
  const bool written = std::fwrite(xml.data(), 1, xml.size(), f) == xml.size();
  const bool flushed = std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  if (std::fclose(f) != 0 || !written || !flushed || std::rename(tmp.c_str(), file.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw RuntimeError("--junit: cannot write '" + file + "' (disk full or folder not writable)");
  }
}

}  // namespace hpcnn
