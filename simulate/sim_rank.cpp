// One simulated rank of hpcnn-simulate: the program smpirun runs as every rank of a simulated
// platform (built with smpicxx into hpcnn-simulate-rank.so; suites/simulate_suite.cpp starts
// it). It trains nothing: a step is the measured node's forward time, its backward time spread
// over the graph's nodes by a roofline of their work (backward_split.hpp) with the real gradient buckets
// started as backward completes them, the exchange scheme's own code (collectives/) moving the
// real bucket sizes over the simulated network, and the update at the measured rate. Compute is
// simulated time (smpi_execute_benched), not this machine's.
//
//   hpcnn-simulate-rank.so report=FILE model=resnet50 image=32 classes=10 batch=64 exchange=ring
//       servers=0 bucket_mb=25 optimizer=sgd warmup=1 steps=3 load_s=... forward_s=... backward_s=...
//       update_s=... add_s=... copy_s=... alone=1    (alone=0: no exchange alone after the steps)
//   hpcnn-simulate-rank.so report=FILE allreduce=BYTES exchange=ring warmup=2 steps=5 add_s=... copy_s=...
//                                                     (hpcnn-allreduce's timed call instead of a step)
//   hpcnn-simulate-rank.so report=FILE probe=1        (the platform's hosts, one per line)
//
// Rank 0 writes the report: simgrid_version=, then key=value lines (simulated seconds, medians
// over the timed steps of the slowest worker, and bytes per step of the busiest rank), then "end";
// a failure is the version and one line "error=...". Nothing else: the launcher owns every file
// the user sees.
#include <mpi.h>
#include <simgrid/host.h>
#include <simgrid/version.h>
#include <smpi/smpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/median.hpp"
#include "collectives/exchange.hpp"
#include "collectives/exchange_step.hpp"
#include "engine/buckets.hpp"
#include "engine/models.hpp"
#include "simulate/backward_split.hpp"
#include "simulate/sim_backend.hpp"
#include "simulate/sim_rates.hpp"

namespace hpcnn {

SimRates& sim_rates() {
  static SimRates rates;
  return rates;
}

namespace {

using Args = std::map<std::string, std::string>;

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const auto eq = s.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("argument '" + s + "' is not key=value");
    a[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return a;
}

const std::string& arg(const Args& a, const std::string& key) {
  const auto it = a.find(key);
  if (it == a.end()) throw std::invalid_argument("missing argument " + key);
  return it->second;
}
double number(const Args& a, const std::string& key) { return std::stod(arg(a, key)); }

// What a worker measured over the timed steps, in simulated seconds.
struct Phases {
  std::vector<double> iter, load, forward, backward, comm_wait, update;
};

struct Model {
  Graph graph;
  GradientBuckets buckets;
  Model(const Args& a)
      : graph(build(a)), buckets(graph, number(a, "bucket_mb") * 1024.0 * 1024.0) {}
  static Graph build(const Args& a) {
    ModelConfig c;
    const int image = static_cast<int>(number(a, "image"));
    c.input = {1, static_cast<int>(number(a, "channels")), image, image};
    c.classes = static_cast<int>(number(a, "classes"));
    return build_model(arg(a, "model"), c);
  }
};

// One worker's steps, the exchange used as hpcnn-scale uses it (ExchangeStep); the exchange does the rest.
Phases train(const Args& a, const Model& m, Exchange& exchange, float* params, float* grads) {
  const int warmup = static_cast<int>(number(a, "warmup")), steps = static_cast<int>(number(a, "steps"));
  const double load_s = number(a, "load_s"), forward_s = number(a, "forward_s");
  // The node's memory rate for the roofline split: its copy reads and writes each float once.
  const double memory_bytes_per_s = 2 * sizeof(float) / number(a, "copy_s");
  const std::vector<double> node_s =
      backward_split(m.graph, static_cast<int>(number(a, "batch")), number(a, "backward_s"), memory_bytes_per_s);
  ExchangeStep step(exchange, find_exchange(arg(a, "exchange")));
  Phases p;
  for (int k = 0; k < warmup + steps; ++k) {
    step.align();
    const double t0 = MPI_Wtime();
    if (load_s > 0) smpi_execute_benched(load_s);
    const double tl = MPI_Wtime();
    smpi_execute_benched(forward_s);
    const double t1 = MPI_Wtime();
    for (int node = static_cast<int>(node_s.size()) - 1; node >= 0; --node) {
      if (node_s[static_cast<std::size_t>(node)] > 0) smpi_execute_benched(node_s[static_cast<std::size_t>(node)]);
      for (int b : m.buckets.completed_by(node)) step.bucket_ready(b, params, grads);
    }
    const double t2 = MPI_Wtime();
    step.wait(params, grads);
    const double t3 = MPI_Wtime();
    step.update(params, grads);
    const double t4 = MPI_Wtime();
    if (k < warmup) continue;
    p.iter.push_back(t4 - t0), p.load.push_back(tl - t0), p.forward.push_back(t1 - tl), p.backward.push_back(t2 - t1);
    p.comm_wait.push_back(t3 - t2), p.update.push_back(t4 - t3);
  }
  return p;
}

// Per timed step, the slowest worker's figures, gathered to rank 0 (world rank 0 is worker 0).
std::vector<double> slowest_per_step(const std::vector<double>& mine, MPI_Comm workers) {
  std::vector<double> out(mine.size());
  MPI_Reduce(mine.data(), out.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0, workers);
  return out;
}

// Every report starts with the SimGrid library the ranks ran on (the run's provenance).
std::string simgrid_version_line() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return "simgrid_version=" + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) + "\n";
}

