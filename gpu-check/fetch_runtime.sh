#!/usr/bin/env bash
# gpu-check/fetch_runtime.sh DIR [BINARY...]
#
# Run on the build machine (Debian 12, x86-64, where hpcnn was built), from the
# build tree. Downloads into DIR the Debian .deb files that hpcnn's executables
# need at run time on a machine that has no MPI and no HDF5 (a GPU machine): Open MPI
# 4.1 (libopenmpi3, openmpi-bin, openmpi-common), PMIx (libpmix2), HDF5 and the
# shared-library closure of all of that.  On the GPU machine,
# `source gpu-check/runtime_env.sh DIR` unpacks them into a private prefix.
#
# How the list is made: starting from the executables (default: ./hpcnn-* and
# ./tests/test_* in the current directory, or the BINARY arguments) and from
# the ELF files of the Open MPI / PMIx packages, every DT_NEEDED soname is
# resolved through `ldconfig -p`, mapped to its package with `dpkg -S`, and
# followed recursively.  Packages that any Ubuntu 24.04 image has (glibc,
# libstdc++, libgcc, libgomp, zlib) are left out, and so are oneDNN / OpenBLAS
# (the GPU build is configured --without-dnnl --without-openblas) and the
# fabric libraries (UCX, libfabric, PSM, verbs) that only Open MPI plugins which
# the kit never selects link against.  Libraries under /usr/local/cuda are not
# Debian's and are skipped.  The versions downloaded are the ones installed
# here (what the binaries were linked against), falling back to the candidate.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 DIR [BINARY...]" >&2
  exit 2
