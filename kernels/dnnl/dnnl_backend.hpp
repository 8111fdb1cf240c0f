// The oneDNN backend's public face: a factory and the registration hook called by
// kernels/registry.cpp. Everything else of kernels/dnnl/ (and every oneDNN header) stays
// private to that folder.
#pragma once

#include <memory>

#include "base/registry.hpp"
#include "engine/backend.hpp"

namespace hpcnn {

std::unique_ptr<Backend> make_dnnl_backend();
void register_dnnl_backend(Registry<BackendInfo>& registry);

}  // namespace hpcnn
