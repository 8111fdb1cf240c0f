# hpcnn_dnnl.m4: HPCNN_CHECK_DNNL, oneDNN (the dnnl backend). Optional.
# Tries pkg-config dnnl, then DIR/include + DIR/lib(64) (or the default search paths) with -ldnnl.
# Sets DNNL_CPPFLAGS, DNNL_LDFLAGS, DNNL_LIBS, HAVE_DNNL.
m4_define([hpcnn_dnnl_prog], [[#include <oneapi/dnnl/dnnl.hpp>]])
m4_define([hpcnn_dnnl_body], [[dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng); s.wait(); return (int) dnnl_version()->major < 0;]])

AC_DEFUN([HPCNN_CHECK_DNNL], [
HPCNN_WITH([dnnl], [DNNL], [oneDNN, for the dnnl backend])
AS_IF([test "$hpcnn_DNNL_want" != no], [
  HPCNN_PKG_CONFIG([dnnl], [$hpcnn_DNNL_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [HPCNN_TRY([DNNL], [pkg-config dnnl], [$hpcnn_split_cppflags], [$hpcnn_split_ldflags],
       [$hpcnn_split_libs], [hpcnn_dnnl_prog], [hpcnn_dnnl_body])])
  AS_IF([test -n "$hpcnn_DNNL_dir"], [
    HPCNN_LIBDIR([$hpcnn_DNNL_dir])
    HPCNN_TRY([DNNL], [$hpcnn_DNNL_dir], [-I$hpcnn_DNNL_dir/include], [-L$hpcnn_libdir], [-ldnnl],
      [hpcnn_dnnl_prog], [hpcnn_dnnl_body])
  ], [
    HPCNN_TRY([DNNL], [system (-ldnnl)], [], [], [-ldnnl], [hpcnn_dnnl_prog], [hpcnn_dnnl_body])
  ])
])
HPCNN_DEP_DONE([DNNL], [oneDNN], [oneapi/dnnl/dnnl.hpp and libdnnl], [Debian/Ubuntu: libdnnl-dev])
])
