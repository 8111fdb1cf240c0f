# hpcnn_eigen.m4: HPCNN_CHECK_EIGEN, Eigen 3 with its Tensor module (header-only). Optional.
# Tries pkg-config eigen3, then DIR/include/eigen3 and DIR/include (DIR itself for a source
# tree), or /usr/include/eigen3 and /usr/local/include/eigen3 without DIR.
# Sets EIGEN_CPPFLAGS (EIGEN_LDFLAGS and EIGEN_LIBS stay empty), HAVE_EIGEN.
m4_define([hpcnn_eigen_prog], [[#include <Eigen/Dense>
#include <unsupported/Eigen/CXX11/Tensor>]])
m4_define([hpcnn_eigen_body], [[Eigen::MatrixXf a = Eigen::MatrixXf::Ones(2, 2), b = a * a;
  Eigen::Tensor<float, 4> t(1, 2, 3, 4); t.setZero();
  return (int) (b(0, 0) + t(0, 1, 2, 3)) != 2;]])

AC_DEFUN([HPCNN_CHECK_EIGEN], [
HPCNN_WITH([eigen], [EIGEN], [Eigen 3 (with unsupported/Eigen/CXX11/Tensor)])
AS_IF([test "$hpcnn_EIGEN_want" != no], [
  HPCNN_PKG_CONFIG([eigen3], [$hpcnn_EIGEN_dir])
  AS_IF([test $hpcnn_pkg_ok = yes],
    [HPCNN_TRY([EIGEN], [pkg-config eigen3], [$hpcnn_split_cppflags], [], [],
       [hpcnn_eigen_prog], [hpcnn_eigen_body])])
  AS_IF([test -n "$hpcnn_EIGEN_dir"],
    [hpcnn_dirs="$hpcnn_EIGEN_dir/include/eigen3 $hpcnn_EIGEN_dir/include $hpcnn_EIGEN_dir"],
    [hpcnn_dirs="/usr/include/eigen3 /usr/local/include/eigen3"])
  for hpcnn_inc in $hpcnn_dirs; do
    AS_IF([test -f "$hpcnn_inc/Eigen/Dense"],
      [HPCNN_TRY([EIGEN], [$hpcnn_inc], [-I$hpcnn_inc], [], [],
         [hpcnn_eigen_prog], [hpcnn_eigen_body])])
  done
])
HPCNN_DEP_DONE([EIGEN], [Eigen], [Eigen/Dense and unsupported/Eigen/CXX11/Tensor], [Debian/Ubuntu: libeigen3-dev])
])
