// Backend registry: backends register themselves by name (builtin_backends.cpp calls them all).
#include <algorithm>

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

}  // namespace hpcnn
