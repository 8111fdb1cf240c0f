#include "harness/training_loop.hpp"

#include <chrono>
#include <cmath>
#include <string>

#include "base/activity.hpp"
#include "harness/signals.hpp"

namespace hpcnn {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string divergence_reason(double loss, long iteration) {
  return std::string("diverged: loss ")
      .append(std::to_string(loss))
      .append(" at iteration ")
      .append(std::to_string(iteration))
      .append(" (warm-up included)");
}

}  // namespace

void PhaseSeries::add_timed(const StepTimes& t) {
  iter.push_back(t.total);
  load.push_back(t.load);
  forward.push_back(t.forward);
  backward.push_back(t.backward);
  comm_wait.push_back(t.comm_wait);
  update.push_back(t.update);
  if (t.total > 0) phase_gap_max = std::max(phase_gap_max, std::fabs(t.total - t.phase_sum()) / t.total);
}

TrainingLoop::TrainingLoop(Backend& backend, const LoopSettings& settings, GradientSync* sync)
    : backend_(backend), settings_(settings), sync_(sync) {
  if (settings_.mode == Mode::Train && !sync_) throw std::logic_error("TrainingLoop: training needs a GradientSync");
}

StepResult TrainingLoop::step(Network& net, const BatchView& batch, Network* owner) {
  const bool train = settings_.mode == Mode::Train;
  StepResult r;
  r.local.images = batch.size;
  const long k = iterations_ + 1;  // as divergence reasons count: warm-up included, from 1
  activity::set_phase("load", k);
  const auto t0 = Clock::now();
  if (batch.size > 0) net.set_input(batch.images, batch.labels);
  backend_.synchronize();
  const auto t1 = Clock::now();
  activity::set_phase("forward", k);
  if (batch.size > 0) {
    r.local.loss = net.forward();
    r.local.correct = net.correct();
  }
  backend_.synchronize();
  const auto t2 = Clock::now();
  auto t3 = t2, t4 = t2, t5 = t2;
  r.judged_loss = r.local.loss;
  if (train) {
    activity::set_phase("backward", k);
    if (batch.size > 0) {
      const GradientBuckets* buckets = sync_->buckets();
      if (buckets) net.backward(buckets, [&](int b) { sync_->on_bucket(b, net); });
      else net.backward();
    }
    backend_.synchronize();
    t3 = Clock::now();
    {
      activity::set_phase("exchange wait", k);
      const activity::WaitScope waiting("gradient exchange");
      r.judged_loss = sync_->wait(net, r.local);
    }
    t4 = Clock::now();
    activity::set_phase("update", k);
    r.diverged = !std::isfinite(r.judged_loss);
    // Diverged and stopping: the update would only spread the NaN into the weights.
    if (!(r.diverged && settings_.stop_on_divergence)) sync_->update((owner ? *owner : net).params(), net);
    backend_.synchronize();
    t5 = Clock::now();
  }
  ++iterations_;
  last_loss_ = static_cast<float>(r.local.loss);
  if (r.diverged && divergence_.empty()) divergence_ = divergence_reason(r.judged_loss, iterations_);
  // The iteration's own end, after the step's bookkeeping: the phase check compares two readings.
  const auto t_end = Clock::now();
  r.times = {seconds_between(t0, t1), seconds_between(t1, t2), seconds_between(t2, t3),
             seconds_between(t3, t4), seconds_between(t4, t5), seconds_between(t0, t_end)};
  return r;
}

int TrainingLoop::agree_flags(int mine) {
  int size = 1;
  if (settings_.agree != MPI_COMM_NULL) MPI_Comm_size(settings_.agree, &size);
  if (size <= 1) return mine;
  int all = 0;
  const activity::WaitScope waiting("per-iteration agreement");
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_BOR, settings_.agree);
  return all;
}

PointError TrainingLoop::run(Network& net, const std::function<BatchView(int)>& batch, LoopObserver* observer) {
  PointError error;
  const int total = settings_.warmup + settings_.iters;
  constexpr int kFailed = 1, kStop = 2, kMore = 4;
  double timed_seconds = 0;
  for (int k = 0;; ++k) {
    if (k >= total && settings_.min_time <= 0) break;
    // Beyond --iters, one more iteration while any rank's timed iterations add up to less than --min-time.
    const bool more = k >= total && timed_seconds < settings_.min_time && k - settings_.warmup < kMaxTimedIterations;
    const bool stop = (settings_.stop_on_signal && stop_signal()) || (sync_ && sync_->stop_agreed());
    const int flags = agree_flags((error.none() ? 0 : kFailed) | (stop ? kStop : 0) | (more ? kMore : 0));
    if (flags & kFailed) break;
    if (k >= total && !(flags & kMore)) break;
    if (flags & kStop) {
      error = {PointStatus::Interrupted, "interrupted by a signal at iteration " + std::to_string(k + 1)};
      break;
    }
    try {
      if (observer) observer->before_iteration(k);
      if (sync_) {
        const activity::WaitScope waiting("step start");
        sync_->before_step();
      }
      if (k == settings_.warmup && observer) observer->timed_start();
      const StepResult r = step(net, batch(k));
      if (r.diverged && settings_.stop_on_divergence) {
        error = {PointStatus::Diverged, divergence_};
        continue;  // the next agreement stops every rank
      }
      if (k < settings_.warmup) {
        series_.warmup.push_back(r.times.total);
      } else {
        series_.add_timed(r.times);
        timed_seconds += r.times.total;
      }
      if (observer) observer->after_iteration(k, r);
    } catch (const std::exception& e) {
      error = PointError::from(e);
    }
  }
  activity::set_phase("");
  return error;
}

}  // namespace hpcnn
