// The exchange schemes of collectives/ under mpirun (tests/mpi_collectives.sh runs this binary at
// -np 1..4, oversubscribed). Every check is collective-safe: each rank counts its own failures and
// the counts are summed over the job before any EXPECT, so no rank leaves a collective early.
//   - every allreduce equals the exact element-wise sum (inputs: small integers from (seed, rank,
//     index), compared for equality), sizes 0, 1, below/at/above the rank count, uneven, large;
//     one at a time and several in flight;
//   - after N synchronous steps every rank holds bit-identical weights (checksums compared);
//   - P ranks x batch B match one rank with batch P x B after N steps (lenet5: no batch norm,
//     whose statistics would be per rank), for every allreduce scheme and for ps-sync;
//   - ps-async with 3 workers and 1 server lowers the loss (at -np 4);
//   - a stop signal on one worker or on the first server ends a parameter-server run early on
//     every worker (ps-sync: after the same step), and the servers return (no hang);
//   - host staging (how GPU gradients reach host-memory schemes) changes nothing: the staged
//     exchanges train bit-identically to the host ones on a CPU backend, whose "device" copies are
//     plain copies; Staging's ranges, and the memory choice for CPU backends.
// GPU schemes (nccl) need device memory and are tested by tests/test_nccl.cpp.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "collectives/exchange.hpp"
#include "collectives/mpi_cuda.hpp"
#include "collectives/staging.hpp"
#include "collectives_util.hpp"
#include "base/bf16.hpp"
#include "base/errors.hpp"
#include "kernels/registry.hpp"

using namespace hpcnn;
using namespace hpcnn::test;

namespace {

// The schemes that sum host memory (nccl, device memory only, has its own test binary).
std::vector<std::string> allreduce_schemes() {
  std::vector<std::string> out;
  for (const ExchangeInfo& e : exchanges())
    if (e.make_allreduce && e.access != BufferAccess::Device) out.push_back(e.name);
  return out;
}

}  // namespace

TEST(Allreduce, EverySchemeEqualsTheExactSumOneAtATime) {
  for (const std::string& scheme : allreduce_schemes()) {
    auto ar = find_exchange(scheme).make_allreduce(MPI_COMM_WORLD);
    for (std::size_t n : test_sizes()) {
      const std::uint64_t seed = 11 + n;
      std::vector<float> data = input(n, seed), again = data;
      ar->run(data.data(), n);  // blocking form (MPI_Allreduce for mpi)
      ar->start(again.data(), n);  // non-blocking form
      ar->wait_all();
      const long long wrong = sum_over_ranks(count_wrong(data, seed) + count_wrong(again, seed));
      EXPECT_EQ(wrong, 0) << scheme << " with " << n << " floats on " << world_size() << " ranks";
    }
  }
}

// hpcnn-allreduce --placement out (OSU's form): the receive buffer holds the exact sum element by
// element, the send buffer is left as it was, also when the same buffers are run twice.
TEST(Allreduce, OutOfPlaceEqualsTheExactSumAndLeavesTheSendBuffer) {
  for (const std::string& scheme : allreduce_schemes()) {
    auto ar = find_exchange(scheme).make_allreduce(MPI_COMM_WORLD);
    for (std::size_t n : test_sizes()) {
      const std::uint64_t seed = 29 + n;
      const std::vector<float> send = input(n, seed), original = send;
      std::vector<float> recv(n, -1.0f);
      ar->run_out_of_place(send.data(), recv.data(), n);
      ar->run_out_of_place(send.data(), recv.data(), n);
      long long changed = 0;
      for (std::size_t i = 0; i < n; ++i) changed += send[i] != original[i];
      EXPECT_EQ(sum_over_ranks(count_wrong(recv, seed)), 0) << scheme << " with " << n << " floats";
      EXPECT_EQ(sum_over_ranks(changed), 0) << scheme << ": the send buffer changed";
    }
  }
}

