// cuBLAS, loaded when the first cuda backend is made (dlopen) rather than when the process starts.
// Loading libcublas brings libcublasLt, whose start-up code writes about 90 MiB of private memory
// in every process: every rank of a CPU-only run would carry it, and at hundreds of ranks per
// node that alone is the node's memory (docs/PERFORMANCE.md, "hpcnn at hundreds of ranks").
// The entry points keep cuBLAS's own declarations (cublas_v2.h), so a changed signature fails
// to compile here.
#pragma once

#include <cublas_v2.h>

namespace hpcnn::cuda {

// The C entry point (C++ code also sees an inline overload taking the older cudaDataType).
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                        const void*, void*, cudaDataType, int, cublasComputeType_t,
                                        cublasGemmAlgo_t);

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasGetVersion_v2) get_version = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  CublasGemmEx gemm_ex = nullptr;
};

// The library of the cuBLAS major version hpcnn was built with, loaded once. Throws RuntimeError
// naming the library and the loader's reason when it or one of its entry points is missing.
const CublasLibrary& cublas_library();

}  // namespace hpcnn::cuda