// Whether smpirun runs under hpcnn's CPU-clock interposer (simulate/sim_cpu_clock.cpp): this
// thread has run the whole simulation, so its CPU clock reads zero only when the interposer answers.
std::string cpu_clock_line() {
  timespec t{};
  (clock_gettime)(CLOCK_THREAD_CPUTIME_ID, &t);  // the C library's: SMPI's macro answers simulated time
  return std::string("cpu_clock_interposed=") + (t.tv_sec == 0 && t.tv_nsec == 0 ? "1" : "0") + "\n";
}

void write_report(const std::string& path, const std::string& text, int rank = 0) {
  const std::string tmp = path + ".tmp" + std::to_string(rank);
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return;
  std::fputs(simgrid_version_line().c_str(), f);
  std::fputs(cpu_clock_line().c_str(), f);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());
}

std::string line(const char* key, double value) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s=%.9g\n", key, value);
  return buf;
}

void simulate(const Args& a, int rank) {
  sim_rates().add_s = number(a, "add_s");
  sim_rates().copy_s = number(a, "copy_s");
  const Model m(a);
  const std::size_t params_n = m.graph.param_count();
  SimBackend backend(number(a, "update_s") / static_cast<double>(std::max<std::size_t>(params_n, 1)), number(a, "add_s"));
  const ExchangeInfo& scheme = find_exchange(arg(a, "exchange"));
  ExchangeSetup setup;
  setup.servers = static_cast<int>(number(a, "servers"));
  setup.param_count = params_n;
  setup.buckets = &m.buckets;
  setup.steps = static_cast<std::int64_t>(number(a, "warmup") + number(a, "steps"));
  setup.optimizer.kind = arg(a, "optimizer");
  setup.backend = &backend;
  std::unique_ptr<Exchange> exchange = scheme.make_exchange(setup);
  std::shared_ptr<float> params = backend.alloc_floats(params_n), grads = backend.alloc_floats(params_n);
  Phases p;
  double isolated = -1;
  if (exchange->is_worker()) {
    exchange->init(params.get());
    p = train(a, m, *exchange, params.get(), grads.get());
  } else {
    exchange->serve();
  }
  // Bytes per step of the busiest rank, over the training steps only (read before the isolated
  // exchange below adds its own).
  const Traffic traffic = exchange->traffic();
  const double steps = number(a, "warmup") + number(a, "steps");
  // The overlap figure's denominator, as hpcnn-scale measures it (< 0 for parameter servers): as
  // many messages again as a step's exchange, so it can be left out (--exchange-alone no).
  if (exchange->is_worker() && number(a, "alone") != 0) isolated = exchange->isolated_exchange_seconds(grads.get());
  double mine[2] = {static_cast<double>(traffic.sent) / steps, static_cast<double>(traffic.received) / steps}, most[2] = {0, 0};
  MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  std::vector<double> iter, load, forward, backward, wait, update;
  if (exchange->is_worker()) {
    iter = slowest_per_step(p.iter, exchange->workers());
    load = slowest_per_step(p.load, exchange->workers());
    forward = slowest_per_step(p.forward, exchange->workers());
    backward = slowest_per_step(p.backward, exchange->workers());
    wait = slowest_per_step(p.comm_wait, exchange->workers());
    update = slowest_per_step(p.update, exchange->workers());
  }
  if (rank != 0) return;
  std::string r;
  r += line("iter_median_s", median(iter));
  r += line("iter_min_s", iter.empty() ? 0 : *std::min_element(iter.begin(), iter.end()));
  r += line("iter_max_s", iter.empty() ? 0 : *std::max_element(iter.begin(), iter.end()));
  r += line("load_s", median(load));
  r += line("forward_s", median(forward));
  r += line("backward_s", median(backward));
  r += line("comm_wait_s", median(wait));
  r += line("update_s", median(update));
  r += line("comm_s", isolated);
  r += line("bytes_sent", most[0]);
  r += line("bytes_received", most[1]);
  r += line("params", static_cast<double>(params_n));
  r += line("buckets", static_cast<double>(m.buckets.size()));
  write_report(arg(a, "report"), r + "end\n");
}

