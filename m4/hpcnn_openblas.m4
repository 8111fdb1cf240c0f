# hpcnn_openblas.m4: HPCNN_CHECK_OPENBLAS, OpenBLAS through its CBLAS interface. Optional.
# Tries pkg-config openblas, then DIR (include/ or include/openblas/), or without DIR the
# usual places, Debian's /usr/include/<multiarch>/openblas-pthread among them.
# The probe calls an OpenBLAS-only function, so another BLAS behind cblas.h does not pass.
# Sets OPENBLAS_CPPFLAGS, OPENBLAS_LDFLAGS, OPENBLAS_LIBS, HAVE_OPENBLAS.
m4_define([hpcnn_openblas_prog], [[#include <cblas.h>]])
m4_define([hpcnn_openblas_body], [[float a = 1, b = 2, c = 0;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
  return openblas_get_num_threads() < 0;]])
m4_define([hpcnn_openblas_try], [HPCNN_TRY([OPENBLAS], [$1], [$2], [$3], [$4],
  [hpcnn_openblas_prog], [hpcnn_openblas_body])])

AC_DEFUN([HPCNN_CHECK_OPENBLAS], [
HPCNN_WITH([openblas], [OPENBLAS], [OpenBLAS (CBLAS)])
AS_IF([test "$hpcnn_OPENBLAS_want" != no], [
  HPCNN_PKG_CONFIG([openblas], [$hpcnn_OPENBLAS_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [hpcnn_openblas_try([pkg-config openblas],
       [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs])])
  AS_IF([test -n "$hpcnn_OPENBLAS_dir"], [
    HPCNN_LIBDIR([$hpcnn_OPENBLAS_dir])
    for hpcnn_inc in "$hpcnn_OPENBLAS_dir/include" "$hpcnn_OPENBLAS_dir/include/openblas"; do
      AS_IF([test -f "$hpcnn_inc/cblas.h"],
        [hpcnn_openblas_try([$hpcnn_OPENBLAS_dir], [-I$hpcnn_inc], [-L$hpcnn_libdir], [-lopenblas])])
    done
  ], [
      for hpcnn_inc in /usr/include/$hpcnn_multiarch/openblas-pthread /usr/include/$hpcnn_multiarch/openblas-openmp \
                     /usr/include/openblas /usr/include/$hpcnn_multiarch /usr/include; do
      AS_IF([test -f "$hpcnn_inc/cblas.h"], [
        hpcnn_lib=`echo "$hpcnn_inc" | sed 's,/include/,/lib/,'`
        hpcnn_ld=
        AS_IF([test "$hpcnn_lib" != "$hpcnn_inc" && test -d "$hpcnn_lib"], [hpcnn_ld=-L$hpcnn_lib])
        hpcnn_openblas_try([$hpcnn_inc], [-I$hpcnn_inc], [$hpcnn_ld], [-lopenblas])])
    done
  ])
])
HPCNN_DEP_DONE([OPENBLAS], [OpenBLAS], [cblas.h and libopenblas], [Debian/Ubuntu: libopenblas-dev])
])
