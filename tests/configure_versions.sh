#!/usr/bin/env bash
# configure refuses library versions hpcnn does not support (HDF5 1.10 to 1.14, oneDNN
# 2.6 to 3.x) with one line naming the version found and the range: the installed headers are
# wrapped by a header of the same name (first on CPPFLAGS, #include_next to the real one) that
# changes the version macros, so the libraries still link and only the version is wrong.
# configure runs in a copy of the sources (make distdir): a configured source tree refuses
# out-of-tree builds.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
make=${MAKE:-make}
src=$out/src
"$make" -s distdir distdir="$src" top_distdir="$src" >"$out/distdir.log" 2>&1 ||
  { echo "FAIL: make distdir:"; tail -20 "$out/distdir.log"; exit 1; }

# fake_header DIR HEADER MACRO=VALUE...: DIR/HEADER is the real HEADER with the macros redefined
fake_header() {
  local dir=$1 header=$2 def
  shift 2
  mkdir -p "$dir/$(dirname "$header")"
  { echo "#include_next <$header>"
    for def in "$@"; do echo "#undef ${def%%=*}"; echo "#define ${def%%=*} ${def#*=}"; done
  } > "$dir/$header"
}
# refused NAME WANT CONFIGURE-OPTIONS...: configure must exit 1 with one error line containing WANT
refused() {
  local name=$1 want=$2 errors status
  shift 2
  mkdir -p "$out/$name"
  (cd "$out/$name" && "$src/configure" -q --without-cuda --without-cudnn --without-nccl --without-gbench \
     --without-gtest --without-openblas --without-eigen FUZZ_CXX=no "$@" >configure.out 2>configure.err)
  status=$?
  errors=$(grep 'error:' "$out/$name/configure.err")
  if [ $status = 1 ] && [ "$(grep -c . <<<"$errors")" = 1 ] && [[ "$errors" == *"$want"* ]]; then
    echo "ok:   $name: $errors"
  else
    echo "FAIL: $name: configure exited $status, want 1 and one error line with '$want':"
    tail -5 "$out/$name/configure.err"; fail=1
  fi
}

fake_header "$out/h5old" hdf5.h H5_VERS_MINOR=8
refused hdf5-1.8 "HDF5 1.8 found" --without-dnnl CPPFLAGS="-I$out/h5old"
fake_header "$out/h5new" hdf5.h H5_VERS_MAJOR=2 H5_VERS_MINOR=0
refused hdf5-2.0 "HDF5 2.0 found" --without-dnnl CPPFLAGS="-I$out/h5new"
if grep -q '^#define HAVE_DNNL 1' config.h; then
  fake_header "$out/dnnl1" oneapi/dnnl/dnnl_version.h DNNL_VERSION_MAJOR=1
  refused onednn-1 "hpcnn supports oneDNN 2.6 to 3.x" CPPFLAGS="-I$out/dnnl1"
  fake_header "$out/dnnl25" oneapi/dnnl/dnnl_version.h DNNL_VERSION_MAJOR=2 DNNL_VERSION_MINOR=5
  refused onednn-2.5 "oneDNN 2.5 found" CPPFLAGS="-I$out/dnnl25"
else
  echo "(this build has no oneDNN: its version check is not tried)"
fi
# The versions of this build passed the same check.
grep -E 'checking the version of (HDF5|oneDNN)' config.log | sed 's/^configure:[0-9]*: /ok:   this build: /'
grep -q 'checking the version of HDF5' config.log || { echo "FAIL: config.log has no HDF5 version check"; fail=1; }
exit $fail
