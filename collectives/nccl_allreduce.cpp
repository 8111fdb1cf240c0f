#include "collectives/nccl_allreduce.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "base/activity.hpp"
#include "base/errors.hpp"
#include "kernels/cuda/device.hpp"

namespace hpcnn {

namespace {

void nccl_check(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess) return;
  std::string msg = "NCCL: ";
  msg.append(what).append(": ").append(ncclGetErrorString(r));
  const char* last = ncclGetLastError(comm);  // NCCL's own detail (which rank, which device...)
  if (last && *last) msg.append(" (").append(last).append(")");
  throw RuntimeError(msg);
}

// Collective over comm: when any rank has a local error, every rank throws the lowest failing
// rank's message, so no rank goes on into NCCL's initialization (where it would wait forever).
void agree(MPI_Comm comm, const std::string& local_error) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local_error.empty() ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int length = static_cast<int>(local_error.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::string message = local_error;
  message.resize(static_cast<std::size_t>(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
  throw RuntimeError(message);
}

class NcclAllreduce : public Allreduce {
 public:
  explicit NcclAllreduce(MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_ = size;
    if (const std::string problem = nccl_placement_problem(comm); !problem.empty())
      throw RuntimeError(std::string("nccl: ").append(problem));
    // Everything local first, agreed over comm, then NCCL's collective initialization.
    std::string error;
    ncclUniqueId id{};
    try {
      cuda::select_device();
      cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      cuda::check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
      if (rank == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    } catch (const std::exception& e) {
      error = e.what();
    }
    try {
      agree(comm, error);
    } catch (...) {
      release();
      throw;
    }
    MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, comm);
    const ncclResult_t r = ncclCommInitRank(&comm_, size, id, rank);
    if (r != ncclSuccess) {
      comm_ = nullptr;
      release();
      nccl_check(r, "ncclCommInitRank");
    }
  }
  ~NcclAllreduce() override {
    if (comm_ && !broken_) cudaStreamSynchronize(stream_);  // errors were reported by wait_all
    release();
  }
  void start(float* data, std::size_t count) override {
    // Nothing to sum; every rank skips the same operations (counts agree), so NCCL stays in step.
    if (count == 0) return;
    if (has_producer_) {
      cuda::check(cudaEventRecord(ready_, producer_), "cudaEventRecord (gradients ready)");
      cuda::check(cudaStreamWaitEvent(stream_, ready_, 0), "cudaStreamWaitEvent (nccl stream)");
    }
    nccl_check(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, stream_), "ncclAllReduce", comm_);
    in_flight_ = true;
    const auto bytes = static_cast<std::int64_t>(count * sizeof(float)) * 2 * (size_ - 1) / size_;
    traffic_.sent += bytes;
    traffic_.received += bytes;
  }
  bool progress() override {
    if (!in_flight_) return true;
    if (finished()) return true;
    check_async();
    return false;
  }
  void wait_all() override {
    // Polling instead of cudaStreamSynchronize: a failing peer shows up as NCCL's asynchronous
    // error, which a plain synchronize would never return to report.
    const activity::WaitScope waiting("NCCL allreduce");
    while (in_flight_ && !finished()) {
      check_async();
      std::this_thread::yield();
    }
  }
  bool set_producer_stream(void* stream) override {
    producer_ = static_cast<cudaStream_t>(stream);
    has_producer_ = true;
    return true;
  }
  Traffic traffic() const override { return traffic_; }

 private:
  // True when every operation queued on the stream has completed.
  bool finished() {
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return false;
    cuda::check(e, "cudaStreamQuery (nccl stream)");
    in_flight_ = false;
    return true;
  }
  void check_async() {
    ncclResult_t state = ncclSuccess;
    nccl_check(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError", comm_);
    if (state == ncclSuccess || state == ncclInProgress) return;
    std::string detail = ncclGetLastError(comm_);
    broken_ = true;
    ncclCommAbort(comm_);  // the communicator cannot be used any more; frees its resources
    comm_ = nullptr;
    std::string msg = "NCCL: allreduce failed: ";
    msg.append(ncclGetErrorString(state));
    if (!detail.empty()) msg.append(" (").append(detail).append(")");
    throw RuntimeError(msg);
  }
  void release() {
    if (comm_) ncclCommDestroy(comm_);
    comm_ = nullptr;
    if (ready_) cudaEventDestroy(ready_);
    ready_ = nullptr;
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }
  int size_ = 1;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr, producer_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  bool has_producer_ = false, in_flight_ = false, broken_ = false;
  Traffic traffic_;
};

}  // namespace

std::string nccl_placement_problem(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Per rank: its host, the PCI bus id of the GPU select_device() will bind it to (the GPU's
  // identity, also when CUDA_VISIBLE_DEVICES shows each rank a different single GPU), or why it
  // sees none. Fixed-size records, so one MPI_Allgather carries them.
  struct Place {
    char host[MPI_MAX_PROCESSOR_NAME];
    char gpu[64];      // bus id; empty: no GPU
    char reason[160];  // why there is no GPU
  };
  Place mine{};
  int length = 0;
  MPI_Get_processor_name(mine.host, &length);
  if (const int gpus = cuda::device_count(); gpus > 0) {
    const int device = cuda::local_rank() % gpus;  // what select_device() picks
    if (cudaDeviceGetPCIBusId(mine.gpu, sizeof mine.gpu, device) != cudaSuccess) {
      cudaGetLastError();
      std::snprintf(mine.gpu, sizeof mine.gpu, "device %d", device);
    }
  } else {
    std::strncpy(mine.reason, cuda::no_device_reason().c_str(), sizeof mine.reason - 1);
  }
  std::vector<Place> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, static_cast<int>(sizeof mine), MPI_BYTE, all.data(), static_cast<int>(sizeof mine), MPI_BYTE,
                comm);
  auto text = [](const char* field, std::size_t n) { return std::string(field, strnlen(field, n)); };
  std::map<std::string, std::pair<int, std::set<std::string>>> hosts;  // host -> (ranks, distinct GPUs)
  for (int r = 0; r < size; ++r) {
    const Place& p = all[static_cast<std::size_t>(r)];
    const std::string host = text(p.host, sizeof p.host), gpu = text(p.gpu, sizeof p.gpu);
    if (gpu.empty())
      return std::string("rank ").append(std::to_string(r)).append(" on host ").append(host).append(" sees no GPU (")
          .append(text(p.reason, sizeof p.reason)).append(")");
    ++hosts[host].first;
    hosts[host].second.insert(gpu);
  }
  for (const auto& [host, use] : hosts) {
    const int ranks = use.first, gpus = static_cast<int>(use.second.size());
    if (ranks > gpus)
      return std::to_string(ranks)
          .append(" ranks on host ").append(host).append(" but only ").append(std::to_string(gpus))
          .append(gpus == 1 ? " GPU" : " GPUs")
          .append(" among them: NCCL needs one GPU per rank (it fails with \"Duplicate GPU\"); start at most ")
          .append(std::to_string(gpus)).append(gpus == 1 ? " rank" : " ranks").append(" on that node");
  }
  return {};
}

std::unique_ptr<Allreduce> make_nccl_allreduce(MPI_Comm comm) { return std::make_unique<NcclAllreduce>(comm); }

}  // namespace hpcnn
