# shellcheck shell=bash
# gpu-check/runtime_env.sh -- MPI/HDF5 run-time environment for hpcnn on a
# machine that has neither (a GPU machine such as an Ubuntu-24.04-like image
# with no network and no apt, run as root).  To be SOURCED from bash:
#
#     source gpu-check/runtime_env.sh DIR [PREFIX]
#
# DIR holds the Debian 12 .deb files made by gpu-check/fetch_runtime.sh;
# PREFIX (default /opt/hpcnn-runtime) is where they are unpacked with `dpkg -x`
# (never into /).  Unpacking is skipped when PREFIX already holds the same set of
# .debs.  DIR may be given as "-" once PREFIX is unpacked.  For one-off commands
# without touching the calling shell, use gpu-check/with_runtime.
#
# Design (why LD_LIBRARY_PATH can be exported globally without harming the
# system's python3/PyTorch):
#   * LD_LIBRARY_PATH gets ONE folder, PREFIX/hpcnn-lib, a farm of symlinks made
#     here.  It always holds the MPI stack and HDF5 (libmpi, libopen-pal/-rte,
#     libmca_common_*, liboshmem, libpmix, libhwloc, libevent*, libmunge,
#     libhdf5*, libsz, libaec): the system has none of these, and they must come
#     as one consistent Debian build.  Every OTHER library of the kit (libcurl,
#     gnutls, OpenSSL, krb5, ldap, nghttp2, zstd, udev, ...: HDF5's closure) is
#     linked into the farm ONLY when the system's ld cache has no usable library
#     of that soname.  So a soname the system has is never shadowed by a
#     Debian build: python's ssl/curl/etc. keep using Ubuntu's libraries, and
#     Debian's libhdf5 uses them too (same sonames, Ubuntu 24.04 is newer than
#     Debian 12).  HPCNN_RUNTIME_ALL=1 links every kit library instead (a
#     fallback if a system library turns out to be unusable; it also shadows).
#   * PATH gets PREFIX/hpcnn-bin, which holds only Open MPI's commands (mpirun,
#     mpiexec, orterun, orted, ompi_info, ...), not the rest of PREFIX/usr/bin.
#   * Open MPI is relocated with OPAL_PREFIX=PREFIX/usr (Debian builds it with
#     prefix /usr; plugins in usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3, help
#     files in usr/share/openmpi, orted in usr/bin: the singleton MPI_Init of a
#     program started without mpirun forks that orted) and OPAL_SYSCONFDIR=
#     PREFIX/etc/openmpi (Debian's sysconfdir is the absolute /etc/openmpi, which
#     OPAL_PREFIX does not move).  The external PMIx (libpmix2, prefix
#     /usr/lib/x86_64-linux-gnu/pmix2) is relocated with PMIX_PREFIX, and its
#     plugin folder is also named in PMIX_MCA_mca_base_component_path.
#   * MCA settings for one node without network, set only when not already set
#     in the environment: pml ob1, btl self,vader with single-copy (CMA) off
#     (process_vm_readv is often refused in VMs/sandboxes), osc ^ucx,pt2pt,
#     plm isolated (no ssh/rsh), oob/tcp on lo, oversubscription allowed,
#     binding off (hwloc_base_binding_policy=none; pass --bind-to core to
#     mpirun to bind), PMIx gds hash (no shared-memory dstore).  Plus
#     OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1, since commands run as root there.
#
# How it was verified (on the Debian 12 build machine, which has Debian's own
# Open MPI and HDF5 installed): fetch_runtime.sh made the kit (37 .debs,
# 13 MiB) from the built tree; then, inside bubblewrap (`bwrap --dev-bind / /`)
# with the system's Open MPI, PMIx, HDF5, hwloc, libevent, munge, szip/aec and
# the fabric libraries hidden (tmpfs over /usr/lib/x86_64-linux-gnu/{openmpi,
# pmix2}, /etc/openmpi, /usr/share/openmpi; every other file of those packages
# covered by an empty file, executables by a stub that fails loudly, so that a
# binary run without the kit dies with "file too short"), this script was
# sourced with a fresh PREFIX and these ran and wrote their HDF5 result files:
#   ./hpcnn-allreduce --sizes 4K --iters 3 --warmup 1 --output D   (singleton:
#       MPI_Init forks PREFIX/usr/bin/orted)
#   mpirun -np 2 --oversubscribe ./hpcnn-allreduce --sizes 4K --iters 3 --warmup 1 --output D
#   ./hpcnn-train --model lenet5 --backend reference --iters 2 --warmup 1 --batch 8 --output D
#   mpirun -np 2 ./tests/test_collectives                          (passed)
# ldd showed libmpi/libhdf5/libhwloc/libevent resolved into PREFIX/hpcnn-lib
# and curl/ssl/gnutls from the system; python3 (ssl, hashlib, ctypes, sqlite3)
# still worked with the environment exported.  The same passed with
# HPCNN_RUNTIME_ALL=1, with the system's libcurl/nghttp2/libssh2 hidden too
# (the farm then took the kit's copies), through gpu-check/with_runtime, and
# under `set -euo pipefail` in the caller.  Without PMIX_PREFIX the PMIx
# plugins are not found (mpirun prints a help-file error); without OPAL_PREFIX
# a singleton fails in opal_init.  Not verifiable here: the GPU image itself
# (Ubuntu sonames, gVisor/Firecracker limits); ompi_info lists "unable to open
# mca_*_ucx/ofi/psm/openib" there, expected (those fabric libraries are not in
# the kit and those components are never selected).

