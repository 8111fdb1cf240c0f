# hpcnn_common.m4: the shared machinery behind every m4/hpcnn_<dependency>.m4 macro.
#
# The contract of a dependency macro HPCNN_CHECK_<X> (same as UCC's and Open MPI's):
#   --with-x[=DIR]   look for X (in DIR when given); an error when X is not found
#   --without-x      do not look for X
#   (no option)      look for X in the usual places; build without X when it is not found
# On return: X_CPPFLAGS, X_LDFLAGS, X_LIBS are substituted (empty when X is missing),
# config.h has HAVE_X when X was found, AM_CONDITIONAL HAVE_X is set, the shell variable
# hpcnn_have_X is yes or no, and a line for the configure summary is recorded.
# Every candidate set of flags is tried by compiling and linking a small program.

# HPCNN_WITH(name, VAR, description, [default-text])
# -------------------------------------------------
# Declares --with-name[=DIR] and sets hpcnn_VAR_want (check | yes | no) and hpcnn_VAR_dir.
AC_DEFUN([HPCNN_WITH], [
AC_ARG_WITH([$1],
  [AS_HELP_STRING([--with-$1@<:@=DIR@:>@],
     m4_ifval([$4], [[$3 $4]], [[$3 (default: use it when found)]]))],
  [hpcnn_$2_arg=$withval], [hpcnn_$2_arg=check])
hpcnn_$2_dir=
hpcnn_have_$2=no
hpcnn_$2_where=
$2_CPPFLAGS=
$2_LDFLAGS=
$2_LIBS=
AS_CASE([$hpcnn_$2_arg],
  [check], [hpcnn_$2_want=check],
  [no],    [hpcnn_$2_want=no],
  [yes],   [hpcnn_$2_want=yes],
  [hpcnn_$2_want=yes
   hpcnn_$2_dir=$hpcnn_$2_arg
   AS_IF([test -d "$hpcnn_$2_dir"], [],
     [AC_MSG_ERROR([--with-$1=$hpcnn_$2_dir: no such directory])])])
])

# HPCNN_SPLIT_FLAGS(flags)
# ------------------------
# Sorts compiler and linker flags (from pkg-config or a compiler wrapper) into
# hpcnn_split_cppflags, hpcnn_split_ldflags and hpcnn_split_libs.
AC_DEFUN([HPCNN_SPLIT_FLAGS], [
hpcnn_split_cppflags=
hpcnn_split_ldflags=
hpcnn_split_libs=
for hpcnn_tok in $1; do
  AS_CASE([$hpcnn_tok],
    [-I*|-D*|-isystem*], [hpcnn_split_cppflags="$hpcnn_split_cppflags $hpcnn_tok"],
    [-l*|*.a|*.so|*.so.*], [hpcnn_split_libs="$hpcnn_split_libs $hpcnn_tok"],
    [-L*|-Wl,*|-pthread], [hpcnn_split_ldflags="$hpcnn_split_ldflags $hpcnn_tok"],
    [])
done
])

# HPCNN_PKG_CONFIG(module, [DIR])
# -------------------------------
# Asks pkg-config for module; with DIR, only DIR's pkgconfig folders are searched.
# Sets hpcnn_pkg_ok (yes/no) and the hpcnn_split_* variables.
AC_DEFUN([HPCNN_PKG_CONFIG], [
AC_REQUIRE([HPCNN_PROG_PKG_CONFIG])
hpcnn_pkg_ok=no
hpcnn_split_cppflags= hpcnn_split_ldflags= hpcnn_split_libs=
AS_IF([test -n "$PKG_CONFIG"], [
  AS_IF([test -n "$2"],
    [hpcnn_pkg_dirs="$2/lib/pkgconfig:$2/lib64/pkgconfig:$2/share/pkgconfig"
     AS_IF([test -n "$hpcnn_multiarch"], [hpcnn_pkg_dirs="$hpcnn_pkg_dirs:$2/lib/$hpcnn_multiarch/pkgconfig"])
     hpcnn_pkg_flags=`PKG_CONFIG_LIBDIR="$hpcnn_pkg_dirs" PKG_CONFIG_PATH= \
        $PKG_CONFIG --cflags --libs "$1" 2>/dev/null` && hpcnn_pkg_ok=yes],
    [hpcnn_pkg_flags=`$PKG_CONFIG --cflags --libs "$1" 2>/dev/null` && hpcnn_pkg_ok=yes])
  AS_IF([test $hpcnn_pkg_ok = yes], [HPCNN_SPLIT_FLAGS([$hpcnn_pkg_flags])])
])
])

