// What the engine says about a backend's settings, in its own terms (SettingError); the list of
// backends is kernels/registry.cpp's.
#include <string>

#include "base/errors.hpp"
#include "engine/backend.hpp"

namespace hpcnn {

void check_thread_limit(const BackendInfo& backend, int n) {
  if (n <= 0 || backend.max_threads.allows(n)) return;
  throw SettingError("threads", std::to_string(n),
                     "backend '" + backend.name + "' accepts at most " + std::to_string(backend.max_threads.at_most) +
                         " threads");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Tf32: return "tf32";
    case Precision::Bf16: return "bf16";
    case Precision::Int8: return "int8";
  }
  return "?";
}

namespace {

bool owns(const std::vector<std::string>& own, const char* setting) {
  for (const std::string& o : own)
    if (o == setting) return true;
  return false;
}

// Everything but the precision: GPU settings are refused, a CPU backend's own ones (`own`) pass.
void check_cpu_options(const std::string& backend, const BackendSettings& s, const std::vector<std::string>& own) {
  if (s.conv_algorithm != "auto" && !owns(own, "conv_algorithm"))
    throw SettingError("conv_algorithm", s.conv_algorithm, "backend '" + backend + "' has no choice of convolution algorithm (dnnl has)");
  if (s.gemm_columns != 0 && !owns(own, "gemm_columns"))
    throw SettingError("gemm_columns", std::to_string(s.gemm_columns),
                       "backend '" + backend + "' runs no im2col GEMM (openblas and eigen do)");
  if (s.cudnn_api != "graph") throw SettingError("cudnn_api", s.cudnn_api, "backend '" + backend + "' is not a GPU backend");
  if (!s.cudnn_bn_activation)
    throw SettingError("cudnn_bn_activation", "off", "backend '" + backend + "' is not a GPU backend");
  if (s.cudnn_benchmark) throw SettingError("cudnn_benchmark", "", "backend '" + backend + "' is not a GPU backend");
  if (s.layout != "auto") throw SettingError("layout", s.layout, "backend '" + backend + "' is not a GPU backend");
}

}  // namespace

void check_cpu_settings(const BackendInfo& b, const BackendSettings& s) {
  if (s.precision != Precision::Fp32) {
    if (!b.precision_problem)
      throw SettingError("precision", precision_name(s.precision), "backend '" + b.name + "' computes in fp32 only");
    if (const std::string why = b.precision_problem(s.precision); !why.empty())
      throw SettingError("precision", precision_name(s.precision), "backend '" + b.name + "': " + why);
  }
  check_cpu_options(b.name, s, b.own_settings);
}

void check_cpu_settings(const std::string& backend, const BackendSettings& s, const std::vector<std::string>& own) {
  if (s.precision != Precision::Fp32)
    throw SettingError("precision", precision_name(s.precision), "backend '" + backend + "' computes in fp32 only");
  check_cpu_options(backend, s, own);
}

void Backend::configure(const BackendSettings& s) { check_cpu_settings(name(), s); }

}  // namespace hpcnn
