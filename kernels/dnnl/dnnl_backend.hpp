// The oneDNN backend's public face: a factory and the registration hook called by
// kernels/registry.cpp. Everything else of kernels/dnnl/ (and every oneDNN header) stays
// private to that folder.
#pragma once

#include <memory>
#include <string>

#include "base/registry.hpp"
#include "engine/backend.hpp"
#include "engine/sgemm.hpp"

namespace hpcnn {

std::unique_ptr<Backend> make_dnnl_backend();
void register_dnnl_backend(Registry<BackendInfo>& registry);

// oneDNN's bf16 GEMM (a matmul on bf16 A and B, fp32 C) for hpcnn-blas, registered with its
// SGEMM (kernels/gemm/dnnl_sgemm.cpp), and why this CPU cannot run it (empty: it can).
std::unique_ptr<Bf16Gemm> make_dnnl_bf16_gemm();
std::string dnnl_bf16_gemm_problem();

}  // namespace hpcnn