AC_DEFUN([HPCNN_PROG_PKG_CONFIG], [
AC_ARG_VAR([PKG_CONFIG], [path to the pkg-config program])
AC_PATH_TOOL([PKG_CONFIG], [pkg-config])
dnl Debian-style multiarch folder name (x86_64-linux-gnu), empty elsewhere.
hpcnn_multiarch=`$CXX -print-multiarch 2>/dev/null`
])

# HPCNN_LIBDIR(DIR)
# -----------------
# Sets hpcnn_libdir to DIR/lib64 or DIR/lib, whichever exists (lib64 first).
AC_DEFUN([HPCNN_LIBDIR], [
hpcnn_libdir=$1/lib
AS_IF([test -d "$1/lib64"], [hpcnn_libdir=$1/lib64])
])

# HPCNN_TRY(VAR, where, cppflags, ldflags, libs, prologue, body, [extra-cppflags], [extra-libs])
# ----------------------------------------------------------------------------------------------
# Unless VAR was already found: compiles and links a C++ program (prologue, body) with the
# candidate flags (plus extra flags that belong to other packages, such as MPI for parallel
# HDF5); on success stores the candidate in VAR_CPPFLAGS/VAR_LDFLAGS/VAR_LIBS, sets
# hpcnn_have_VAR=yes and remembers where it was found. Linking uses the C++20 flags.
# A body of `nomain' links the prologue alone (its main() must come from a library).
AC_DEFUN([HPCNN_TRY], [
AS_IF([test "$hpcnn_have_$1" != yes], [
  AC_MSG_CHECKING([for $1 with $2])
  hpcnn_save_CPPFLAGS=$CPPFLAGS hpcnn_save_LDFLAGS=$LDFLAGS hpcnn_save_LIBS=$LIBS
  hpcnn_save_CXXFLAGS=$CXXFLAGS
  CPPFLAGS="$CPPFLAGS $3 $8"
  LDFLAGS="$LDFLAGS $4"
  LIBS="$5 $9 $LIBS"
  CXXFLAGS="$CXXFLAGS $HPCNN_CXXSTD"
  AC_LANG_PUSH([C++])
  AC_LINK_IFELSE([m4_if([$7], [nomain], [AC_LANG_SOURCE([$6])], [AC_LANG_PROGRAM([$6], [$7])])],
    [hpcnn_have_$1=yes
     $1_CPPFLAGS=`echo $3`
     $1_LDFLAGS=`echo $4`
     $1_LIBS=`echo $5`
     hpcnn_$1_where="$2"])
  AC_LANG_POP([C++])
  CPPFLAGS=$hpcnn_save_CPPFLAGS LDFLAGS=$hpcnn_save_LDFLAGS LIBS=$hpcnn_save_LIBS
  CXXFLAGS=$hpcnn_save_CXXFLAGS
  AC_MSG_RESULT([$hpcnn_have_$1])
])
])