TEST(Allreduce, EverySchemeEqualsTheExactSumWithManyInFlight) {
  // Like gradient buckets: every size started back to back, progressed, then waited for.
  for (const std::string& scheme : allreduce_schemes()) {
    auto ar = find_exchange(scheme).make_allreduce(MPI_COMM_WORLD);
    std::vector<std::vector<float>> bufs;
    for (std::size_t n : test_sizes()) bufs.push_back(input(n, 100 + n));
    for (auto& b : bufs) {
      ar->start(b.data(), b.size());
      ar->progress();
    }
    ar->wait_all();
    long long wrong = 0;
    for (auto& b : bufs) wrong += count_wrong(b, 100 + b.size());
    EXPECT_EQ(sum_over_ranks(wrong), 0) << scheme << " on " << world_size() << " ranks";
    // Traffic of the schemes written here: 2(P-1)/P of the data per rank and direction (ring) or
    // at least that (rhd with a non-power-of-two rank count moves more on some ranks).
    if (scheme == "ring") {
      std::size_t total = 0;
      for (auto& b : bufs) total += b.size();
      const double expect = world_size() > 1 ? 2.0 * (world_size() - 1) / world_size() * total * 4 : 0;
      EXPECT_NEAR(static_cast<double>(ar->traffic().sent), expect, 4.0 * 2 * world_size() * bufs.size());
    }
  }
}

// --exchange-precision bf16: the inputs are integers in [-8, 8], which bf16 holds exactly, and so
// are their sums over up to 32 ranks (bf16's 8 significant bits hold every integer up to 256): the
// bf16 sum must equal the exact sum element by element, several operations in flight, and move
// half the bytes of the fp32 sum.
TEST(Allreduce, Bf16SumsEqualTheExactSumAtHalfTheBytes) {
  for (const std::string& scheme : allreduce_schemes()) {
    auto ar = find_exchange(scheme).make_allreduce(MPI_COMM_WORLD);
    ASSERT_TRUE(ar->sums_bf16()) << scheme;
    std::vector<std::vector<std::uint16_t>> bufs;
    std::size_t total = 0;
    for (std::size_t n : test_sizes()) {
      std::vector<std::uint16_t> b(n);
      for (std::size_t i = 0; i < n; ++i) b[i] = bf16_bits(allreduce_input(300 + n, world_rank(), i));
      bufs.push_back(std::move(b));
      total += n;
    }
    for (auto& b : bufs) {
      ar->start_bf16(b.data(), b.size());
      ar->progress();
    }
    ar->wait_all();
    long long wrong = 0;
    for (auto& b : bufs)
      for (std::size_t i = 0; i < b.size(); ++i)
        wrong += bf16_value(b[i]) != allreduce_expected(300 + b.size(), world_size(), i);
    EXPECT_EQ(sum_over_ranks(wrong), 0) << scheme << " bf16 on " << world_size() << " ranks";
    if (scheme == "ring" || scheme == "mpi") {
      const double expect = world_size() > 1 ? 2.0 * (world_size() - 1) / world_size() * total * 2 : 0;
      EXPECT_NEAR(static_cast<double>(ar->traffic().sent), expect, 2.0 * 2 * world_size() * bufs.size()) << scheme;
    }
  }
}

// Values bf16 does not hold: each rank's contribution is rounded to bf16 and every addition too,
// each rounding at most 2^-8 of its value (half a unit in the last of bf16's 8 significant bits):
// P inputs of at most max|x| and P-1 partial sums of at most P max|x| give |sum - exact| <=
// 2^-8 (P + (P-1) P) max|x| = 2^-8 P^2 max|x| per element;
// and every rank ends with the same bits.
TEST(Allreduce, Bf16SumsRoundWithinTheirBoundAndAgreeAcrossRanks) {
  const std::size_t n = 4099;
  const int p = world_size();
  for (const std::string& scheme : allreduce_schemes()) {
    auto ar = find_exchange(scheme).make_allreduce(MPI_COMM_WORLD);
    std::vector<std::uint16_t> b(n);
    auto value = [](int rank, std::size_t i) { return 0.001f * static_cast<float>((i * 37 + 11 * rank) % 1000) + 0.3f; };
    for (std::size_t i = 0; i < n; ++i) b[i] = bf16_bits(value(world_rank(), i));
    ar->start_bf16(b.data(), n);
    ar->wait_all();
    double worst = 0;
    long long beyond = 0;
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < n; ++i) {
      double exact = 0, largest = 0;
      for (int r = 0; r < p; ++r) {
        exact += value(r, i);
        largest = std::max(largest, static_cast<double>(value(r, i)));
      }
      const double err = std::fabs(bf16_value(b[i]) - exact);
      worst = std::max(worst, err);
      beyond += err > std::ldexp(1.0, -8) * p * p * largest;
      h = (h ^ b[i]) * 1099511628211ull;
    }
    EXPECT_EQ(sum_over_ranks(beyond), 0) << scheme;
    EXPECT_EQ(checksums_differ(true, h), 0) << scheme << ": the bf16 sums differ across ranks";
    if (p > 1) {
      EXPECT_GT(max_over_ranks(worst), 0.0) << scheme << ": no bf16 rounding: did it sum fp32?";
    }
  }
}

