// The nccl exchange on GPU memory under mpirun (tests/nccl_collectives.sh runs it at -np 1, and
// at -np 2 where a node has two GPUs for NCCL). Like test_collectives.cpp, every check is summed
// over the job before any EXPECT, so no rank leaves a collective early.
//   - every allreduce equals the exact element-wise sum, element by element after copying the
//     device buffer back: sizes 0, 1, below/at/above the rank count, odd, not divisible by the
//     rank count, large; one at a time (run, and start + wait_all) and many in flight;
//   - start() is ordered after the producer stream: a buffer still being written on another
//     stream when start() is called must be summed only once written;
//   - the traffic is the bus volume 2(P-1)/P x bytes each way;
//   - with a cuda backend in the build: lenet5 trained with nccl (device memory) and with the
//     staged host schemes keeps every rank's weights bit-identical and matches one rank with the
//     big batch within a stated tolerance.
// No GPU: the binary prints "SKIPPED: no GPU (reason)" and exits 77 (CTest's skip). A node with
// more ranks than GPUs: the NCCL cases are skipped (NCCL refuses two ranks on one GPU), the
// staged training still runs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>

#include "collectives/message_buffer.hpp"
#include "collectives/nccl_allreduce.hpp"
#include "collectives_util.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/registry.hpp"

using namespace hpcnn;
using namespace hpcnn::test;

namespace {

// "" when NCCL can run here (one GPU per rank), else why not; the same on every rank.
const std::string& nccl_problem() {
  static const std::string problem = nccl_placement_problem(MPI_COMM_WORLD);
  return problem;
}

std::vector<std::size_t> gpu_sizes() {
  std::vector<std::size_t> sizes = test_sizes();
  sizes.push_back((std::size_t{1} << 22) + 3);  // 16 MiB + 12 B: large and odd
  return sizes;
}

// Uploads `host`, runs `op` on the device copy, downloads it, counts wrong elements.
template <class Op>
long long wrong_after(const std::vector<float>& host, std::uint64_t seed, Op op) {
  auto buffer = make_message_buffer(true, host.size());
  buffer->fill(host);
  op(buffer->data());
  std::vector<float> out;
  buffer->read(out);
  return count_wrong(out, seed);
}

}  // namespace

TEST(Nccl, EqualsTheExactSumOneAtATime) {
  if (!nccl_problem().empty()) GTEST_SKIP() << nccl_problem();
  auto nccl = make_nccl_allreduce(MPI_COMM_WORLD);
  for (std::size_t n : gpu_sizes()) {
    const std::uint64_t seed = 21 + n;
    const std::vector<float> in = input(n, seed);
    long long wrong = wrong_after(in, seed, [&](float* d) { nccl->run(d, n); });
    wrong += wrong_after(in, seed, [&](float* d) {
      nccl->start(d, n);
      nccl->wait_all();
    });
    EXPECT_EQ(sum_over_ranks(wrong), 0) << "nccl with " << n << " floats on " << world_size() << " ranks";
  }
}

TEST(Nccl, EqualsTheExactSumWithManyInFlight) {
  if (!nccl_problem().empty()) GTEST_SKIP() << nccl_problem();
  auto nccl = make_nccl_allreduce(MPI_COMM_WORLD);
  std::vector<std::unique_ptr<MessageBuffer>> buffers;
  std::vector<std::size_t> sizes = gpu_sizes();
  for (std::size_t n : sizes) {
    buffers.push_back(make_message_buffer(true, n));
    buffers.back()->fill(input(n, 200 + n));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    nccl->start(buffers[i]->data(), sizes[i]);
    nccl->progress();
  }
  nccl->wait_all();
  long long wrong = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::vector<float> out;
    buffers[i]->read(out);
    wrong += count_wrong(out, 200 + sizes[i]);
  }
  EXPECT_EQ(sum_over_ranks(wrong), 0) << "nccl, " << sizes.size() << " operations in flight on " << world_size()
                                      << " ranks";
  // Bus volume, as mpi counts it: 2(P-1)/P x bytes each way (integer division per operation).
  std::int64_t want = 0;
  for (std::size_t n : sizes)
    want += static_cast<std::int64_t>(n * sizeof(float)) * 2 * (world_size() - 1) / world_size();
  EXPECT_EQ(nccl->traffic().sent, want);
  EXPECT_EQ(nccl->traffic().received, want);
}

