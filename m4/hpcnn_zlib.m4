# hpcnn_zlib.m4: HPCNN_CHECK_ZLIB, zlib (required: src/data/ reads gzipped MNIST/Fashion-MNIST idx
# files). Tries pkg-config zlib, then DIR, then plain -lz.
# Sets ZLIB_CPPFLAGS, ZLIB_LDFLAGS, ZLIB_LIBS, HAVE_ZLIB.
m4_define([hpcnn_zlib_prog], [[#include <zlib.h>]])
m4_define([hpcnn_zlib_body], [[z_stream s = {}; return inflateInit2(&s, 15 + 32) == Z_OK ? inflateEnd(&s) : 1;]])
m4_define([hpcnn_zlib_try], [HPCNN_TRY([ZLIB], [$1], [$2], [$3], [$4],
  [hpcnn_zlib_prog], [hpcnn_zlib_body])])

AC_DEFUN([HPCNN_CHECK_ZLIB], [
HPCNN_WITH([zlib], [ZLIB], [zlib installation], [(required; default: the usual places)])
HPCNN_PKG_CONFIG([zlib], [$hpcnn_ZLIB_dir])
AS_IF([test $hpcnn_pkg_ok = yes],
  [hpcnn_zlib_try([pkg-config zlib], [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs])])
AS_IF([test -n "$hpcnn_ZLIB_dir"], [
  HPCNN_LIBDIR([$hpcnn_ZLIB_dir])
  hpcnn_zlib_try([$hpcnn_ZLIB_dir], [-I$hpcnn_ZLIB_dir/include], [-L$hpcnn_libdir], [-lz])
], [
  hpcnn_zlib_try([-lz], [], [], [-lz])
])
HPCNN_DEP_DONE([ZLIB], [zlib], [zlib.h and libz], [Debian/Ubuntu: apt-get install zlib1g-dev], [required])
])
