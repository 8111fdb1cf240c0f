# hpcnn_simgrid.m4: HPCNN_CHECK_SIMGRID, SimGrid's SMPI (smpicxx and smpirun) for hpcnn-simulate's
# rank program (simulate/, built with smpicxx into simulate/hpcnn-simulate-rank.so). Optional:
# without it hpcnn-simulate is still built and says that it cannot simulate.
#   --with-simgrid[=DIR]   SMPI in DIR/bin (or on PATH); an error when it is not found
#   --without-simgrid      no simulator
# Sets SMPICXX and SMPIRUN, HAVE_SIMGRID (config.h and AM_CONDITIONAL), HPCNN_SMPIRUN (config.h: that
# smpirun, hpcnn-simulate's default) and the summary line.
AC_DEFUN([HPCNN_CHECK_SIMGRID], [
AC_REQUIRE([HPCNN_CXX_FLAGS])
HPCNN_WITH([simgrid], [SIMGRID], [SimGrid with SMPI (smpicxx, smpirun) for hpcnn-simulate])
SMPICXX=
SMPIRUN=
AS_IF([test "$hpcnn_SIMGRID_want" != no], [
  hpcnn_simgrid_path=$PATH
  AS_IF([test -n "$hpcnn_SIMGRID_dir"], [hpcnn_simgrid_path=$hpcnn_SIMGRID_dir/bin])
  AC_PATH_PROG([SMPICXX], [smpicxx], [], [$hpcnn_simgrid_path])
  AC_PATH_PROG([SMPIRUN], [smpirun], [], [$hpcnn_simgrid_path])
  AS_IF([test -n "$SMPICXX" && test -n "$SMPIRUN"], [
    AC_MSG_CHECKING([whether $SMPICXX builds a C++20 rank program])
    cat > conftest_smpi.cpp <<_HPCNN_EOF
#include <mpi.h>
#include <smpi/smpi.h>
#include <span>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  void* p = smpi_shared_malloc(64, __FILE__, __LINE__);
  smpi_execute_benched(0.0);
  smpi_shared_free(p);
  MPI_Finalize();
  return 0;
}
_HPCNN_EOF
    AS_IF([$SMPICXX $HPCNN_CXXSTD -fno-gnu-unique conftest_smpi.cpp -o conftest_smpi.so >&AS_MESSAGE_LOG_FD 2>&1],
      [hpcnn_have_SIMGRID=yes], [hpcnn_have_SIMGRID=no])
    AC_MSG_RESULT([$hpcnn_have_SIMGRID])
    rm -f conftest_smpi.cpp conftest_smpi.so
  ])
])
AS_IF([test "$hpcnn_have_SIMGRID" = yes], [
  AC_DEFINE([HAVE_SIMGRID], [1], [Define to 1 if hpcnn-simulate's rank program is built with SimGrid's SMPI])
  # The smpirun of the SimGrid the rank program is built against: hpcnn-simulate's default
  # --smpirun (another version's smpirun cannot load the rank program).
  AC_DEFINE_UNQUOTED([HPCNN_SMPIRUN], ["$SMPIRUN"], [SimGrid's smpirun that hpcnn-simulate's rank program is built for])
  hpcnn_simgrid_summary="$SMPICXX (hpcnn-simulate)"
], [
  SMPICXX= SMPIRUN=
  AS_IF([test "$hpcnn_SIMGRID_want" = yes],
    [AC_MSG_ERROR([SimGrid was requested but smpicxx/smpirun were not found or do not build a rank program (Debian/Ubuntu: apt-get install libsimgrid-dev; see config.log)])])
  AS_CASE([$hpcnn_SIMGRID_want],
    [no], [hpcnn_simgrid_summary="disabled (--without-simgrid)"],
    [hpcnn_simgrid_summary="not found; Debian/Ubuntu: apt-get install libsimgrid-dev"])
])
AC_SUBST([SMPICXX])
AC_SUBST([SMPIRUN])
AM_CONDITIONAL([HAVE_SIMGRID], [test "$hpcnn_have_SIMGRID" = yes])
HPCNN_SUMMARY_DEP([SimGrid SMPI], [$hpcnn_have_SIMGRID], [$hpcnn_simgrid_summary])
])
