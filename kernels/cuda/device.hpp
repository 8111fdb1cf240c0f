// CUDA device selection and description, shared by the cuda backend, the NCCL exchange and
// hpcnn-scale --preflight. Plain C++ (no nvcc needed); only built when configure found CUDA.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace hpcnn::cuda {

// Throws RuntimeError("CUDA: <what>: <error string>") unless e == cudaSuccess.
void check(cudaError_t e, const char* what);

// GPUs visible to this process; 0 when there is no driver or no device (never throws).
int device_count();
// Why device_count() is 0, in one line ("no CUDA driver", "no CUDA device", ...); empty otherwise.
std::string no_device_reason();

// This process's rank among the ranks of its node: MPI_Comm_split_type(SHARED) when MPI is
// initialized, else OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID, PMI_LOCAL_RANK,
// else 0.
int local_rank();

// Binds this process to GPU local_rank() % device_count() (once; later calls return the same)
// and returns it. Throws RuntimeError when there is no GPU.
int select_device();

struct DeviceInfo {
  int device = -1;
  std::string name;     // "NVIDIA H100 80GB HBM3"
  std::string bus_id;   // "0000:18:00.0"
  std::size_t total_bytes = 0;
  int cc_major = 0, cc_minor = 0, multiprocessors = 0;
  int driver_version = 0, runtime_version = 0;  // 13000 = 13.0
};
DeviceInfo device_info(int device);

// "13.0" from 13000.
std::string version_string(int cuda_version);

}  // namespace hpcnn::cuda
