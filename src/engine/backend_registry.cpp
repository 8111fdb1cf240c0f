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
  }
  return "?";
}

namespace {

void check_cpu_options(const std::string& backend, const BackendSettings& s) {
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
  check_cpu_options(b.name, s);
}

void check_cpu_settings(const std::string& backend, const BackendSettings& s) {
  if (s.precision != Precision::Fp32)
    throw SettingError("precision", precision_name(s.precision), "backend '" + backend + "' computes in fp32 only");
  check_cpu_options(backend, s);
}

void Backend::configure(const BackendSettings& s) { check_cpu_settings(name(), s); }

}  // namespace hpcnn
