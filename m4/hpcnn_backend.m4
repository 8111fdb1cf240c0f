# hpcnn_backend.m4: HPCNN_BACKEND(name, condition), one line in configure.ac per backend folder.
# When the shell condition holds (e.g. test "$hpcnn_have_OPENBLAS" = yes), the backend in
# kernels/<name>/ is built as its own library: config.h gets HAVE_<NAME>_BACKEND (which
# kernels/registry.cpp uses to register it) and AM_CONDITIONAL BUILD_<NAME>_BACKEND is true
# (kernels/Makefile.inc includes kernels/<name>/Makefile.inc under it). One name per condition:
# the CUDA code is the cuda backend's (BUILD_CUDA_BACKEND, HAVE_CUDA_BACKEND).
# The list of built backends goes into the configure summary (hpcnn_backends).
AC_DEFUN([HPCNN_BACKEND], [
m4_pushdef([HPCNN_UP], m4_toupper([$1]))
AS_IF([$2], [
  AC_DEFINE([HAVE_]HPCNN_UP[_BACKEND], [1], [Define to 1 if the $1 backend is built])
  hpcnn_backends="$hpcnn_backends $1"
  hpcnn_build_[]HPCNN_UP[]_backend=yes
], [hpcnn_build_[]HPCNN_UP[]_backend=no])
AM_CONDITIONAL([BUILD_]HPCNN_UP[_BACKEND], [test "$hpcnn_build_]HPCNN_UP[_backend" = yes])
m4_popdef([HPCNN_UP])
])
