# hpcnn_cxx.m4: the C++ compiler flags hpcnn builds with.
#   HPCNN_CXX_FLAGS sets HPCNN_CXXSTD (-std=c++20, required) and HPCNN_CXXFLAGS:
#     -std=c++20 -Wall -Wextra -O3 [-march=native]   (default)
#     -std=c++20 -Wall -Wextra -O0 -g                (--enable-debug)
#   and TEST_OPTFLAGS (-O1, empty with --enable-debug), which the tests' own sources add.
#   --disable-native drops -march=native (-mcpu=native where the compiler has no -march=native).
#   --enable-asan sets ASAN_CXXFLAGS and ASAN_LDFLAGS (-fsanitize=address,undefined) for the
#   tests to use; the executables never get them.
# The user's CXXFLAGS come last on every compile line and so override these.

# HPCNN_CXX_TRY_FLAG(flag, [action-if-ok], [action-if-not]): links a C++ program with flag.
AC_DEFUN([HPCNN_CXX_TRY_FLAG], [
AC_MSG_CHECKING([whether $CXX accepts $1])
hpcnn_save_CXXFLAGS=$CXXFLAGS
CXXFLAGS="$CXXFLAGS $HPCNN_CXXSTD $1"
AC_LANG_PUSH([C++])
AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [hpcnn_flag_ok=yes], [hpcnn_flag_ok=no])
AC_LANG_POP([C++])
CXXFLAGS=$hpcnn_save_CXXFLAGS
AC_MSG_RESULT([$hpcnn_flag_ok])
AS_IF([test $hpcnn_flag_ok = yes], [$2], [$3])
])

AC_DEFUN([HPCNN_CXX_FLAGS], [
AC_REQUIRE([AC_PROG_CXX])
AC_ARG_ENABLE([debug],
  [AS_HELP_STRING([--enable-debug], [build with -O0 -g instead of -O3])],
  [], [enable_debug=no])
AC_ARG_ENABLE([native],
  [AS_HELP_STRING([--disable-native], [do not tune for the build machine (-march=native)])],
  [], [enable_native=yes])
AC_ARG_ENABLE([asan],
  [AS_HELP_STRING([--enable-asan],
    [set ASAN_CXXFLAGS/ASAN_LDFLAGS to -fsanitize=address,undefined for the tests])],
  [], [enable_asan=no])

dnl C++20 is required: probe the features hpcnn uses, not the value of __cplusplus.
HPCNN_CXXSTD=-std=c++20
AC_MSG_CHECKING([whether $CXX supports C++20 with $HPCNN_CXXSTD])
hpcnn_save_CXXFLAGS=$CXXFLAGS
CXXFLAGS="$CXXFLAGS $HPCNN_CXXSTD"
AC_LANG_PUSH([C++])
AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <concepts>
#include <span>
#include <string_view>
#include <bit>
template <std::integral T> constexpr T twice(T x) { return 2 * x; }
struct point { int x; int y; };]],
  [[int a[3] = {1, 2, 3}; std::span<int> s(a); point p{.x = 1, .y = 2};
    constexpr std::string_view v = "abc"; static_assert(v.starts_with("a"));
    return twice(static_cast<int>(s.size())) + p.y - 8 + std::popcount(0u);]])],
  [hpcnn_cxx20=yes], [hpcnn_cxx20=no])
AC_LANG_POP([C++])
CXXFLAGS=$hpcnn_save_CXXFLAGS
AC_MSG_RESULT([$hpcnn_cxx20])
AS_IF([test $hpcnn_cxx20 != yes],
  [AC_MSG_ERROR([$CXX does not support C++20 ($HPCNN_CXXSTD); use GCC >= 10 or Clang >= 12, e.g. ./configure CXX=g++-12])])

HPCNN_CXXFLAGS="$HPCNN_CXXSTD -Wall -Wextra"
# The tests' own sources (tests/Makefile.inc, TEST_CXXFLAGS) are compiled at -O1: they call the
# libraries, which carry the build's -O3, and -O1 compiles them in well under -O3's time.
AS_IF([test "x$enable_debug" = xyes],
  [HPCNN_CXXFLAGS="$HPCNN_CXXFLAGS -O0 -g"; TEST_OPTFLAGS=],
  [HPCNN_CXXFLAGS="$HPCNN_CXXFLAGS -O3"; TEST_OPTFLAGS=-O1])
hpcnn_native=no
AS_IF([test "x$enable_native" != xno], [
  HPCNN_CXX_TRY_FLAG([-march=native], [hpcnn_native=-march=native],
    [HPCNN_CXX_TRY_FLAG([-mcpu=native], [hpcnn_native=-mcpu=native])])
  AS_IF([test $hpcnn_native = no],
    [AC_MSG_WARN([$CXX accepts neither -march=native nor -mcpu=native: building generic code])],
    [HPCNN_CXXFLAGS="$HPCNN_CXXFLAGS $hpcnn_native"])
])

ASAN_CXXFLAGS=
ASAN_LDFLAGS=
AS_IF([test "x$enable_asan" = xyes], [
  HPCNN_CXX_TRY_FLAG([-fsanitize=address,undefined -fno-omit-frame-pointer],
    [ASAN_CXXFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
     ASAN_LDFLAGS="-fsanitize=address,undefined"],
    [AC_MSG_ERROR([--enable-asan: $CXX cannot build with -fsanitize=address,undefined])])
])
# The damaged-result-file test (tests/test_result_damage) is always built with the sanitizers when
# the compiler has them, --enable-asan or not: reading hostile files is where memory errors hide.
SANITIZE_CXXFLAGS=
SANITIZE_LDFLAGS=
HPCNN_CXX_TRY_FLAG([-fsanitize=address,undefined -fno-omit-frame-pointer],
  [SANITIZE_CXXFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
   SANITIZE_LDFLAGS="-fsanitize=address,undefined"],
  [AC_MSG_WARN([$CXX cannot build with -fsanitize=address,undefined: tests/test_result_damage runs uninstrumented])])
AC_SUBST([HPCNN_CXXSTD])
AC_SUBST([HPCNN_CXXFLAGS])
AC_SUBST([TEST_OPTFLAGS])
AC_SUBST([ASAN_CXXFLAGS])
AC_SUBST([ASAN_LDFLAGS])
AC_SUBST([SANITIZE_CXXFLAGS])
AC_SUBST([SANITIZE_LDFLAGS])
])
