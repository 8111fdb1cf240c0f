# hpcnn_mpi.m4: HPCNN_CHECK_MPI, the MPI C API (required). hpcnn calls only the C API, from C++.
# Tries, in order: pkg-config ompi-c / mpi-c, the compiler wrapper's flags (Open MPI's
# --showme, MPICH's and Intel MPI's -compile_info/-link_info), and plain -lmpi, which also
# covers CXX=mpicxx. With --with-mpi=DIR only DIR is searched.
# Sets MPI_CPPFLAGS, MPI_LDFLAGS, MPI_LIBS, HAVE_MPI, and MPIEXEC (the launcher, for tests).

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
  HPCNN_SPLIT_FLAGS([$hpcnn_c $hpcnn_l])
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
