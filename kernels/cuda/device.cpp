#include "kernels/cuda/device.hpp"

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "base/errors.hpp"

namespace hpcnn::cuda {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::string msg = "CUDA: ";
  msg.append(what).append(": ").append(cudaGetErrorString(e));
  throw RuntimeError(msg);
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error for later calls
    return 0;
  }
  return n;
}

std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return {};
  cudaGetLastError();
  if (e == cudaSuccess) return "no CUDA device visible (CUDA_VISIBLE_DEVICES?)";
  return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
}

int local_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    MPI_Comm node;
    int rank = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Comm_free(&node);
    return rank;
  }
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

int select_device() {
  static int chosen = -1;
  if (chosen >= 0) {
    check(cudaSetDevice(chosen), "cudaSetDevice");
    return chosen;
  }
  const int n = device_count();
  if (n == 0) throw RuntimeError("cuda: " + no_device_reason());
  const int d = local_rank() % n;
  check(cudaSetDevice(d), "cudaSetDevice");
  chosen = d;
  return d;
}

DeviceInfo device_info(int device) {
  DeviceInfo info;
  info.device = device;
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  info.name = p.name;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) info.bus_id = bus;
  info.total_bytes = p.totalGlobalMem;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.multiprocessors = p.multiProcessorCount;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  return info;
}

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace hpcnn::cuda
