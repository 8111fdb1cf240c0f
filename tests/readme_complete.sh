#!/usr/bin/env bash
# README is where a new user starts, so it must name what the build makes and link what the
# documents explain: every executable of bin_PROGRAMS (suites/Makefile.inc, the one list of them)
# has a row in README's table of executables, and every document in docs/ is linked from README.
# Fails naming each one that is missing.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
cd "$HPCNN_SRCDIR"
programs=$(sed -n 's/^bin_PROGRAMS += //p' suites/Makefile.inc)
[ -n "$programs" ] || { echo "FAIL: no bin_PROGRAMS in suites/Makefile.inc"; exit 1; }
for p in $programs; do
  if grep -q "^| \`$p\` |" README.md; then echo "ok:   $p has a row in README's table"
  else echo "FAIL: $p (bin_PROGRAMS) has no row in README's table of executables"; fail=1; fi
done
for doc in docs/*.md; do
  if grep -qF "]($doc)" README.md; then echo "ok:   $doc is linked from README"
  else echo "FAIL: $doc is not linked from README ([...]($doc))"; fail=1; fi
done
exit $fail
