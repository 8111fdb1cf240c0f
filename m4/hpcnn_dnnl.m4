# hpcnn_dnnl.m4: HPCNN_CHECK_DNNL, oneDNN (the dnnl backend). Optional.
# Tries pkg-config dnnl, then DIR/include + DIR/lib(64) (or the default search paths) with -ldnnl.
# Sets DNNL_CPPFLAGS, DNNL_LDFLAGS, DNNL_LIBS, HAVE_DNNL. oneDNN 2.6 or newer, v2 or v3 API
# (kernels/dnnl/compat.hpp); the version of the headers found goes into the configure summary.
# A prefix without pkg-config files works with --with-dnnl=DIR: PyPI's onednn-devel-cpu-gomp
# wheel installed into a venv DIR puts DIR/include/oneapi and DIR/lib/libdnnl.so there.
# Any version is found here; HPCNN_CHECK_VERSIONS (hpcnn_versions.m4) then refuses one outside 2.6
# to 3.x in one line, rather than configure going on without the backend.
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
AS_IF([test "$hpcnn_have_DNNL" = yes], [HPCNN_DNNL_VERSION])
HPCNN_DEP_DONE([DNNL], [oneDNN], [oneapi/dnnl/dnnl.hpp and libdnnl, 2.6 or newer], [Debian/Ubuntu: libdnnl-dev])
])

# HPCNN_DNNL_VERSION: appends the headers' oneDNN version (DNNL_VERSION_MAJOR.MINOR) to the
# summary's "where", so a build against a second oneDNN says which one it has.
AC_DEFUN([HPCNN_DNNL_VERSION], [
hpcnn_save_CPPFLAGS=$CPPFLAGS
CPPFLAGS="$CPPFLAGS $DNNL_CPPFLAGS"
AC_LANG_PUSH([C++])
AC_COMPUTE_INT([hpcnn_dnnl_major], [DNNL_VERSION_MAJOR], [#include <oneapi/dnnl/dnnl_version.h>], [hpcnn_dnnl_major=])
AC_COMPUTE_INT([hpcnn_dnnl_minor], [DNNL_VERSION_MINOR], [#include <oneapi/dnnl/dnnl_version.h>], [hpcnn_dnnl_minor=])
AC_LANG_POP([C++])
CPPFLAGS=$hpcnn_save_CPPFLAGS
AS_IF([test -n "$hpcnn_dnnl_major"],
  [hpcnn_DNNL_where="$hpcnn_DNNL_where (oneDNN $hpcnn_dnnl_major.$hpcnn_dnnl_minor)"])
])