_hpcnn_runtime_env() {
  local dir=${1:-} prefix=${2:-/opt/hpcnn-runtime}
  if [ -z "$dir" ]; then
    echo "usage: source gpu-check/runtime_env.sh DIR [PREFIX]   (DIR: the .debs of fetch_runtime.sh, or - if PREFIX is unpacked)" >&2
    return 2
  fi
  mkdir -p "$prefix" || return 1
  prefix=$(cd "$prefix" && pwd -P) || return 1
  case $prefix in /|/usr|/usr/*|/lib*|/etc|/etc/*|/bin|/sbin)
    echo "runtime_env: refusing PREFIX $prefix (it would unpack over the system)" >&2; return 1 ;;
  esac
  local stamp=$prefix/.hpcnn-runtime-manifest

  # ---- unpack --------------------------------------------------------------
  if [ "$dir" != "-" ]; then
    if [ ! -d "$dir" ]; then echo "runtime_env: no folder $dir" >&2; return 1; fi
    local debs=("$dir"/*.deb)
    if [ ! -e "${debs[0]}" ]; then echo "runtime_env: no .deb files in $dir" >&2; return 1; fi
    local want; want=$(for d in "${debs[@]}"; do basename "$d"; done | sort)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
      if ! command -v dpkg >/dev/null 2>&1; then echo "runtime_env: dpkg not found" >&2; return 1; fi
      if [ -f "$stamp" ]; then   # ours, from another kit: start clean
        rm -rf "${prefix:?}/usr" "${prefix:?}/lib" "${prefix:?}/lib64" "${prefix:?}/etc" "${prefix:?}/hpcnn-lib" "${prefix:?}/hpcnn-bin" "$stamp"
      fi
      local d
      for d in "${debs[@]}"; do
        dpkg -x "$d" "$prefix" || { echo "runtime_env: dpkg -x $d failed" >&2; return 1; }
      done
      printf '%s\n' "$want" > "$stamp"
    fi
  elif [ ! -f "$stamp" ]; then
    echo "runtime_env: $prefix is not unpacked yet; give the .deb folder" >&2
    return 1
  fi

  # ---- library farm --------------------------------------------------------
  local farm=$prefix/hpcnn-lib bin=$prefix/hpcnn-bin
  rm -rf "$farm" "$bin"
  mkdir -p "$farm" "$bin"
  local cache; cache=$(/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null)
  local f name sys own=0 shared=0 targets=" "
  # Real-name files (libfoo.so.1.2.3) that a soname link (libfoo.so.1) points
  # at are not linked themselves: only sonames are looked up at run time.
  for f in "$prefix"/usr/lib/x86_64-linux-gnu/lib*.so* "$prefix"/lib/x86_64-linux-gnu/lib*.so*; do
    [ -L "$f" ] && targets="$targets$(basename "$(readlink "$f")") "
  done
  for f in "$prefix"/usr/lib/x86_64-linux-gnu/lib*.so* "$prefix"/lib/x86_64-linux-gnu/lib*.so*; do
    [ -e "$f" ] || continue
    name=${f##*/}
    case $name in *.so) continue ;; esac          # dev links: not needed at run time
    if [ ! -L "$f" ]; then case $targets in *" $name "*) continue ;; esac; fi
    case $name in
      libmpi*|libopen-pal*|libopen-rte*|libmca_common_*|libompitrace*|liboshmem*|libpmix*|libhwloc*|libevent*|libmunge*|libhdf5*|libsz.*|libaec*)
        ln -sfn "$f" "$farm/$name"; own=$((own+1)); continue ;;
    esac
    if [ "${HPCNN_RUNTIME_ALL:-0}" = 1 ]; then
      ln -sfn "$f" "$farm/$name"; shared=$((shared+1)); continue
    fi
    # the system's library of this soname, if it has a usable (non-empty) one
    sys=$(awk -v s="$name" '$1==s && /x86-64/ {print $NF}' <<<"$cache" | while read -r p; do [ -s "$p" ] && { echo "$p"; break; }; done)
    if [ -z "$sys" ]; then
      ln -sfn "$f" "$farm/$name"; shared=$((shared+1))
    fi
  done
  for f in orterun orted ompi_info orte-info ompi-clean orte-clean ompi-server; do
    [ -e "$prefix/usr/bin/$f" ] && ln -sfn "$prefix/usr/bin/$f" "$bin/$f"
  done
  ln -sfn "$prefix/usr/bin/orterun" "$bin/mpirun"
  ln -sfn "$prefix/usr/bin/orterun" "$bin/mpiexec"

  # ---- environment -----------------------------------------------------------
  case ":${PATH:-}:" in *":$bin:"*) ;; *) export PATH="$bin${PATH:+:$PATH}" ;; esac
  case ":${LD_LIBRARY_PATH:-}:" in *":$farm:"*) ;; *) export LD_LIBRARY_PATH="$farm${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
  export OPAL_PREFIX="$prefix/usr"
  export OPAL_SYSCONFDIR="$prefix/etc/openmpi"
  export PMIX_PREFIX="$prefix/usr/lib/x86_64-linux-gnu/pmix2"
  export PMIX_MCA_mca_base_component_path="$PMIX_PREFIX/lib/pmix"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export HPCNN_RUNTIME_PREFIX="$prefix"
  local kv k set_mca=""
  for kv in \
      OMPI_MCA_pml=ob1 \
      OMPI_MCA_btl=self,vader \
      OMPI_MCA_btl_vader_single_copy_mechanism=none \
      OMPI_MCA_osc=^ucx,pt2pt \
      OMPI_MCA_plm=isolated \
      OMPI_MCA_oob_tcp_if_include=lo \
      OMPI_MCA_rmaps_base_oversubscribe=1 \
      OMPI_MCA_hwloc_base_binding_policy=none \
      OMPI_MCA_btl_base_warn_component_unused=0 \
      PMIX_MCA_gds=hash; do
    k=${kv%%=*}
    # shellcheck disable=SC2163  # exports NAME=VALUE held in kv
    if [ -z "${!k+x}" ]; then export "$kv"; set_mca="$set_mca ${k#*MCA_}=${kv#*=}"; fi
  done

  # ---- check the executables in the current folder, if any -------------------
  local b miss=""
  for b in ./hpcnn-* "$prefix/usr/bin/orted"; do
    [ -f "$b" ] && [ -x "$b" ] || continue
    if ldd "$b" 2>&1 | grep -q -e 'not found' -e 'version .* not found'; then
      miss="$miss ${b##*/}"
    fi
  done
  if [ -n "$miss" ]; then
    echo "runtime_env: WARNING: unresolved libraries in:$miss (see ldd; HPCNN_RUNTIME_ALL=1 links every kit library)" >&2
  fi

  echo "runtime_env: prefix $prefix ($own MPI/HDF5 + $shared other libs in $farm); set PATH+=$bin LD_LIBRARY_PATH+=$farm OPAL_PREFIX OPAL_SYSCONFDIR PMIX_PREFIX PMIX_MCA_mca_base_component_path OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 MCA:${set_mca:- (all preset)}"
}
_hpcnn_runtime_env "$@"
_hpcnn_runtime_rc=$?
unset -f _hpcnn_runtime_env
if [ "$_hpcnn_runtime_rc" -ne 0 ]; then unset _hpcnn_runtime_rc; return 1 2>/dev/null || exit 1; fi
unset _hpcnn_runtime_rc
