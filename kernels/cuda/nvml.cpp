#include "kernels/cuda/nvml.hpp"

#include <dlfcn.h>

#include <mutex>

namespace hpcnn::cuda {

namespace {

// The few NVML entry points used, declared here with NVML's documented C signatures.
using nvmlReturn = int;  // NVML_SUCCESS == 0
using nvmlDevice = void*;
struct Nvml {
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*by_bus_id)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*energy)(nvmlDevice, unsigned long long*) = nullptr;  // millijoules
  bool ok = false;
};

const Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    n.init = reinterpret_cast<nvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.by_bus_id = reinterpret_cast<nvmlReturn (*)(const char*, nvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.energy = reinterpret_cast<nvmlReturn (*)(nvmlDevice, unsigned long long*)>(
        dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    n.ok = n.init && n.by_bus_id && n.energy && n.init() == 0;
  });
  return n;
}

}  // namespace

double gpu_energy_joules(const std::string& bus_id) {
  const Nvml& n = nvml();
  if (!n.ok || bus_id.empty()) return -1.0;
  nvmlDevice dev = nullptr;
  if (n.by_bus_id(bus_id.c_str(), &dev) != 0) return -1.0;
  unsigned long long mj = 0;
  if (n.energy(dev, &mj) != 0) return -1.0;
  return static_cast<double>(mj) * 1e-3;
}

}  // namespace hpcnn::cuda