namespace {

// Stated tolerance of "P x B matches 1 x PB": the sums differ only in the order of float additions,
// so after 4 SGD steps (lr 0.05, momentum 0.9) every weight agrees within 2e-5 absolute
// (weights are O(0.1); observed differences are ~1e-7).
constexpr double kTrainTolerance = 2e-5;

}  // namespace

TEST(Training, AllreduceRanksStayBitIdenticalAndMatchOneRankWithTheBigBatch) {
  TrainCase c;
  const Trained alone = train_alone(c, world_size());
  for (const std::string& scheme : allreduce_schemes())
    for (double bucket_mb : {0.0, 0.01}) {  // one bucket, and several in flight
      const Trained t = train_distributed(c, scheme, 0, bucket_mb);
      EXPECT_EQ(checksums_differ(true, checksum(t.params)), 0) << scheme << ": weights differ across ranks";
      const double diff = max_over_ranks(max_abs_diff(t.params, alone.params));
      if (world_rank() == 0)
        std::printf("[ rule ] %s bucket %.2f MiB, %d ranks x batch %d vs 1 x %d: max |w - w_1| = %.3g <= %.0e\n",
                  scheme.c_str(), bucket_mb, world_size(), c.batch, c.batch * world_size(), diff, kTrainTolerance);
      EXPECT_LE(diff, kTrainTolerance) << scheme;
    }
}

// --exchange-precision bf16: the workers stay bit-identical (every rank gets the same bf16 sums)
// and within bf16's rounding of one rank with the big batch: each gradient element carries at most
// 2^-8 x P of its magnitude in rounding (as above), so after 4 steps of lr 0.05 the weights (O(0.1),
// gradients O(0.1)) may differ by about 4 x 0.05 x 0.1 x 2^-8 x P x (1 + 0.9 + ...) < 2e-3.
TEST(Training, Bf16ExchangeStaysIdenticalAcrossRanksAndCloseToOneRank) {
  TrainCase c;
  const Trained alone = train_alone(c, world_size());
  for (const std::string& scheme : allreduce_schemes()) {
    const Trained t = train_distributed(c, scheme, 0, 0.01, std::nullopt, nullptr, true);
    EXPECT_EQ(checksums_differ(true, checksum(t.params)), 0) << scheme << " bf16: weights differ across ranks";
    const double diff = max_over_ranks(max_abs_diff(t.params, alone.params));
    if (world_rank() == 0)
      std::printf("[ rule ] %s bf16 exchange, %d ranks: max |w - w_1| = %.3g <= 2e-3\n", scheme.c_str(), world_size(),
                  diff);
    EXPECT_LE(diff, 2e-3) << scheme;
  }
}

// The parameter servers exchange fp32: asked for bf16 they refuse.
TEST(ParameterServer, RefusesTheBf16Exchange) {
  TrainCase c;
  auto backend = case_backend(c);
  const Graph g = lenet(c);
  const GradientBuckets buckets(g, 0);
  ExchangeSetup s;
  s.servers = 1;
  s.param_count = g.param_count();
  s.buckets = &buckets;
  s.steps = 1;
  s.optimizer = c.opt;
  s.backend = backend.get();
  s.bf16 = true;
  EXPECT_THROW(find_exchange("ps-sync").make_exchange(s), SettingError);
}

TEST(Training, ParameterServerSyncMatchesOneRankWithTheBigBatch) {
  if (world_size() < 2) GTEST_SKIP() << "needs a server and a worker";
  TrainCase c;
  for (int servers = 1; servers <= std::min(2, world_size() - 1); ++servers) {
    const int workers = world_size() - servers;
    const Trained alone = train_alone(c, workers);
    const Trained t = train_distributed(c, "ps-sync", servers, 0.01);
    const bool worker = !t.params.empty();
    EXPECT_EQ(checksums_differ(worker, checksum(t.params)), 0) << "ps-sync: weights differ across workers";
    const double diff = max_over_ranks(worker ? max_abs_diff(t.params, alone.params) : 0.0);
    if (world_rank() == 0)
      std::printf("[ rule ] ps-sync %d servers, %d workers x batch %d vs 1 x %d: max |w - w_1| = %.3g <= %.0e\n",
                servers, workers, c.batch, c.batch * workers, diff, kTrainTolerance);
    EXPECT_LE(diff, kTrainTolerance);
  }
}

