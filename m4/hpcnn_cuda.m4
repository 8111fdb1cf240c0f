# hpcnn_cuda.m4: HPCNN_CHECK_CUDA, the CUDA runtime and cuBLAS, plus nvcc. Optional.
# Without DIR it looks in $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /opt/cuda and next to the
# nvcc found on PATH. Probes cuda_runtime.h + libcudart and cublas_v2.h + libcublas by linking
# (no GPU is needed for that). CUDA_LDFLAGS carries -Wl,-rpath to the CUDA library folder, where
# the cuda backend also finds libcublas at run time; CUDA_LIBS links only the runtime.
# Sets CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS, CUDA_HOME, NVCC, NVCCFLAGS, HAVE_CUDA.
# cuDNN (hpcnn_cudnn.m4) and NCCL (hpcnn_nccl.m4) build on this one.
m4_define([hpcnn_cuda_prog], [[#include <cuda_runtime.h>
#include <cublas_v2.h>]])
m4_define([hpcnn_cuda_body], [[int n = 0; cudaGetDeviceCount(&n);
  cublasHandle_t h; if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) cublasDestroy(h);]])

AC_DEFUN([HPCNN_CHECK_CUDA], [
HPCNN_WITH([cuda], [CUDA], [CUDA toolkit with cuBLAS, DIR defaults to /usr/local/cuda])
AC_ARG_VAR([NVCC], [CUDA compiler (default: DIR/bin/nvcc)])
AC_ARG_VAR([NVCCFLAGS], [flags for nvcc (default: -O3 -std=c++20)])
CUDA_HOME=
AS_IF([test "$hpcnn_CUDA_want" != no], [
  AS_IF([test -n "$hpcnn_CUDA_dir"], [hpcnn_dirs=$hpcnn_CUDA_dir], [
    hpcnn_nvcc_dir=
    hpcnn_nvcc=`command -v nvcc 2>/dev/null` && hpcnn_nvcc_dir=`dirname "$hpcnn_nvcc"`/..
    hpcnn_dirs="$CUDA_HOME $CUDA_PATH /usr/local/cuda /opt/cuda $hpcnn_nvcc_dir"
  ])
  for hpcnn_d in $hpcnn_dirs; do
    AS_IF([test "$hpcnn_have_CUDA" != yes && test -f "$hpcnn_d/include/cuda_runtime.h"], [
      HPCNN_LIBDIR([$hpcnn_d])
      HPCNN_TRY([CUDA], [$hpcnn_d], [-I$hpcnn_d/include], [-L$hpcnn_libdir],
        [-lcublas -lcudart], [hpcnn_cuda_prog], [hpcnn_cuda_body])
      AS_IF([test "$hpcnn_have_CUDA" = yes], [CUDA_HOME=$hpcnn_d])
    ])
  done
  AS_IF([test "$hpcnn_have_CUDA" = yes && test -z "$NVCC"], [
    AC_PATH_PROG([NVCC], [nvcc], [], [$CUDA_HOME/bin:$PATH])
  ])
  AS_IF([test "$hpcnn_have_CUDA" = yes], [
    # cuBLAS is loaded at run time by the cuda backend (kernels/cuda/cublas_library.cpp), not
    # linked: linked, its start-up memory would be in every process, GPU or not.
    CUDA_LIBS=-lcudart
    hpcnn_CUDA_where="$CUDA_HOME"
    AS_IF([test -z "$NVCC"], [hpcnn_CUDA_where="$CUDA_HOME (no nvcc: CUDA code cannot be built)"])
  ])
])
: ${NVCCFLAGS="-O3 -std=c++20"}
AC_ARG_VAR([CUDA_ARCH], [GPU compute capabilities to build for, without dots (default: "80 90"; PTX of the last is embedded too)])
: ${CUDA_ARCH="80 90"}
NVCC_ARCHFLAGS=
hpcnn_last_arch=
for hpcnn_a in $CUDA_ARCH; do
  NVCC_ARCHFLAGS="$NVCC_ARCHFLAGS -gencode arch=compute_$hpcnn_a,code=sm_$hpcnn_a"
  hpcnn_last_arch=$hpcnn_a
done
AS_IF([test -n "$hpcnn_last_arch"],
  [NVCC_ARCHFLAGS="$NVCC_ARCHFLAGS -gencode arch=compute_$hpcnn_last_arch,code=compute_$hpcnn_last_arch"])
AC_SUBST([NVCC_ARCHFLAGS])
HPCNN_DEP_DONE([CUDA], [CUDA], [cuda_runtime.h, cublas_v2.h, libcudart and libcublas],
  [NVIDIA CUDA toolkit])
AC_SUBST([CUDA_HOME])
])