// hpcnn-allreduce's protocol: a barrier, then one blocking allreduce of the message, timed; the
// call's time is its slowest rank's.
void allreduce(const Args& a, int rank) {
  sim_rates().add_s = number(a, "add_s");
  sim_rates().copy_s = number(a, "copy_s");
  const std::size_t count = static_cast<std::size_t>(number(a, "allreduce")) / sizeof(float);
  std::unique_ptr<Allreduce> scheme = find_exchange(arg(a, "exchange")).make_allreduce(MPI_COMM_WORLD);
  float* data = static_cast<float*>(smpi_shared_malloc(std::max<std::size_t>(count, 1) * sizeof(float), __FILE__, __LINE__));
  const int warmup = static_cast<int>(number(a, "warmup")), steps = static_cast<int>(number(a, "steps"));
  std::vector<double> times;
  for (int k = 0; k < warmup + steps; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    scheme->run(data, count);
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (k >= warmup) times.push_back(slowest);
  }
  const Traffic traffic = scheme->traffic();
  scheme.reset();
  smpi_shared_free(data);
  if (rank != 0) return;
  std::string r = line("iter_median_s", median(times));
  r += line("bytes_sent", static_cast<double>(traffic.sent) / (warmup + steps));
  write_report(arg(a, "report"), r + "end\n");
}

void probe(const Args& a) {
  std::string r;
  const size_t n = sg_host_count();
  sg_host_t* hosts = sg_host_list();
  for (size_t i = 0; i < n; ++i) r += std::string("host=") + sg_host_get_name(hosts[i]) + "\n";
  std::free(hosts);
  write_report(arg(a, "report"), r + "end\n");
}

}  // namespace

}  // namespace hpcnn

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  hpcnn::Args args;
  try {
    args = hpcnn::parse_args(argc, argv);
    if (args.count("probe")) {
      if (rank == 0) hpcnn::probe(args);
    } else if (args.count("allreduce")) {
      hpcnn::allreduce(args, rank);
    } else {
      hpcnn::simulate(args, rank);
    }
  } catch (const std::exception& e) {
    // An exception that left a rank would abort the whole simulation without a word: say it once.
    std::fprintf(stderr, "hpcnn-simulate-rank: rank %d: %s\n", rank, e.what());
    if (args.count("report")) hpcnn::write_report(args["report"], std::string("error=") + e.what() + "\n", rank);
    status = 1;
  }
  MPI_Finalize();
  return status;
}
