// hpcnn-summary --html FILE: one self-contained page of what the summary printed, in the order a
// reader looks: files left out and why, the verdicts (failures first, coloured), the trend and its
// plot, the stability of a set of runs (UNSTABLE first), the nodes and links of --population (the
// node map and each link matrix, worst nodes first), each table with its plot, then every run's
// provenance and reproducer, folded.
// The summary hands each part over as it computes it; write() puts the page together.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analysis/population.hpp"
#include "results/record.hpp"
#include "analysis/reference_runs.hpp"
#include "results/result_file.hpp"
#include "analysis/table_presets.hpp"
#include "analysis/trend.hpp"
#include "analysis/verdict.hpp"

namespace hpcnn {

class SummaryPage {
 public:
  explicit SummaryPage(std::vector<std::string> paths) : paths_(std::move(paths)) {}

  void left_out(const std::string& why) { left_out_.push_back(why); }  // "FILE: reason"
  void table(const TablePreset& table, std::vector<Record> rows, std::vector<std::string> columns);
  void verdicts(std::string reference, std::string rates_at, std::vector<PointVerdict> verdicts);
  void trend(std::string heading, std::vector<PointTrend> trends);
  void stability(std::string heading, std::vector<PointStability> points);
  void population(PopulationReport report) { population_.push_back(std::move(report)); }
  void runs(const std::vector<ResultRun>& runs);

  // The page into `file` (whole or not at all). RuntimeError naming the file when it cannot be
  // written. A plot gnuplot cannot draw is left out with a line saying why.
  void write(const std::string& file) const;

 private:
  struct Table {
    const TablePreset* preset;
    std::vector<Record> rows;
    std::vector<std::string> columns;
  };
  struct Verdicts {
    std::string reference, rates_at;
    std::vector<PointVerdict> verdicts;
  };
  struct Trend {
    std::string heading;
    std::vector<PointTrend> trends;
  };
  struct Stability {
    std::string heading;
    std::vector<PointStability> points;
  };
  std::vector<std::string> paths_, left_out_;
  std::vector<Table> tables_;
  std::vector<Verdicts> verdicts_;
  std::vector<Trend> trends_;
  std::vector<Stability> stability_;
  std::vector<PopulationReport> population_;
  std::vector<std::pair<std::string, Provenance>> runs_;  // file, its provenance
};

}  // namespace hpcnn
