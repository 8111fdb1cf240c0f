# hpcnn_hdf5.m4: HPCNN_CHECK_HDF5, the HDF5 C API (required: every result file is HDF5).
# Tries, in order: pkg-config hdf5, the h5cc / h5pcc wrapper (-shlib -show), Debian's serial
# layout (/usr/include/hdf5/serial), plain -lhdf5. MPI's flags are added to every probe so
# that a parallel HDF5 (whose H5public.h includes mpi.h) works too. Needs HPCNN_CHECK_MPI.
# Sets HDF5_CPPFLAGS, HDF5_LDFLAGS, HDF5_LIBS, HAVE_HDF5.
m4_define([hpcnn_h5_prog], [[#include <hdf5.h>]])
m4_define([hpcnn_h5_body], [[hid_t f = H5Fcreate("conftest.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);]])
m4_define([hpcnn_h5_try], [HPCNN_TRY([HDF5], [$1], [$2], [$3], [$4],
  [hpcnn_h5_prog], [hpcnn_h5_body], [$MPI_CPPFLAGS], [$MPI_LDFLAGS $MPI_LIBS])])

AC_DEFUN([HPCNN_CHECK_HDF5], [
AC_REQUIRE([HPCNN_CHECK_MPI])
HPCNN_WITH([hdf5], [HDF5], [HDF5 installation], [(required; default: the usual places)])
for hpcnn_mod in hdf5 hdf5-serial hdf5-openmpi hdf5-mpich; do
  HPCNN_PKG_CONFIG([$hpcnn_mod], [$hpcnn_HDF5_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [hpcnn_h5_try([pkg-config $hpcnn_mod],
       [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs])])
done
for hpcnn_wrapper in h5cc h5pcc; do
  AS_IF([test "$hpcnn_have_HDF5" != yes], [
    AS_IF([test -n "$hpcnn_HDF5_dir"],
      [hpcnn_wrapper_path=$hpcnn_HDF5_dir/bin/$hpcnn_wrapper
       test -x "$hpcnn_wrapper_path" || hpcnn_wrapper_path=],
      [hpcnn_wrapper_path=`command -v $hpcnn_wrapper 2>/dev/null` || hpcnn_wrapper_path=])
    AS_IF([test -n "$hpcnn_wrapper_path" && hpcnn_w=`$hpcnn_wrapper_path -shlib -show 2>/dev/null`], [
      dnl Only the C API: leave out the high-level library.
      HPCNN_SPLIT_FLAGS([$hpcnn_w])
      hpcnn_split_libs=`echo " $hpcnn_split_libs " | sed 's/ -lhdf5_hl / /g'`
      hpcnn_h5_try([$hpcnn_wrapper_path -show],
        [$hpcnn_split_cppflags], [$hpcnn_split_ldflags], [$hpcnn_split_libs])])
  ])
done
AS_IF([test -n "$hpcnn_HDF5_dir"], [
  HPCNN_LIBDIR([$hpcnn_HDF5_dir])
  hpcnn_h5_try([$hpcnn_HDF5_dir], [-I$hpcnn_HDF5_dir/include], [-L$hpcnn_libdir], [-lhdf5])
], [
  AS_IF([test -n "$hpcnn_multiarch" && test -d /usr/include/hdf5/serial],
    [hpcnn_h5_try([/usr/include/hdf5/serial], [-I/usr/include/hdf5/serial],
       [-L/usr/lib/$hpcnn_multiarch/hdf5/serial], [-lhdf5])])
  hpcnn_h5_try([-lhdf5], [], [], [-lhdf5])
])
HPCNN_DEP_DONE([HDF5], [HDF5], [hdf5.h and libhdf5], [Debian/Ubuntu: apt-get install libhdf5-dev hdf5-tools], [required])
])