# HPCNN_RPATH(VAR)
# ----------------
# Adds -Wl,-rpath,D to VAR_LDFLAGS for every -LD outside the system library folders, so the
# executables find libraries installed under a prefix without LD_LIBRARY_PATH.
AC_DEFUN([HPCNN_RPATH], [
for hpcnn_tok in $$1_LDFLAGS; do
  AS_CASE([$hpcnn_tok],
    [-L/usr/lib|-L/usr/lib/*|-L/usr/lib64|-L/usr/lib64/*|-L/lib|-L/lib/*|-L/lib64|-L/lib64/*], [],
    [-L*], [hpcnn_tok=`echo "$hpcnn_tok" | sed 's/^-L//'`
            AS_CASE([" $$1_LDFLAGS "], [*" -Wl,-rpath,$hpcnn_tok "*], [],
              [$1_LDFLAGS="$$1_LDFLAGS -Wl,-rpath,$hpcnn_tok"])],
    [])
done
])

# HPCNN_DEP_DONE(VAR, label, what-is-needed, where-to-get-it, [required])
# ---------------------------------------------------------------------
# Ends a dependency check: errors out when VAR was requested (or is required) and is missing,
# substitutes the flags, defines HAVE_VAR and AM_CONDITIONAL HAVE_VAR, records the summary line.
AC_DEFUN([HPCNN_DEP_DONE], [
m4_ifval([$5], [AS_IF([test "$hpcnn_$1_want" = no],
  [AC_MSG_ERROR([$2 is required by hpcnn: --without-m4_tolower([$1]) is not possible])])])
AS_IF([test "$hpcnn_have_$1" = yes], [
  HPCNN_RPATH([$1])
  AC_DEFINE([HAVE_$1], [1], [Define to 1 if $2 can be used])
  hpcnn_found=yes
  dnl Name the folder that was picked: the first -L, else the first -I.
  hpcnn_detail=
  for hpcnn_tok in $$1_LDFLAGS $$1_CPPFLAGS; do
    AS_CASE([$hpcnn_tok], [-L*|-I*], [hpcnn_detail=`echo "$hpcnn_tok" | sed 's/^-[[LI]]//'`; break])
  done
  AS_CASE([$hpcnn_$1_where],
    [/*|*"$hpcnn_detail"*], [],
    [hpcnn_$1_where="$hpcnn_$1_where: $hpcnn_detail"])
], [
  $1_CPPFLAGS= $1_LDFLAGS= $1_LIBS=
  hpcnn_found=no
  hpcnn_$1_hint="needs $3 ($4)"
  AS_IF([test -n "$hpcnn_$1_dir"], [hpcnn_$1_hint="$3 not found under $hpcnn_$1_dir"])
  m4_ifval([$5],
    [AC_MSG_ERROR([$2 not found: $hpcnn_$1_hint (see config.log)])],
    [AS_IF([test "$hpcnn_$1_want" = yes],
       [AC_MSG_ERROR([$2 was requested but not found: $hpcnn_$1_hint (see config.log)])])])
  AS_CASE([$hpcnn_$1_want],
    [no], [hpcnn_$1_where="disabled (--without-m4_tolower([$1]))"],
    [hpcnn_$1_where="${hpcnn_$1_why:-not found; $4}"])
])
AM_CONDITIONAL([HAVE_$1], [test "$hpcnn_have_$1" = yes])
AC_SUBST([$1_CPPFLAGS])
AC_SUBST([$1_LDFLAGS])
AC_SUBST([$1_LIBS])
HPCNN_SUMMARY_DEP([$2], [$hpcnn_found], [$hpcnn_$1_where])
])

# HPCNN_SUMMARY_DEP(label, found, where) / HPCNN_SUMMARY_ADD(label, text) / HPCNN_SUMMARY_PRINT(title)
# ------------------------------------------------------------------------------------------------
# Collect the two tables configure prints at its end: the components, and what will be built.
AC_DEFUN([HPCNN_SUMMARY_DEP], [
hpcnn_summary_deps="$hpcnn_summary_deps`printf '  %-18s %-6s %s' "$1" "$2" "$3"`
"
])

AC_DEFUN([HPCNN_SUMMARY_ADD], [
hpcnn_summary_build="$hpcnn_summary_build`printf '  %-18s %s' "$1" "$2"`
"
])

AC_DEFUN([HPCNN_SUMMARY_PRINT], [
hpcnn_rule="-------------------------------------------------------------------------------"
printf '\n%s\n%s\n' "$1" "$hpcnn_rule"
printf '  %-18s %-6s %s\n' Component Found Where
printf '%s' "$hpcnn_summary_deps"
printf '%s\n' "$hpcnn_rule"
printf '%s' "$hpcnn_summary_build"
printf '%s\n\n' "$hpcnn_rule"
])