TEST(Nccl, StartWaitsForTheProducerStream) {
  if (!nccl_problem().empty()) GTEST_SKIP() << nccl_problem();
  // The producer stream first fills a large scratch buffer several times (milliseconds of work),
  // then writes the real input; start() is called right away, without any host synchronization.
  // Unordered, NCCL would read the NaN left before the input arrives (several ranks), and
  // wait_all() would return while the producer is still busy (any rank count, also one rank,
  // where NCCL's in-place allreduce has nothing to do).
  const std::size_t n = 1 << 20, scratch_bytes = std::size_t{256} << 20;
  const std::uint64_t seed = 77;
  cudaStream_t producer = nullptr;
  void* scratch = nullptr;
  float* host = nullptr;
  auto nccl = make_nccl_allreduce(MPI_COMM_WORLD);
  auto buffer = make_message_buffer(true, n);
  cuda::check(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cuda::check(cudaMalloc(&scratch, scratch_bytes), "cudaMalloc (scratch)");
  cuda::check(cudaMallocHost(reinterpret_cast<void**>(&host), n * sizeof(float)), "cudaMallocHost");
  const std::vector<float> in = input(n, seed);
  std::copy(in.begin(), in.end(), host);
  long long wrong = 0, early = 0;
  for (int round = 0; round < 3; ++round) {
    cuda::check(cudaMemsetAsync(buffer->data(), 0xff, n * sizeof(float), producer), "cudaMemsetAsync (NaN)");
    cuda::check(cudaStreamSynchronize(producer), "cudaStreamSynchronize");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 8; ++k) cuda::check(cudaMemsetAsync(scratch, k, scratch_bytes, producer), "cudaMemsetAsync");
    cuda::check(cudaMemcpyAsync(buffer->data(), host, n * sizeof(float), cudaMemcpyHostToDevice, producer),
                "cudaMemcpyAsync");
    EXPECT_TRUE(nccl->set_producer_stream(producer));
    nccl->start(buffer->data(), n);
    nccl->wait_all();
    early += cudaStreamQuery(producer) != cudaSuccess;
    std::vector<float> out;
    buffer->read(out);
    wrong += count_wrong(out, seed);
  }
  EXPECT_EQ(sum_over_ranks(wrong), 0) << "elements summed before the producer stream wrote them";
  EXPECT_EQ(sum_over_ranks(early), 0) << "wait_all() returned before the producer stream's work had finished";
  cudaFreeHost(host);
  cudaFree(scratch);
  cudaStreamDestroy(producer);
}

TEST(NcclTraining, RanksStayBitIdenticalAndMatchOneRankWithTheBigBatch) {
  bool have_cuda_backend = false;
  for (const BackendInfo& b : backends()) have_cuda_backend |= b.name == "cuda";
  if (!have_cuda_backend) GTEST_SKIP() << "this build has no cuda backend";
  TrainCase c;
  c.backend = "cuda";
  // Stated tolerance on the GPU: P x B and 1 x PB differ in the order of float additions inside
  // cuDNN and cuBLAS as well as in the allreduce; after 4 SGD steps (lr 0.05, momentum 0.9) every
  // weight (O(0.1)) agrees within 1e-4 absolute.
  constexpr double kGpuTolerance = 1e-4;
  const Trained alone = train_alone(c, world_size());
  std::vector<std::pair<std::string, int>> cases;
  if (nccl_problem().empty()) cases.push_back({"nccl", 0});
  for (const char* s : {"mpi", "ring", "rhd"}) cases.push_back({s, 0});
  if (world_size() >= 2) cases.push_back({"ps-sync", 1});
  for (const auto& [scheme, servers] : cases)
    for (double bucket_mb : {0.0, 0.01}) {
      const Trained t = train_distributed(c, scheme, servers, bucket_mb);
      const bool worker = !t.params.empty();
      EXPECT_EQ(checksums_differ(worker, checksum(t.params)), 0) << scheme << ": weights differ across ranks";
      // ps-sync: the reference is one rank with the workers' big batch.
      const Trained& ref = servers ? train_alone(c, world_size() - servers) : alone;
      const double diff = max_over_ranks(worker ? max_abs_diff(t.params, ref.params) : 0.0);
      if (world_rank() == 0)
        std::printf("[ rule ] %s (%s) bucket %.2f MiB, %d ranks: max |w - w_1| = %.3g <= %.0e\n", scheme.c_str(),
                    exchange_memory_name(t.memory), bucket_mb, world_size(), diff, kGpuTolerance);
      EXPECT_LE(diff, kGpuTolerance) << scheme;
      if (scheme == "nccl") {
        EXPECT_EQ(t.memory, ExchangeMemory::Device);
      } else if (scheme != "mpi") {  // mpi: device memory only with a CUDA-aware MPI
        EXPECT_EQ(t.memory, ExchangeMemory::HostStaged) << scheme;
      }
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // For tests/nccl_collectives.sh: how many GPUs this process sees (decides the -np 2 part).
  if (argc > 1 && std::string(argv[1]) == "--count-gpus") {
    std::printf("%d\n", cuda::device_count());
    MPI_Finalize();
    return 0;
  }
  // Without a GPU on every rank there is nothing to test: skip the whole binary, saying why.
  const int has_gpu = cuda::device_count() > 0 ? 1 : 0;
  int all_have = 0;
  MPI_Allreduce(&has_gpu, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_have) {
    if (world_rank() == 0)
      std::printf("SKIPPED: no GPU (%s)\n", has_gpu ? "another rank has none" : cuda::no_device_reason().c_str());
    MPI_Finalize();
    return 77;
  }
  const std::string& problem = nccl_problem();  // collective: every rank asks once, here
  if (world_rank() == 0 && !problem.empty()) std::printf("NCCL cases SKIPPED: %s\n", problem.c_str());
  return run_all_tests_on_all_ranks();
}
