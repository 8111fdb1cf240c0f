// A one-line progress display on rank 0 for long runs: point n of N, iterations done, current
// images/s and the estimated time left, rewritten in place on stderr. Shown only when stderr is a
// terminal and --quiet is not given; otherwise every call is a no-op. The suite runner owns the
// point counter; a point's timed loop reports its iterations through progress().
#pragma once

#include <chrono>
#include <string>

namespace hpcnn {

class Progress {
 public:
  // enabled: rank 0, not --quiet, stderr is a terminal (decided by the suite runner).
  void start_run(bool enabled, int points);
  void start_point(int index);  // 0-based
  // `done` of `total` iterations of this point (warm-up included), `images` per iteration over
  // all ranks, `last_iteration_s` the latest iteration's time. Redraws at most 5 times a second.
  void iteration(long done, long total, double images, double last_iteration_s);
  void clear();  // erases the line (before printing a table row)

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_ = false, drawn_ = false;
  int points_ = 0, point_ = 0;
  Clock::time_point run_start_, point_start_, last_draw_;
};

Progress& progress();  // the process's display (one run at a time)

}  // namespace hpcnn
