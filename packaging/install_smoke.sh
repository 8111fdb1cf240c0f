#!/usr/bin/env bash
# install_smoke.sh: checks an installed hpcnn from a scratch folder outside the install and the
# build tree, with the install's bin/ not on PATH (`make installcheck`; tests/install_tree.sh).
#   install_smoke.sh --prefix P [--prefix P2] --bindir D --pkgdatadir D --mandir D --docdir D --version V
#                    --programs "hpcnn-train ..." [--mpiexec LAUNCHER] [--not-from DIR]... [--library-prefix DIR]...
# (P: the install's prefix, which the module files name, and P2 the configured one, which the
# executables' provenance records; the folders: where the files are, with DESTDIR; --programs:
# the executables the build installs, its bin_PROGRAMS)
# Checks: --version/--help of every executable, a tiny hpcnn-train run read back by hpcnn-summary,
# an installed job script (allreduce_sweep.sh, one rank) that must find the installed executables
# by itself, the man pages (groff without warnings, every option of --help in them), the module
# files (content; parsed by tclsh and lua with stub commands, and loaded by Lmod, where those are
# installed), and that no installed file (executables included) names a --not-from folder (the
# build or source tree). --mpiexec: the launcher of the build's MPI (default mpirun).
# --library-prefix: a library's folder that configure was given (--with-X=DIR): the executables
# name it (their RUNPATH, and the configure line in their provenance) wherever it is, the source
# tree included (./quickstart's oneDNN 3 is in .quickstart/onednn3), so it is left out of that check.
# Prints "FAIL: ..." for each failed check and exits 1 if any failed.
set -u
not_from=()
prefixes=()
library_prefixes=()
mpiexec=mpirun
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) prefixes+=("$2") ;; --bindir) bindir=$2 ;; --pkgdatadir) pkgdatadir=$2 ;; --mandir) mandir=$2 ;; --docdir) docdir=$2 ;;
    --version) version=$2 ;; --not-from) not_from+=("$2") ;; --mpiexec) mpiexec=$2 ;; --programs) programs=$2 ;;
    --library-prefix) library_prefixes+=("$2") ;;
    *) echo "install_smoke.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$mpiexec" ] || mpiexec=mpirun   # configure found no launcher: try mpirun
