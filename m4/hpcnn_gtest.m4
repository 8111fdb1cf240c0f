# hpcnn_gtest.m4: HPCNN_CHECK_GTEST, GoogleTest with gtest_main, needed by `make check` only.
# Tries pkg-config gtest_main, then DIR/include + DIR/lib(64), then the default search paths.
# When it is missing configure warns (an error only with --with-gtest) and `make check` stops
# with a message. Sets GTEST_CPPFLAGS, GTEST_LDFLAGS, GTEST_LIBS and GTEST_MAIN_LIBS (the
# libraries a test binary links, library folders included), HAVE_GTEST.
m4_define([hpcnn_gtest_prog], [[#include <gtest/gtest.h>
TEST(Conftest, Links) { EXPECT_EQ(1, 1); }]])
dnl The probe has no main(): it must come from gtest_main.
m4_define([HPCNN_GTEST_TRY], [HPCNN_TRY([GTEST], [$1], [$2], [$3], [$4], [hpcnn_gtest_prog], [nomain])])

AC_DEFUN([HPCNN_CHECK_GTEST], [
HPCNN_WITH([gtest], [GTEST], [GoogleTest, for make check])
AS_IF([test "$hpcnn_GTEST_want" != no], [
  HPCNN_PKG_CONFIG([gtest_main], [$hpcnn_GTEST_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [HPCNN_GTEST_TRY([pkg-config gtest_main], [$hpcnn_split_cppflags], [$hpcnn_split_ldflags],
       [$hpcnn_split_libs])])
  AS_IF([test -n "$hpcnn_GTEST_dir"], [
    HPCNN_LIBDIR([$hpcnn_GTEST_dir])
    HPCNN_GTEST_TRY([$hpcnn_GTEST_dir], [-I$hpcnn_GTEST_dir/include], [-L$hpcnn_libdir],
      [-lgtest_main -lgtest -lpthread])
  ], [
    HPCNN_GTEST_TRY([system (-lgtest_main)], [], [], [-lgtest_main -lgtest -lpthread])
  ])
])
AS_IF([test "$hpcnn_have_GTEST" != yes && test "$hpcnn_GTEST_want" = check],
  [AC_MSG_WARN([GoogleTest not found: `make check' will not work (Debian/Ubuntu: apt-get install libgtest-dev)])])
HPCNN_DEP_DONE([GTEST], [GoogleTest], [gtest/gtest.h and libgtest_main], [Debian/Ubuntu: libgtest-dev])
GTEST_MAIN_LIBS=`echo $GTEST_LDFLAGS $GTEST_LIBS`
AC_SUBST([GTEST_MAIN_LIBS])
])
