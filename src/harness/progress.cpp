#include "harness/progress.hpp"

#include <cstdio>

namespace hpcnn {

Progress& progress() {
  static Progress p;
  return p;
}

void Progress::start_run(bool enabled, int points) {
  enabled_ = enabled;
  points_ = points;
  point_ = 0;
  run_start_ = Clock::now();
}

void Progress::start_point(int index) {
  point_ = index;
  point_start_ = Clock::now();
  last_draw_ = Clock::time_point{};
}

void Progress::iteration(long done, long total, double images, double last_iteration_s) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (done < total && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  // Time left: this point's remaining iterations at its pace so far, plus the remaining points at
  // the average pace of the points before (or this one's projected length for the first).
  const double in_point = std::chrono::duration<double>(now - point_start_).count();
  const double point_len = done > 0 ? in_point * static_cast<double>(total) / static_cast<double>(done) : 0.0;
  const double finished = std::chrono::duration<double>(point_start_ - run_start_).count();
  const double per_point = point_ > 0 ? finished / point_ : point_len;
  const double left = (point_len - in_point) + per_point * (points_ - point_ - 1);
  const double rate = last_iteration_s > 0 ? images / last_iteration_s : 0.0;
  std::fprintf(stderr, "\r\033[Kpoint %d/%d  iteration %ld/%ld  %.1f images/s  %.0f s left", point_ + 1, points_,
               done, total, rate, left > 0 ? left : 0.0);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace hpcnn