: "${prefixes[0]:?--prefix missing}" "${bindir:?--bindir missing}" "${pkgdatadir:?}" "${mandir:?}" "${docdir:?}" "${version:?}"
: "${programs:?--programs missing (bin_PROGRAMS of the build)}"
work=$(mktemp -d "${TMPDIR:-/tmp}/hpcnn-installcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# Open MPI refuses root without these (containers, CI); harmless for other MPIs.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset HPCNN_BIN HPCNN_LAUNCH HPCNN_MPIRUN
fail=0
failed() { echo "FAIL: $*"; fail=1; }
ok() { echo "ok:   $*"; }

# ---- executables
for p in $programs; do
  [ -x "$bindir/$p" ] || { failed "$bindir/$p is not installed"; continue; }
  v=$("$bindir/$p" --version 2>&1) && [[ "$v" == *"$version"* ]] && ok "$p --version: $v" || failed "$p --version: '$v' (want $version)"
  "$bindir/$p" --help >"$work/$p.help" 2>&1 && grep -q -- '--help' "$work/$p.help" && ok "$p --help" || failed "$p --help"
done
if "$bindir/hpcnn-train" --model lenet5 --backend reference --dataset mnist --batch 4 --iters 2 --warmup 1 \
     --quiet --output "$work/train" >"$work/train.log" 2>&1; then
  table=$("$bindir/hpcnn-summary" --format csv "$work/train" 2>&1)
  [[ "$table" == *lenet5*reference* ]] && ok "hpcnn-train run read back by hpcnn-summary" ||
    failed "hpcnn-summary of the installed hpcnn-train's result: $table"
else
  failed "installed hpcnn-train run: $(cat "$work/train.log")"
fi

# ---- an installed job script, one rank, from here, finding the installed executables itself
js=$pkgdatadir/jobscripts
[ -r "$js/common.sh" ] || failed "$js/common.sh is not installed"
if ! command -v "$mpiexec" >/dev/null; then
  echo "(no $mpiexec: the installed job script is not run)"
elif PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$bindir" | paste -sd:) \
     HPCNN_LAUNCH=$mpiexec NODES=1 SIZES=4,1K EXCHANGE=mpi ITERS=2 WARMUP=1 OUT="$work/allreduce" \
     "$js/allreduce_sweep.sh" >"$work/js.log" 2>&1; then
  real_bindir=$(cd "$bindir" && pwd)
  if grep -qF "$real_bindir/hpcnn-allreduce" "$work/js.log" && grep -q '^ *mpi ' "$work/js.log" && ls "$work"/allreduce/*.h5 >/dev/null 2>&1; then
    ok "installed jobscripts/allreduce_sweep.sh ran $real_bindir/hpcnn-allreduce and printed its table"
  else
    failed "installed allreduce_sweep.sh did not run the installed executables or print the table: $(cat "$work/js.log")"
  fi
else
  failed "installed allreduce_sweep.sh: $(cat "$work/js.log")"
fi

# ---- man pages: render without warnings, and carry every option --help lists
squeeze() { tr -s ' \n' '  ' | sed 's/, /,/g; s/^ //; s/ $//'; }
for p in $programs; do
  page=$mandir/man1/$p.1
  [ -r "$page" ] || { failed "$page is not installed"; continue; }
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1) && [ -z "$warnings" ] || { failed "groff $page: $warnings"; continue; }
  text=$(LC_ALL=C groff -man -Tascii "$page" 2>/dev/null | sed 's/.\x08//g')
  # Every option line of --help, word for word (spacing and line breaks aside), is in the page.
  flat=$(squeeze <<<"$text")
  missing=""
  while IFS= read -r line; do
    [[ "$flat" == *"$(squeeze <<<"$line")"* ]] || missing="$missing ${line%% *}"
  done < <(sed -n 's/^  \(--.*\)/\1/p' "$work/$p.help")
  [ -z "$missing" ] && ok "man page $p.1 renders and has every option line of --help" || failed "$p.1 lacks or changes$missing"
done

# ---- module files
mf=$pkgdatadir/modulefiles/hpcnn
for f in "$mf/$version.lua" "$mf/$version"; do
  [ -r "$f" ] || { failed "$f is not installed"; continue; }
  for want in "$bindir" "$mandir" "$pkgdatadir/jobscripts" HPCNN_JOBSCRIPTS HPCNN_DOCDIR HPCNN_ROOT; do
    grep -qF "$want" "$f" || failed "$f does not mention $want"
  done
  ! grep -q '@[a-zA-Z]*@' "$f" || failed "$f has unsubstituted @...@: $(grep '@[a-zA-Z]*@' "$f")"
done
# The Tcl file run by tclsh with its commands stubbed: it must parse and set what it says.
if command -v tclsh >/dev/null; then
  got=$(printf '%s\n' 'proc prepend-path {v d} {puts "$v=$d"}' 'proc setenv {v d} {puts "$v=$d"}' \
        'proc conflict args {}' 'proc module-whatis args {}' "source {$mf/$version}" | tclsh 2>&1)
  [[ "$got" == *"PATH=$bindir"* && "$got" == *"HPCNN_JOBSCRIPTS=$pkgdatadir/jobscripts"* ]] &&
    ok "Tcl module file runs under tclsh" || failed "Tcl module file under tclsh: $got"
else
  echo "(no tclsh: the Tcl module file is not run)"
fi
lua=$(command -v lua lua5.4 lua5.3 lua5.2 lua5.1 2>/dev/null | head -n 1)
if [ -n "$lua" ]; then
  # The file's path through the environment: Lua 5.1 sets no `arg` for -e code (5.2 on do).
  got=$(HPCNN_MODULE_FILE="$mf/$version.lua" "$lua" -e 'function help() end function whatis() end function conflict() end
    function prepend_path(v, d) print(v .. "=" .. d) end function setenv(v, d) print(v .. "=" .. d) end
    dofile(os.getenv("HPCNN_MODULE_FILE"))' 2>&1)
  [[ "$got" == *"PATH=$bindir"* && "$got" == *"HPCNN_JOBSCRIPTS=$pkgdatadir/jobscripts"* ]] &&
    ok "Lua module file runs under $lua" || failed "Lua module file under $lua: $got"
else
  echo "(no lua: the Lua module file is not run)"
fi
# Lmod itself: `module load hpcnn` puts the install's executables and man pages first.
lmod=${LMOD_CMD:-$(ls /usr/share/lmod/lmod/libexec/lmod 2>/dev/null)}
if [ -n "$lmod" ] && [ -x "$lmod" ]; then
  got=$(env -i HOME="$work" PATH=/usr/bin:/bin MODULEPATH="$pkgdatadir/modulefiles" bash -c \
        "eval \"\$('$lmod' bash load hpcnn/$version)\" && command -v hpcnn-train && man -w hpcnn-train && echo \"\$HPCNN_JOBSCRIPTS\"" 2>&1)
  [[ "$got" == *"$bindir/hpcnn-train"* && "$got" == *"$mandir/man1/hpcnn-train.1"* && "$got" == *"$pkgdatadir/jobscripts"* ]] &&
    ok "module load hpcnn/$version with Lmod" || failed "Lmod module load hpcnn/$version: $got"
else
  echo "(no Lmod: module load is not tried)"
fi

# ---- documents, and nothing that names the build or source tree
for d in README.md INSTALL.md FAILURES.md CLUSTER.md; do [ -r "$docdir/$d" ] || failed "$docdir/$d is not installed"; done
# As absolute folders without ./.. (distcheck's srcdir is _build/sub/../..); srcdir = builddir in-tree.
mapfile -t dirs < <(for d in "${not_from[@]}"; do (cd "$d" 2>/dev/null && pwd -P); done | sort -u)
for dir in "${dirs[@]}"; do
  [ -n "$dir" ] || continue
  # The install's prefixes are left out first: distcheck installs into a folder of the source
  # tree; and the library folders configure was given.
  strip_prefixes=$(for p in "${prefixes[@]}" "${library_prefixes[@]}"; do
                     printf 's|%s||g;' "$(sed 's/[][\.*^$|]/\\&/g' <<<"$p")"; done)
  refs=""
  for f in "$bindir"/hpcnn-* $(find "$pkgdatadir" "$docdir" -type f) $(for p in $programs; do echo "$mandir/man1/$p.1"; done); do
    LC_ALL=C sed "$strip_prefixes" "$f" 2>/dev/null | grep -qaF "$dir" && refs="$refs $f"
  done
  [ -z "$refs" ] && ok "no installed file names $dir" || failed "installed files name $dir: $refs"
done
exit $fail
