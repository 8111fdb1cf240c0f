// What both kinds of hpcnn-scale points share (scale_common.hpp): the typed point from its
// settings, the exchange's set-up, the figures gathered over the workers and the record fields.
// scale_suite.cpp (synthetic batches) and scale_data.cpp (real data) both build on it; neither
// calls the other's code.
#include "suites/scale_common.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "collectives/exchange.hpp"
#include "engine/network.hpp"
#include "harness/provenance.hpp"
#include "harness/rank_series.hpp"
#include "harness/signals.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"
#include "suites/model_point.hpp"

namespace hpcnn {

namespace {

// The communication a synchronous step really exposes. Iterations start together (a barrier),
// so the worker that finishes load + forward + backward last is the step's critical path: what it
// then waits for is communication not hidden behind its backward. The others' waits also contain
// the time they wait for that slowest worker (imbalance), which is not communication. Per
// iteration: the wait of the worker with the latest backward end; the median over iterations.
// Arrays are [workers][iterations].
double exposed_comm_median(const PhaseArrays& a) {
  const Array &load = a.load, &forward = a.forward, &backward = a.backward, &wait = a.comm_wait;
  if (wait.dims.size() != 2 || wait.data.empty()) return 0.0;
  const std::size_t workers = wait.dims[0], n = wait.dims[1];
  std::vector<double> exposed;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t last = 0;
    double latest = -1;
    for (std::size_t w = 0; w < workers; ++w) {
      const std::size_t i = w * n + k;
      const double end = load.data[i] + forward.data[i] + backward.data[i];
      if (end > latest) {
        latest = end;
        last = w;
      }
    }
    exposed.push_back(wait.data[last * n + k]);
  }
  return compute_stats(exposed).median;
}

// Overlap = communication time hidden behind backward / total communication time, where the
// total is the same step's exchange run alone (comm_s: every bucket started back to back and
// waited for, median of 5, slowest worker) and the exposed part is what the step's critical path
// still waits for after backward (comm_exposed_s, see exposed_comm_median):
//   overlap = (comm_s - comm_exposed_s) / comm_s, clamped to [0, 1].
// Parameter servers have no isolated exchange (their servers hold state), so no overlap there.
void set_overlap_fields(Record& r, const PhaseArrays& phases, double isolated_comm) {
  if (isolated_comm <= 0) return;
  const double exposed = exposed_comm_median(phases);
  r.set("comm_s", isolated_comm);
  r.set("comm_exposed_s", exposed);
  r.set("overlap", std::clamp((isolated_comm - exposed) / isolated_comm, 0.0, 1.0));
}

}  // namespace

ScalePoint scale_point(const PointSettings& s, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  ScalePoint sp;
  sp.mp = model_point(s, Mode::Train);
  sp.scheme = &find_exchange(s.str("exchange"));
  sp.servers = sp.scheme->parameter_server ? static_cast<int>(s.integer("ps-servers")) : 0;
  sp.workers = size - sp.servers;
  if (sp.workers < 1)
    throw UsageError("--ps-servers " + std::to_string(sp.servers) + ": leaves no worker among " + std::to_string(size) + " ranks");
  sp.strong = s.str("scaling") == "strong";
  const int batch = sp.mp.batch;
  if (sp.strong && batch % sp.workers != 0)
    throw UsageError("--scaling strong: --batch " + std::to_string(batch) + " does not divide over " +
                     std::to_string(sp.workers) + " workers");
  sp.global_batch = sp.strong ? batch : batch * sp.workers;
  if (sp.strong) sp.mp.batch = batch / sp.workers;
  sp.baseline_batch = sp.strong ? sp.global_batch : sp.mp.batch;
  sp.bucket_mb = s.real("bucket-mb");
  sp.exchange_bf16 = s.str("exchange-precision") == "bf16";
  sp.measure_baseline = s.flag("baseline");
  if (s.has("baseline-file")) sp.baseline_file = s.str("baseline-file");
  return sp;
}

ExchangeSetup exchange_setup(const ScalePoint& sp, const Graph& graph, const GradientBuckets& buckets, Backend& backend,
                             MPI_Comm comm) {
  ExchangeSetup setup;
  setup.world = comm;
  setup.servers = sp.servers;
  setup.param_count = graph.param_count();
  setup.buckets = &buckets;
  setup.steps = sp.mp.warmup + sp.mp.iters;
  setup.optimizer = sp.mp.optimizer;
  setup.backend = &backend;
  setup.memory = choose_exchange_memory(*sp.scheme, backend);  // UsageError: nccl with a CPU backend
  setup.bf16 = sp.exchange_bf16;
  setup.stop_signalled = [] { return stop_signal() != 0; };
  return setup;
}

