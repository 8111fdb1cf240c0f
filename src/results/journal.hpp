// The durable record of a run's completed points, for --resume. DIR/.<stem>.journal/ holds
// run.txt (the settings the run was made with and the start of every run so far) and one
// single-point result file per completed point, point-NNNNNN.h5 (NNNNNN: the point's place in the
// sweep). Each is written to a temporary name, synced, renamed and its folder synced before the run
// goes on, so a point survives whatever stops the run later, SIGKILL and the OOM killer included.
// Rank 0 only.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/result_file.hpp"

namespace hpcnn {

using Settings = std::vector<std::pair<std::string, std::string>>;  // option -> value(s)

class Journal {
 public:
  Journal(const std::string& dir, const std::string& stem);
  bool exists() const;
  const std::string& path() const { return path_; }
  // A new journal for a run with these settings (an old one of the same name is removed).
  void start(const Settings& settings, const std::string& run_start);
  // Reopens the journal for --resume: reads the completed points and adds this run's start.
  // Throws UsageError naming the first setting that differs from the journal's.
  void resume(const Settings& settings, const std::string& run_start);
  // The points an earlier run completed (read back by resume()).
  const std::map<std::size_t, ResultPoint>& completed() const { return completed_; }
  // Every point the journal holds: the earlier runs' and this run's.
  std::size_t points() const { return completed_.size() + added_; }
  const std::vector<std::string>& run_starts() const { return starts_; }
  // Point `index` of the sweep, durable on return.
  void add(std::size_t index, const ResultPoint& point);
  // After the run's result file is committed: the journal has served.
  void remove();

 private:
  void write_run_file(const Settings& settings);
  std::string dir_, path_;
  std::vector<std::string> starts_;
  std::map<std::size_t, ResultPoint> completed_;
  std::size_t added_ = 0;  // points this run added (on disk only: they are in the result file too)
};

}  // namespace hpcnn