TEST(Training, ParameterServerAsyncLowersTheLossWithThreeWorkersAndOneServer) {
  if (world_size() != 4) GTEST_SKIP() << "runs at -np 4 (3 workers + 1 server)";
  TrainCase c;
  c.batch = 16;
  c.steps = 60;
  // Plain SGD: momentum on the server accumulates stale pushes of three workers and made
  // asynchronous training on this small task unstable (observed divergence with momentum 0.9).
  c.opt.lr = 0.02f;
  c.opt.momentum = 0.0f;
  const Trained t = train_distributed(c, "ps-async", 1, 0.01);
  // The loss of the initial and of the final weights on one fixed batch of the task (per-step
  // training losses are too noisy at batch 16 to judge asynchronous steps).
  const bool worker = !t.params.empty();
  double before = 0, after = 0;
  if (worker) {
    auto backend = make_backend("reference");
    const Graph g = lenet(c);
    NetworkOptions o;
    o.batch = 128;
    o.seed = c.seed;
    o.mode = Mode::Infer;
    Network net(*backend, g, o);
    SyntheticData eval(c.sample, c.classes, o.batch, c.seed + 1, 1);
    net.set_input(eval.images(0), eval.labels(0));
    before = net.forward();
    net.set_params(t.params);
    net.set_input(eval.images(0), eval.labels(0));
    after = net.forward();
  }
  // Rule: every worker's final weights have a lower loss than the initial ones, and the mean over
  // the workers is below 0.95 x the initial loss (observed 0.85-0.93 x after 60 steps, lr 0.02).
  const long long bad = sum_over_ranks(worker && !(std::isfinite(after) && after < before));
  double after_sum = 0, before_max = 0;
  MPI_Allreduce(&after, &after_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&before, &before_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double mean_after = after_sum / 3;
  if (world_rank() == 0)
    std::printf("[ rule ] ps-async: loss on a fixed batch %.4f -> mean over workers %.4f (< 0.95 x), each lower\n",
                before_max, mean_after);
  EXPECT_LT(mean_after, 0.95 * before_max);
  EXPECT_EQ(bad, 0);
}

namespace {

// Steps a worker took before the servers ended the run (-1 on servers): a stop signal "arrives"
// on world rank `signalled` once this rank has taken `signal_at` steps (servers: at once), through
// ExchangeSetup::stop_signalled; the worker loop stops when Exchange::stop_agreed says so.
long steps_until_stopped(const std::string& scheme, int servers, int signalled, int planned, long signal_at) {
  TrainCase c;
  c.batch = 2;
  c.steps = planned;
  c.opt.lr = 0.001f;
  const bool server_rank = world_rank() >= world_size() - servers;
  return train_distributed(c, scheme, servers, 0.01, std::nullopt, [&](long taken) {
           return world_rank() == signalled && (server_rank || taken >= signal_at);
         }).steps;
}

}  // namespace

TEST(ParameterServer, AStopSignalOnAWorkerOrTheFirstServerEndsEveryWorkerEarly) {
  if (world_size() < 2) GTEST_SKIP() << "needs a server and a worker";
  constexpr int kPlanned = 100000;
  constexpr long kSignalAt = 3;
  for (const std::string scheme : {"ps-sync", "ps-async"})
    for (int servers = 1; servers <= std::min(2, world_size() - 1); ++servers) {
      const int workers = world_size() - servers;
      for (const int signalled : {workers - 1, workers}) {  // the last worker, the first server
        const long taken = steps_until_stopped(scheme, servers, signalled, kPlanned, kSignalAt);
        const bool worker = taken >= 0;
        long most = 0, least = kPlanned, mine_least = worker ? taken : kPlanned;
        MPI_Allreduce(&taken, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&mine_least, &least, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
        if (world_rank() == 0)
          std::printf("[ rule ] %s, %d servers, signal on rank %d after %lld steps: workers stopped after %lld-%lld "
                      "of %lld steps\n",
                      scheme.c_str(), servers, signalled, static_cast<long long>(kSignalAt),
                      static_cast<long long>(least), static_cast<long long>(most), static_cast<long long>(kPlanned));
        // Every worker stopped long before the planned end (the servers answer within a few steps).
        EXPECT_LT(most, kPlanned) << scheme << " " << servers << " servers, signal on rank " << signalled;
        // The signalled worker stops only after its signal (ps-async: the others, running free,
        // may have taken fewer steps by then).
        const long long early = sum_over_ranks(world_rank() == signalled && worker && taken <= kSignalAt);
        EXPECT_EQ(early, 0) << scheme << ": the signalled worker stopped before its signal";
        if (scheme == "ps-sync") {
          EXPECT_EQ(least, most) << "ps-sync workers stopped after different steps";
        }
      }
    }
}

TEST(Staging, DisabledIsTheBufferItselfAndEnabledCopiesExactlyTheRange) {
  auto backend = make_backend("reference");
  std::vector<float> buffer(10);
  std::iota(buffer.begin(), buffer.end(), 1.0f);
  Staging off(*backend, buffer.size(), false);
  EXPECT_EQ(off.host(buffer.data()), buffer.data());
  off.pull(buffer.data(), 0, 10);  // no-ops
  off.push(buffer.data(), 0, 10);
  Staging on(*backend, buffer.size(), true);
  float* host = on.host(buffer.data());
  ASSERT_NE(host, buffer.data());
  on.pull(buffer.data(), 3, 4);  // elements 3..6 only
  for (int i = 0; i < 10; ++i) EXPECT_EQ(host[i], i >= 3 && i < 7 ? buffer[static_cast<std::size_t>(i)] : 0.0f) << i;
  for (int i = 0; i < 10; ++i) host[i] = -1.0f - static_cast<float>(i);
  on.push(buffer.data(), 8, 2);  // elements 8, 9 only
  for (int i = 0; i < 10; ++i) EXPECT_EQ(buffer[static_cast<std::size_t>(i)], i >= 8 ? -1.0f - static_cast<float>(i) : i + 1.0f) << i;
  EXPECT_THROW(on.pull(buffer.data(), 8, 3), std::logic_error);
  EXPECT_THROW(on.push(buffer.data(), 11, 1), std::logic_error);
}

TEST(Staging, CpuBackendsUseHostMemoryAndGpuOnlySchemesRefuseThem) {
  auto backend = make_backend("reference");
  for (const ExchangeInfo& e : exchanges()) {
    if (e.access == BufferAccess::Device) EXPECT_THROW(choose_exchange_memory(e, *backend), UsageError) << e.name;
    else EXPECT_EQ(choose_exchange_memory(e, *backend), ExchangeMemory::Host) << e.name;
  }
  EXPECT_STREQ(exchange_memory_name(ExchangeMemory::HostStaged), "host-staged");
  const MpiCudaSupport mpi = mpi_cuda_support();
  if (world_rank() == 0) std::printf("[ info ] CUDA-aware MPI: %s\n", mpi.detail.c_str());
  EXPECT_FALSE(mpi.detail.empty());
}

TEST(Staging, StagedExchangesTrainBitIdenticallyToHostOnes) {
  // What a GPU backend gets for ring, rhd, mpi without CUDA-aware MPI and the parameter servers:
  // every bucket copied out before its exchange and back before the update. On a CPU backend the
  // copies are plain copies, so any difference is a staging bug (a range missed, a copy too early).
  TrainCase c;
  c.steps = 3;
  struct Case {
    std::string scheme;
    int servers;
  };
  std::vector<Case> cases;
  for (const std::string& s : allreduce_schemes()) cases.push_back({s, 0});
  if (world_size() >= 2) cases.push_back({"ps-sync", 1});
  // One worker: asynchronous pushes arrive in a fixed order, so the result is deterministic.
  if (world_size() == 2) cases.push_back({"ps-async", 1});
  for (const Case& k : cases)
    for (double bucket_mb : {0.0, 0.01}) {
      const Trained host = train_distributed(c, k.scheme, k.servers, bucket_mb, ExchangeMemory::Host);
      const Trained staged = train_distributed(c, k.scheme, k.servers, bucket_mb, ExchangeMemory::HostStaged);
      const long long differ = sum_over_ranks(host.params.size() != staged.params.size() ||
                                              checksum(host.params) != checksum(staged.params));
      EXPECT_EQ(differ, 0) << k.scheme << " bucket " << bucket_mb << " MiB: staged weights differ from host weights";
      EXPECT_EQ(sum_over_ranks(host.losses != staged.losses), 0) << k.scheme << ": staged losses differ";
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return run_all_tests_on_all_ranks();
}
