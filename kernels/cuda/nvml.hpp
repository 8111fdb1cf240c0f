// GPU energy and power through NVML, loaded at run time (dlopen of libnvidia-ml.so.1, which comes
// with the driver), so the build needs no NVML headers and a machine without it just reports none.
#pragma once

#include <string>

namespace hpcnn::cuda {

// Total energy the GPU with this PCI bus id has used since the driver loaded, in joules; < 0 when
// NVML or the counter (Volta and later) is not available.
double gpu_energy_joules(const std::string& bus_id);

}  // namespace hpcnn::cuda
