# hpcnn_versions.m4: HPCNN_CHECK_VERSIONS, the versions of the libraries hpcnn is built and tested
# with: HDF5 1.10 to 1.14 (its C API and file format as hpcnn uses them), oneDNN 2.6
# to 3.x (kernels/dnnl/compat.hpp handles the API change between them). configure stops with one line
# naming the version found and the range, rather than a build failing (or, worse, succeeding)
# somewhere else. Run after HPCNN_CHECK_HDF5 and HPCNN_CHECK_DNNL, with the flags they found.

# HPCNN_VERSION_RANGE(VAR, label, header, major, minor, lowest, highest, range-text, way-out)
# ------------------------------------------------------------------------------------------
# When VAR was found: reads the macros major and minor from header with VAR's flags (and MPI's,
# for a parallel HDF5), and stops unless lowest <= major*1000+minor <= highest.
AC_DEFUN([HPCNN_VERSION_RANGE], [
AS_IF([test "$hpcnn_have_$1" = yes], [
  hpcnn_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS $$1_CPPFLAGS $MPI_CPPFLAGS -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1"
  AC_MSG_CHECKING([the version of $2])
  AC_COMPUTE_INT([hpcnn_vmajor], [$4], [[#include <$3>]], [hpcnn_vmajor=])
  AC_COMPUTE_INT([hpcnn_vminor], [$5], [[#include <$3>]], [hpcnn_vminor=])
  CPPFLAGS=$hpcnn_save_CPPFLAGS
  AS_IF([test -z "$hpcnn_vmajor" || test -z "$hpcnn_vminor"],
    [AC_MSG_ERROR([$2 ($hpcnn_$1_where): $4 and $5 not readable from $3 (see config.log); hpcnn supports $8])])
  AC_MSG_RESULT([$hpcnn_vmajor.$hpcnn_vminor])
  hpcnn_v=`expr $hpcnn_vmajor \* 1000 + $hpcnn_vminor`
  AS_IF([test "$hpcnn_v" -lt $6 || test "$hpcnn_v" -gt $7],
    [AC_MSG_ERROR([$2 $hpcnn_vmajor.$hpcnn_vminor found ($hpcnn_$1_where): hpcnn supports $8$9])])
])
])

AC_DEFUN([HPCNN_CHECK_VERSIONS], [
HPCNN_VERSION_RANGE([HDF5], [HDF5], [hdf5.h], [H5_VERS_MAJOR], [H5_VERS_MINOR], [1010], [1014],
  [HDF5 1.10 to 1.14], [ (--with-hdf5=DIR picks another)])
HPCNN_VERSION_RANGE([DNNL], [oneDNN], [oneapi/dnnl/dnnl_version.h], [DNNL_VERSION_MAJOR],
  [DNNL_VERSION_MINOR], [2006], [3999], [oneDNN 2.6 to 3.x],
  [ (--with-dnnl=DIR picks another, --without-dnnl builds without the dnnl backend)])
])
