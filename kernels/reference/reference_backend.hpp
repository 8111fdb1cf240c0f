// The reference backend: plain single-threaded C++ loops, the oracle every other backend is tested
// against. Public entry points only; the operators live in ops.hpp (private to this folder).
#pragma once

#include <memory>

#include "base/registry.hpp"
#include "engine/backend.hpp"

namespace hpcnn {

// A fresh reference backend (tests construct it directly; the registry calls this too).
std::unique_ptr<Backend> make_reference_backend();

// Adds "reference" to the backend registry (called by kernels/registry.cpp).
void register_reference_backend(Registry<BackendInfo>& registry);

}  // namespace hpcnn
