// Helpers shared by the collective tests (test_collectives.cpp on host memory, test_nccl.cpp on
// GPUs): collective-safe counting over the world, allreduce inputs and sizes, and lenet5 trained
// alone with the big batch or distributed over an exchange scheme on any backend.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectives/check_data.hpp"
#include "collectives/exchange.hpp"
#include "engine/backend.hpp"
#include "kernels/registry.hpp"
#include "engine/buckets.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/synthetic_data.hpp"

namespace hpcnn::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
// Runs every registered test on every rank (one rank prints), then MPI_Finalize; the exit status
// is non-zero when any rank failed. The end of the MPI test binaries' main().
inline int run_all_tests_on_all_ranks() {
  if (world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}

inline long long sum_over_ranks(long long mine) {
  long long all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}
inline double max_over_ranks(double mine) {
  double all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

inline std::vector<std::size_t> test_sizes() {
  const std::size_t p = static_cast<std::size_t>(world_size());
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 7, p - 1, p, p + 1, 2 * p + 1, 1000, 1001, 65537};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

inline long long count_wrong(const std::vector<float>& data, std::uint64_t seed) {
  long long wrong = 0;
  for (std::size_t i = 0; i < data.size(); ++i) wrong += data[i] != allreduce_expected(seed, world_size(), i);
  return wrong;
}

inline std::vector<float> input(std::size_t count, std::uint64_t seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = allreduce_input(seed, world_rank(), i);
  return v;
}

// lenet5 on CIFAR-10-shaped synthetic data: no batch norm, so P ranks x batch B and one rank with
// batch P x B compute the same gradient (the mean over the same P x B samples).
struct TrainCase {
  Shape sample{1, 3, 32, 32};
  int classes = 10;
  int batch = 4;  // per worker
  int steps = 4;
  std::uint64_t seed = 5;
  OptimizerSettings opt{"sgd", 0.05f, 0.9f, 0.0f};
  std::string backend = "reference";
};

// The backend of a case, configured with the default settings (fp32: no TF32 on a GPU).
inline std::unique_ptr<Backend> case_backend(const TrainCase& c) {
  std::unique_ptr<Backend> b = make_backend(c.backend);
  b->configure(BackendSettings{});
  return b;
}

inline Graph lenet(const TrainCase& c) {
  ModelConfig mc;
  mc.input = c.sample;
  mc.classes = c.classes;
  return build_model("lenet5", mc);
}

// Worker w's batch of step k: samples [w*B, (w+1)*B) of the big batch of all workers.
struct BigBatches {
  BigBatches(const TrainCase& c, int workers)
      : per_sample(c.sample.c * c.sample.h * c.sample.w), data(c.sample, c.classes, c.batch * workers, c.seed + 1) {}
  const float* images(int k, int w, int b) const { return data.images(k) + static_cast<std::size_t>(w * b) * per_sample; }
  const std::int32_t* labels(int k, int w, int b) const { return data.labels(k) + w * b; }
  std::size_t per_sample;
  SyntheticData data;
};

struct Trained {
  std::vector<float> params;
  std::vector<float> losses;
  ExchangeMemory memory = ExchangeMemory::Host;  // what the exchange used (distributed runs)
  long steps = -1;  // steps this worker took (distributed runs; -1 on servers)
};

// One rank alone with batch workers x B (the reference the distributed runs must match).
inline Trained train_alone(const TrainCase& c, int workers) {
  auto backend = case_backend(c);
  const Graph g = lenet(c);
  NetworkOptions o;
  o.batch = c.batch * workers;
  o.seed = c.seed;
  Network net(*backend, g, o);
  BigBatches data(c, workers);
  Optimizer opt(*backend, net.param_count(), c.opt);
  Trained t;
  for (int k = 0; k < c.steps; ++k) {
    net.set_input(data.images(k, 0, 0), data.labels(k, 0, 0));
    t.losses.push_back(net.forward());
    net.backward();
    opt.step(net.params(), net.grads());
  }
  t.params = net.get_params();
  return t;
}

// Every rank of the world takes part; workers return their weights, servers an empty result.
// memory: what hpcnn-scale would choose (choose_exchange_memory) unless given.
// stop_signalled(steps taken so far): the exchange's stop-signal check (ExchangeSetup); a worker
// then also stops early when the exchange says the step it took was its last (stop_agreed).
inline Trained train_distributed(const TrainCase& c, const std::string& scheme, int servers, double bucket_mb,
                                 std::optional<ExchangeMemory> memory = std::nullopt,
                                 std::function<bool(long)> stop_signalled = nullptr, bool bf16 = false) {
  auto backend = case_backend(c);
  const Graph g = lenet(c);
  const GradientBuckets buckets(g, bucket_mb * 1024 * 1024);
  ExchangeSetup s;
  s.servers = servers;
  s.param_count = g.param_count();
  s.buckets = &buckets;
  s.steps = c.steps;
  s.optimizer = c.opt;
  s.backend = backend.get();
  s.memory = memory ? *memory : choose_exchange_memory(find_exchange(scheme), *backend);
  s.bf16 = bf16;
  long taken = 0;
  if (stop_signalled) s.stop_signalled = [&] { return stop_signalled(taken); };
  auto ex = find_exchange(scheme).make_exchange(s);
  Trained t;
  t.memory = s.memory;
  if (!ex->is_worker()) {
    ex->serve();
    return t;
  }
  int w = 0;
  MPI_Comm_rank(ex->workers(), &w);
  NetworkOptions o;
  o.batch = c.batch;
  o.seed = c.seed;
  Network net(*backend, g, o);
  BigBatches data(c, ex->worker_count());
  ex->init(net.params());
  for (int k = 0; k < c.steps && !ex->stop_agreed(); ++k, ++taken) {
    net.set_input(data.images(k, w, c.batch), data.labels(k, w, c.batch));
    t.losses.push_back(net.forward());
    net.backward(&buckets, [&](int b) {
      ex->start_bucket(b, net.params(), net.grads());
      ex->progress();
    });
    ex->wait(net.params(), net.grads());
    ex->update(net.params(), net.grads());
  }
  t.params = net.get_params();
  t.steps = taken;
  return t;
}

inline std::uint64_t checksum(const std::vector<float>& v) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// 1 when the workers' checksums differ (collective over the world; servers pass has = false).
inline long long checksums_differ(bool has, std::uint64_t mine) {
  std::vector<unsigned long long> all(static_cast<std::size_t>(world_size()));
  unsigned long long m = has ? mine : 0, flag = has;
  std::vector<unsigned long long> flags(all.size());
  MPI_Allgather(&m, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  MPI_Allgather(&flag, 1, MPI_UNSIGNED_LONG_LONG, flags.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  long long differ = 0, first = -1;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!flags[r]) continue;
    if (first < 0) first = static_cast<long long>(r);
    differ |= all[r] != all[static_cast<std::size_t>(first)];
  }
  return differ;
}

inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
  return d;
}

}  // namespace hpcnn::test