// Set-up failures that are not the user's (no GPU, NCCL refusing the placement) fail the point on
// every rank together instead of aborting the job; a UsageError (bad --ps-servers) is the same on
// every rank: exit 2.
std::unique_ptr<Exchange> make_exchange(const ExchangeInfo& scheme, const ExchangeSetup& setup, MPI_Comm comm) {
  std::unique_ptr<Exchange> exchange;
  PointError error;
  try {
    exchange = scheme.make_exchange(setup);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    error = PointError::from(e);
  }
  agree_on_failure(comm, error);
  return exchange;
}

RankFigures gather_rank_figures(Exchange& exchange, const WorkerTimes& t, const ModelPoint& mp, std::int64_t steps,
                                MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const Traffic total = exchange.traffic();
  const double per_step = static_cast<double>(std::max<std::int64_t>(steps, 1)), iters = mp.iters;
  const std::vector<double> mine = exchange.is_worker()
                                       ? std::vector<double>{t.traffic_timed.sent / iters, t.traffic_timed.received / iters}
                                       : std::vector<double>{total.sent / per_step, total.received / per_step};
  std::vector<double> traffic(2 * static_cast<std::size_t>(size));
  MPI_Gather(mine.data(), 2, MPI_DOUBLE, traffic.data(), 2, MPI_DOUBLE, 0, comm);
  RankFigures f;
  f.staleness = gather_all(exchange.staleness(), comm);
  double rss = peak_rss_mib();
  MPI_Reduce(&rss, &f.max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  f.sent.dims = f.received.dims = {static_cast<std::size_t>(size)};
  for (int r = 0; r < size; ++r) {
    f.sent.data.push_back(traffic[2 * static_cast<std::size_t>(r)]);
    f.received.data.push_back(traffic[2 * static_cast<std::size_t>(r) + 1]);
  }
  return f;
}

// The record of a scale point (rank 0).
void set_scale_fields(ResultPoint& out, const ScalePoint& sp, const PhaseArrays& phases, const RankFigures& f,
                      const WorkerTimes& t, ExchangeMemory memory, std::size_t buckets, double baseline) {
  out.arrays.push_back(f.sent);
  out.arrays.push_back(f.received);
  if (!f.staleness.empty()) out.arrays.push_back(make_array("staleness", {f.staleness.size()}, f.staleness));
  Record& r = out.record;
  r.set("mode", std::string("train"));
  r.set("exchange", sp.scheme->name);
  r.set("exchange_memory", std::string(exchange_memory_name(memory)));
  r.set("workers", std::int64_t{sp.workers});
  r.set("ps_servers", std::int64_t{sp.servers});
  r.set("scaling", std::string(sp.strong ? "strong" : "weak"));
  r.set("global_batch", std::int64_t{sp.global_batch});
  r.set("bucket_mb", sp.bucket_mb);
  // Recorded where it is not the fp32 every earlier scale point had: their references still match.
  if (sp.exchange_bf16) r.set("exchange_precision", std::string("bf16"));
  r.set("buckets", static_cast<std::int64_t>(buckets));
  // Aggregate throughput: global images / the iteration time of the slowest worker (per
  // iteration the maximum over workers), not rank 0's rate times N. Delivered: over the mean
  // iteration, the timed loop's wall time; the median pace beside it.
  const Stats it = set_phase_fields(r, phases);
  const double img_per_s = it.mean > 0 ? sp.global_batch / it.mean : 0.0;
  r.set("img_per_s", img_per_s);
  r.set("img_per_s_median", it.median > 0 ? sp.global_batch / it.median : 0.0);
  set_overlap_fields(r, phases, t.isolated_comm);
  r.set("bytes_sent", static_cast<std::int64_t>(*std::max_element(f.sent.data.begin(), f.sent.data.end())));
  r.set("bytes_received", static_cast<std::int64_t>(*std::max_element(f.received.data.begin(), f.received.data.end())));
  if (!f.staleness.empty()) {
    const Stats st = compute_stats(f.staleness);
    r.set("staleness_mean", st.mean);
    r.set("staleness_max", st.max);
  }
  if (baseline > 0) {
    r.set("baseline_img_per_s", baseline);
    r.set("linear_img_per_s", baseline * sp.workers);
    r.set("efficiency", img_per_s / (baseline * sp.workers));
  }
  r.set("peak_rss_mib", f.max_rss);
  r.set("final_loss", static_cast<double>(t.last_loss));
}

}  // namespace hpcnn
