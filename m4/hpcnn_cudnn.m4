# hpcnn_cudnn.m4: HPCNN_CHECK_CUDNN, cuDNN (needs HPCNN_CHECK_CUDA). Optional.
# Looks in DIR, else in the CUDA folder and the default search paths.
# Sets CUDNN_CPPFLAGS, CUDNN_LDFLAGS, CUDNN_LIBS (-lcudnn), HAVE_CUDNN.
m4_define([hpcnn_cudnn_prog], [[#include <cudnn.h>]])
m4_define([hpcnn_cudnn_body], [[cudnnHandle_t h; return cudnnGetVersion() == 0 || cudnnCreate(&h) < 0;]])

AC_DEFUN([HPCNN_CHECK_CUDNN], [
AC_REQUIRE([HPCNN_CHECK_CUDA])
HPCNN_WITH([cudnn], [CUDNN], [cuDNN (needs CUDA)])
AS_IF([test "$hpcnn_CUDNN_want" != no], [
  AS_IF([test "$hpcnn_have_CUDA" != yes], [
    hpcnn_CUDNN_why="needs CUDA"
    AS_IF([test "$hpcnn_CUDNN_want" = yes], [AC_MSG_ERROR([--with-cudnn needs CUDA, which was not found (see --with-cuda)])])
  ], [
    AS_IF([test -n "$hpcnn_CUDNN_dir"], [
      HPCNN_LIBDIR([$hpcnn_CUDNN_dir])
      HPCNN_TRY([CUDNN], [$hpcnn_CUDNN_dir], [-I$hpcnn_CUDNN_dir/include], [-L$hpcnn_libdir], [-lcudnn],
        [hpcnn_cudnn_prog], [hpcnn_cudnn_body], [$CUDA_CPPFLAGS], [$CUDA_LDFLAGS $CUDA_LIBS])
    ], [
      HPCNN_TRY([CUDNN], [$CUDA_HOME], [], [], [-lcudnn],
        [hpcnn_cudnn_prog], [hpcnn_cudnn_body], [$CUDA_CPPFLAGS], [$CUDA_LDFLAGS $CUDA_LIBS])
    ])
  ])
])
HPCNN_DEP_DONE([CUDNN], [cuDNN], [cudnn.h and libcudnn], [NVIDIA cuDNN])
])
