// Backend registry: backends register themselves by name (builtin_backends.cpp calls them all).
#include <algorithm>
#include <string>

#include "engine/backend.hpp"
#include "engine/errors.hpp"

namespace hpcnn {

void register_builtin_backends();  // builtin_backends.cpp

namespace {
std::vector<BackendInfo>& registry() {
  static std::vector<BackendInfo> list;
  return list;
}
bool& builtins_registered() {
  static bool done = false;
  return done;
}
}  // namespace

void register_backend(BackendInfo info) {
  auto& list = registry();
  auto same = [&](const BackendInfo& b) { return b.name == info.name; };
  if (std::find_if(list.begin(), list.end(), same) != list.end()) return;
  list.push_back(std::move(info));
}

const std::vector<BackendInfo>& backends() {
  if (!builtins_registered()) {
    builtins_registered() = true;
    register_builtin_backends();
  }
  return registry();
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  std::string available;
  for (const BackendInfo& b : backends()) {
    if (b.name == name) return b.create();
    available += (available.empty() ? "" : ", ") + b.name;
  }
  throw UsageError("unknown backend '" + name + "' (available: " + available + ")");
}

void check_thread_limit(const BackendInfo& backend, int n) {
  if (n <= 0 || backend.max_threads.allows(n)) return;
  throw UsageError(std::string("--threads ")
                       .append(std::to_string(n))
                       .append(": backend '")
                       .append(backend.name)
                       .append("' accepts at most ")
                       .append(std::to_string(backend.max_threads.at_most))
                       .append(" threads"));
}

}  // namespace hpcnn

namespace hpcnn {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Tf32: return "tf32";
    case Precision::Bf16: return "bf16";
  }
  return "?";
}

void Backend::configure(const BackendSettings& s) {
  if (s.precision != Precision::Fp32)
    throw UsageError("--precision " + std::string(precision_name(s.precision)) + ": backend '" + name() +
                     "' computes in fp32 only (tf32 and bf16 need a GPU backend)");
  if (s.cudnn_benchmark) throw UsageError("--cudnn-benchmark: backend '" + name() + "' is not cuda");
  if (s.layout != "auto") throw UsageError("--layout " + s.layout + ": backend '" + name() + "' has no layout choice");
}

}  // namespace hpcnn
