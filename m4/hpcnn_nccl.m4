# hpcnn_nccl.m4: HPCNN_CHECK_NCCL, NCCL (needs HPCNN_CHECK_CUDA). Optional.
# Looks in DIR, else in the CUDA folder and the default search paths.
# Sets NCCL_CPPFLAGS, NCCL_LDFLAGS, NCCL_LIBS (-lnccl), HAVE_NCCL.
m4_define([hpcnn_nccl_prog], [[#include <nccl.h>]])
m4_define([hpcnn_nccl_body], [[int v = 0; ncclUniqueId id; (void) id; return ncclGetVersion(&v) != ncclSuccess;]])

AC_DEFUN([HPCNN_CHECK_NCCL], [
AC_REQUIRE([HPCNN_CHECK_CUDA])
HPCNN_WITH([nccl], [NCCL], [NCCL (needs CUDA)])
AS_IF([test "$hpcnn_NCCL_want" != no], [
  AS_IF([test "$hpcnn_have_CUDA" != yes], [
    hpcnn_NCCL_why="needs CUDA"
    AS_IF([test "$hpcnn_NCCL_want" = yes], [AC_MSG_ERROR([--with-nccl needs CUDA, which was not found (see --with-cuda)])])
  ], [
    AS_IF([test -n "$hpcnn_NCCL_dir"], [
      HPCNN_LIBDIR([$hpcnn_NCCL_dir])
      HPCNN_TRY([NCCL], [$hpcnn_NCCL_dir], [-I$hpcnn_NCCL_dir/include], [-L$hpcnn_libdir], [-lnccl],
        [hpcnn_nccl_prog], [hpcnn_nccl_body], [$CUDA_CPPFLAGS], [$CUDA_LDFLAGS $CUDA_LIBS])
    ], [
      HPCNN_TRY([NCCL], [$CUDA_HOME], [], [], [-lnccl],
        [hpcnn_nccl_prog], [hpcnn_nccl_body], [$CUDA_CPPFLAGS], [$CUDA_LDFLAGS $CUDA_LIBS])
    ])
  ])
])
HPCNN_DEP_DONE([NCCL], [NCCL], [nccl.h and libnccl], [NVIDIA NCCL])
])
