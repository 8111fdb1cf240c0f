#!/usr/bin/env bash
# A short run of every libFuzzer target (fuzz/, docs/FUZZING.md): 8 s each, 40 s in all, from the
# corpus and the regressions, with a fixed seed so a run is repeatable. Fails on any finding (a
# crash, sanitizer report, leak, unexpected exception, hang or memory blow-up), keeping the input
# in fuzz-findings/ of the build folder. Skipped (77) when configure found no compiler with
# libFuzzer (FUZZ_CXX, m4/hpcnn_fuzz.m4).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
fuzz_cxx=$(sed -n 's/^FUZZ_CXX = //p' Makefile)
if [ -z "$fuzz_cxx" ]; then
  echo "SKIPPED: configure found no C++ compiler with libFuzzer (Debian/Ubuntu: apt-get install clang; then ./configure)"
  exit 77
fi
for t in idx cifar result_file checkpoint options; do
  [ -x "fuzz/fuzz-$t" ] || { echo "FAIL: fuzz/fuzz-$t is not built (make check builds it with $fuzz_cxx)"; exit 1; }
done
run bash "$HPCNN_SRCDIR/fuzz/run_fuzzers.sh" --seconds 8 --seed 1 --work "$out/work" idx cifar result_file checkpoint options
if [ "$fail" != 0 ]; then
  rm -rf fuzz-findings && mkdir -p fuzz-findings
  for d in "$out"/work/*/findings; do
    t=$(basename "$(dirname "$d")")
    for f in "$d"/*; do [ -f "$f" ] && cp "$f" "fuzz-findings/$t-$(basename "$f")"; done
  done
  echo "the inputs found are in $HPCNN_BUILDDIR/fuzz-findings/"
fi
exit $fail