fi
DIR=$1; shift
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# ---- the executables whose closure is needed -------------------------------
BINS=()
if [ $# -gt 0 ]; then
  BINS=("$@")
else
  for f in ./hpcnn-* ./tests/test_*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    head -c4 "$f" 2>/dev/null | grep -q 'ELF' || continue
    BINS+=("$f")
  done
fi
if [ ${#BINS[@]} -eq 0 ]; then
  echo "fetch_runtime: no executables found (run from the build tree, or name them)" >&2
  exit 1
fi

# Packages never fetched (regular expressions, matched against the whole name).
EXCLUDE_RE='^(libc6|libc6-.*|libstdc\+\+6|libgcc-s1|libgomp1|zlib1g|libdnnl.*|libopenblas.*|libblas3|liblapack3|libgfortran5|libquadmath0|ocl-icd-libopencl1|libucx0|libfabric1|libpsm2-2|libpsm-infinipath1|libibverbs1|librdmacm1|libnl-3-200|libnl-route-3-200|libhwloc-plugins|default-jre-headless|.*-jre-headless)$'
# Packages always fetched (what mpirun / singleton MPI_Init need besides the libs).
BASE_PKGS=(openmpi-bin openmpi-common libopenmpi3 libpmix2)
# ELF files of those packages that are not followed (Fortran / Java bindings,
# and the plugins of fabrics the kit never selects).
SKIP_FILE_RE='(mpifh|usempi|_java|mpi_java|libmca_common_(ucx|ofi|verbs)|mca_(pml_ucx|osc_ucx|spml_ucx|atomic_ucx|btl_uct|btl_ofi|btl_openib|mtl_ofi|mtl_psm|mtl_psm2|btl_usnic|scoll_ucc|coll_ucc))'

declare -A PKG_SEEN=()     # package -> 1
declare -A FILE_SEEN=()    # resolved path -> 1
declare -A PKG_OF=()       # library path -> owning package (dpkg -S is slow)
QUEUE=()

ldcache=$(ldconfig -p)
resolve_soname() {  # soname -> path (x86-64 entry of the ld cache)
  awk -v s="$1" '$1==s && /x86-64/ {print $NF; exit}' <<<"$ldcache"
}
pkg_of() {          # path -> package name (without :arch), or empty
  local p=$1 out
  out=$(dpkg -S "$p" 2>/dev/null || true)
  if [ -z "$out" ]; then
    out=$(dpkg -S "$(readlink -f "$p")" 2>/dev/null || true)
  fi
  # /usr-merge: /lib/x86_64-linux-gnu/... is owned as such, try both spellings
  if [ -z "$out" ]; then
    case $p in
      /usr/lib/*) out=$(dpkg -S "${p#/usr}" 2>/dev/null || true) ;;
      /lib/*)     out=$(dpkg -S "/usr$p" 2>/dev/null || true) ;;
    esac
  fi
  [ -n "$out" ] || return 0
  head -n1 <<<"$out" | cut -d: -f1 | sed 's/,.*//'
}
needed_of() {
  readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

add_file() {  # queue an ELF file to be scanned
  local f; f=$(readlink -f "$1")
  [ -n "${FILE_SEEN[$f]:-}" ] && return 0
  FILE_SEEN[$f]=1
  QUEUE+=("$f")
}
add_pkg() {   # remember a package; scan its ELF files if it is a base package
  local p=$1
  [[ $p =~ $EXCLUDE_RE ]] && return 1
  if [ -z "${PKG_SEEN[$p]:-}" ]; then
    PKG_SEEN[$p]=1
  fi
  return 0
}

for b in "${BINS[@]}"; do add_file "$b"; done
for p in "${BASE_PKGS[@]}"; do
  add_pkg "$p"
  while read -r f; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    [[ $f =~ $SKIP_FILE_RE ]] && continue
    head -c4 "$f" 2>/dev/null | grep -q 'ELF' || continue
    add_file "$f"
  done < <(dpkg -L "$p" 2>/dev/null)
done

missing=()
i=0
while [ $i -lt ${#QUEUE[@]} ]; do
  f=${QUEUE[$i]}; i=$((i+1))
  for so in $(needed_of "$f"); do
    case $so in ld-linux*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libstdc++.so.*|libgcc_s.so.*) continue ;; esac
    path=$(resolve_soname "$so")
    if [ -z "$path" ]; then
      # e.g. libpmix.so.2 is also found through RUNPATH-less plugin dirs
      missing+=("$so (needed by $f)"); continue
    fi
    case $(readlink -f "$path") in /usr/local/cuda*|/usr/local/*) continue ;; esac
    if [ -z "${PKG_OF[$path]+x}" ]; then PKG_OF[$path]=$(pkg_of "$path"); fi
    pkg=${PKG_OF[$path]}
    if [ -z "$pkg" ]; then
      missing+=("$so -> $path (no package)"); continue
    fi
    add_pkg "$pkg" || continue          # excluded: do not follow its deps
    add_file "$path"
  done
done

if [ ${#missing[@]} -gt 0 ]; then
  printf 'fetch_runtime: warning: unresolved: %s\n' "${missing[@]}" | sort -u >&2
fi

PKGS=$(printf '%s\n' "${!PKG_SEEN[@]}" | sort)
echo "fetch_runtime: ${#BINS[@]} executables, $(wc -w <<<"$PKGS") packages:"
echo "$PKGS" | tr '\n' ' '; echo

# ---- download ----------------------------------------------------------------
rm -f "$DIR"/*.deb
cd "$DIR"
download() {  # pkg -> downloads the installed version, else the candidate
  local p=$1 v
  v=$(dpkg-query -W -f='${Version}' "$p:amd64" 2>/dev/null || dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)
  if [ -n "$v" ] && apt-get download -q "$p:amd64=$v" >/dev/null 2>&1; then return 0; fi
  if [ -n "$v" ] && apt-get download -q "$p=$v" >/dev/null 2>&1; then return 0; fi
  apt-get download -q "$p" >/dev/null 2>&1
}
updated=0
failed=()
for p in $PKGS; do
  if ! download "$p"; then
    if [ $updated -eq 0 ]; then
      echo "fetch_runtime: apt-get download $p failed; running apt-get update" >&2
      apt-get update -qq >/dev/null 2>&1 || true
      updated=1
    fi
    download "$p" || failed+=("$p")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fetch_runtime: FAILED to download: ${failed[*]}" >&2
  exit 1
fi
# Note which (installed) version each .deb is, for the record.
(cd "$DIR" && printf '%s\n' *.deb) > "$DIR/MANIFEST"
echo "fetch_runtime: $(ls "$DIR"/*.deb | wc -l) .deb files in $DIR, total $(du -ch "$DIR"/*.deb | tail -n1 | cut -f1)"
