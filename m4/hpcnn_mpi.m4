# hpcnn_mpi.m4: HPCNN_CHECK_MPI, the MPI C API (required). hpcnn calls only the C API, from C++.
# Tries, in order: pkg-config ompi-c / mpi-c, the compiler wrapper's flags (Open MPI's
# --showme, MPICH's and Intel MPI's -compile_info/-link_info), and plain -lmpi, which also
# covers CXX=mpicxx. With --with-mpi=DIR only DIR is searched. MPICC=WRAPPER (e.g.
# MPICC=mpicc.mpich, for Debian's second MPI) takes that wrapper's flags and nothing else.
# Sets MPI_CPPFLAGS, MPI_LDFLAGS, MPI_LIBS, HAVE_MPI, and MPIEXEC (the launcher, for tests:
# the one beside MPICC's wrapper, with the same suffix, when MPICC is given).

# HPCNN_MPI_WRAPPER_FLAGS(wrapper): sets hpcnn_split_* from a compiler wrapper, or fails
# (hpcnn_wrapper_ok=no).
AC_DEFUN([HPCNN_MPI_WRAPPER_FLAGS], [
hpcnn_wrapper_ok=no
AS_IF([hpcnn_c=`$1 --showme:compile 2>/dev/null` && hpcnn_l=`$1 --showme:link 2>/dev/null`],
  [hpcnn_wrapper_ok=yes],
  [AS_IF([hpcnn_c=`$1 -compile_info 2>/dev/null` && hpcnn_l=`$1 -link_info 2>/dev/null`],
     [hpcnn_wrapper_ok=yes])])
AS_IF([test $hpcnn_wrapper_ok = yes], [
  dnl Only the C API: drop Open MPI's C++ bindings library.
  dnl MPICH's -compile_info prints the link flags too: each flag once.
  HPCNN_SPLIT_FLAGS([`echo $hpcnn_c $hpcnn_l | tr ' ' '\n' | awk '!seen@<:@@S|@0@:>@++' | tr '\n' ' '`])
  hpcnn_split_libs=`echo " $hpcnn_split_libs " | sed 's/ -lmpi_cxx / /g; s/ -lmpicxx / /g'`
])
])

m4_define([hpcnn_mpi_prog], [[#include <mpi.h>]])
m4_define([hpcnn_mpi_body], [[int n = 0; MPI_Init(0, 0); MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); MPI_Finalize();]])

AC_DEFUN([HPCNN_CHECK_MPI], [
dnl The probes (like Makefile.am's AM_CPPFLAGS) leave out the deprecated MPI C++ bindings.
hpcnn_mpi_c_only="-DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1"
HPCNN_WITH([mpi], [MPI], [MPI installation], [(required; default: the usual places)])
AC_ARG_VAR([MPICC], [MPI C compiler wrapper whose flags to use (e.g. mpicc.mpich); only it is tried])
AS_IF([test -n "$MPICC"], [
  hpcnn_wrapper_path=`command -v "$MPICC" 2>/dev/null` ||
    AC_MSG_ERROR([MPICC=$MPICC: no such program])
  HPCNN_MPI_WRAPPER_FLAGS([$hpcnn_wrapper_path])
  AS_IF([test $hpcnn_wrapper_ok = no],
    [AC_MSG_ERROR([MPICC=$MPICC: prints no flags with --showme:compile nor -compile_info])])
  HPCNN_TRY([MPI], [MPICC=$MPICC], [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs],
    [hpcnn_mpi_prog], [hpcnn_mpi_body], [$hpcnn_mpi_c_only])
  AS_IF([test "$hpcnn_have_MPI" != yes],
    [AC_MSG_ERROR([MPICC=$MPICC: its flags do not build an MPI program (see config.log)])])
  dnl mpicc.mpich -> mpiexec.mpich beside it: the launcher of the same MPI.
  hpcnn_mpi_suffix=`basename "$hpcnn_wrapper_path" | sed 's/^mpi@<:@a-z@:>@*//'`
  hpcnn_mpi_bindir=`dirname "$hpcnn_wrapper_path"`
  AS_IF([test -z "$MPIEXEC"], [for hpcnn_l in mpiexec mpirun; do
    AS_IF([test -z "$MPIEXEC" && test -x "$hpcnn_mpi_bindir/$hpcnn_l$hpcnn_mpi_suffix"],
      [MPIEXEC=$hpcnn_mpi_bindir/$hpcnn_l$hpcnn_mpi_suffix])
  done])
])
for hpcnn_mod in ompi-c mpi-c; do
  HPCNN_PKG_CONFIG([$hpcnn_mod], [$hpcnn_MPI_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [HPCNN_TRY([MPI], [pkg-config $hpcnn_mod],
       [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs],
       [hpcnn_mpi_prog], [hpcnn_mpi_body], [$hpcnn_mpi_c_only])])
done
for hpcnn_wrapper in mpicc mpicxx mpiicc; do
  AS_IF([test "$hpcnn_have_MPI" != yes], [
    AS_IF([test -n "$hpcnn_MPI_dir"],
      [hpcnn_wrapper_path=$hpcnn_MPI_dir/bin/$hpcnn_wrapper
       test -x "$hpcnn_wrapper_path" || hpcnn_wrapper_path=],
      [hpcnn_wrapper_path=`command -v $hpcnn_wrapper 2>/dev/null` || hpcnn_wrapper_path=])
    AS_IF([test -n "$hpcnn_wrapper_path"], [HPCNN_MPI_WRAPPER_FLAGS([$hpcnn_wrapper_path])])
    AS_IF([test -n "$hpcnn_wrapper_path" && test $hpcnn_wrapper_ok = yes],
      [HPCNN_TRY([MPI], [$hpcnn_wrapper_path],
         [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs],
         [hpcnn_mpi_prog], [hpcnn_mpi_body], [$hpcnn_mpi_c_only])])
  ])
done
AS_IF([test -n "$hpcnn_MPI_dir"], [
  HPCNN_LIBDIR([$hpcnn_MPI_dir])
  HPCNN_TRY([MPI], [$hpcnn_MPI_dir], [-I$hpcnn_MPI_dir/include], [-L$hpcnn_libdir], [-lmpi],
    [hpcnn_mpi_prog], [hpcnn_mpi_body], [$hpcnn_mpi_c_only])
], [
  HPCNN_TRY([MPI], [the compiler ($CXX)], [], [], [], [hpcnn_mpi_prog], [hpcnn_mpi_body], [$hpcnn_mpi_c_only])
  HPCNN_TRY([MPI], [-lmpi], [], [], [-lmpi], [hpcnn_mpi_prog], [hpcnn_mpi_body], [$hpcnn_mpi_c_only])
])
HPCNN_DEP_DONE([MPI], [MPI], [mpi.h and libmpi], [Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin], [required])
AC_ARG_VAR([MPIEXEC], [MPI launcher used by the tests (default: mpiexec found next to MPI)])
hpcnn_mpi_path=$PATH
AS_IF([test -n "$hpcnn_MPI_dir"], [hpcnn_mpi_path=$hpcnn_MPI_dir/bin:$PATH])
AC_PATH_PROGS([MPIEXEC], [mpiexec mpirun], [], [$hpcnn_mpi_path])
])
