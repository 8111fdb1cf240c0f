#!/usr/bin/env bash
# `make install prefix=TMP` from this build tree, then make installcheck's smoke test of
# that tree (packaging/install_smoke.sh: executables, an installed job script, man pages, module
# files, no reference to the build or source tree), then `make uninstall` must leave no file.
# Also: every jobscripts/*.sh is installed (jobscripts/Makefile.inc lists them by name).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
make=${MAKE:-make}
prefix=$out/prefix
# Quiet: the install's own lines would drown the checks' (its errors still show).
if "$make" -s install prefix="$prefix" >"$out/install.log" 2>&1; then
  echo "ok:   make install prefix=$prefix"
else
  echo "FAIL: make install prefix=$prefix:"; cat "$out/install.log"; exit 1
fi
for f in "$HPCNN_SRCDIR"/jobscripts/*.sh; do
  [ -f "$prefix/share/hpcnn/jobscripts/${f##*/}" ] || { echo "FAIL: jobscripts/${f##*/} is not installed (add it to jobscripts/Makefile.inc)"; fail=1; }
done
[ -x "$prefix/share/hpcnn/jobscripts/allreduce_sweep.sh" ] || { echo "FAIL: the installed job scripts are not executable"; fail=1; }
run "$make" -s installcheck prefix="$prefix"
run "$make" -s uninstall prefix="$prefix"
left=$(find "$prefix" -type f 2>/dev/null)
[ -z "$left" ] || { echo "FAIL: make uninstall left: $left"; fail=1; }
exit $fail
