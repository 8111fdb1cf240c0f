#!/usr/bin/env bash
# The may-call table of docs/ARCHITECTURE.md, checked: every #include "..." of the project's own
# headers in src/, suites/, kernels/, collectives/, simulate/ and fuzz/ must point into a folder its own folder may call.
# Fails naming each include that breaks the table (file, line, header).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
cd "$HPCNN_SRCDIR"

# allowed FOLDER: the header prefixes a file under FOLDER may include (besides its own folder).
allowed() {
  case "$1" in
    src/base) echo "base/" ;;
    src/engine) echo "base/ engine/" ;;
    src/data) echo "base/ data/" ;;
    src/results) echo "base/ results/" ;;
    src/analysis) echo "base/ results/ analysis/" ;;
    src/harness) echo "base/ engine/ results/ harness/" ;;
    suites) echo "base/ engine/ data/ collectives/ results/ analysis/ harness/ suites/ simulate/platform.hpp simulate/analytic.hpp kernels/registry.hpp kernels/gemm/conv_lowering.hpp" ;;
    simulate) echo "base/ engine/ collectives/ results/ simulate/" ;;
    collectives) echo "base/ engine/ collectives/" ;;
    kernels | kernels/*) echo "base/ engine/ kernels/" ;;
    fuzz) echo "base/ data/ results/ harness/options.hpp harness/sweep.hpp harness/checkpoint.hpp fuzz/" ;;
  esac
}
# Files allowed one more header: the CUDA-only files of collectives use the cuda backend's device
# selection (docs/ARCHITECTURE.md, collectives row).
extra() {
  case "$1" in
    collectives/gpu_exchanges.cpp | collectives/nccl_allreduce.cpp) echo "kernels/cuda/device.hpp" ;;
  esac
}

# may_include FILE HEADER: whether FILE's folder (or FILE itself) may include HEADER.
may_include() {
  local p
  for p in $(allowed "$(dirname "$1")") $(extra "$1") config.h; do [[ $2 == "$p"* ]] && return 0; done
  return 1
}

# The check must be able to fail: the engine including a suite, a backend the harness.
# The record format and the harness below the analysis: neither may call it.
for bad in "src/engine/network.cpp suites/model_suite.hpp" "kernels/dnnl/conv.cpp harness/options.hpp" \
           "src/results/result_writer.cpp analysis/verdict.hpp" "src/harness/suite_runner.cpp analysis/table_presets.hpp" \
           "fuzz/result_file_target.cpp analysis/report.hpp" "src/analysis/verdict.cpp harness/options.hpp" \
           "collectives/ring.cpp kernels/cuda/device.hpp" "fuzz/idx_target.cpp suites/model_suite.hpp"; do
  if may_include $bad; then echo "FAIL: the check accepts $bad"; fail=1; fi
done

checked=0
while IFS= read -r file; do
  while IFS=: read -r line header; do
    checked=$((checked + 1))
    may_include "$file" "$header" && continue
    echo "FAIL: $file:$line includes \"$header\", which $(dirname "$file") may not call (docs/ARCHITECTURE.md)"
    fail=1
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(find src suites kernels collectives simulate fuzz \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) | sort)

# No circle in suites/: a unit (NAME.cpp with NAME.hpp) that includes another's header must not be
# included by it (what both need goes into a unit they share, suite_options.cpp, scale_common.cpp).
declare -A uses=()
while IFS= read -r file; do
  unit=$(basename "${file%.*}")
  while IFS= read -r other; do
    [ "$other" = "$unit" ] || uses[$unit]+=" $other "
  done < <(sed -n 's@^#include "suites/\([A-Za-z0-9_-]*\)\.hpp".*@\1@p' "$file")
done < <(find suites \( -name '*.cpp' -o -name '*.hpp' \) | sort)
units=0
for a in "${!uses[@]}"; do
  units=$((units + 1))
  for b in ${uses[$a]}; do
    if [[ "$a" < "$b" && "${uses[$b]-}" == *" $a "* ]]; then
      echo "FAIL: suites/$a and suites/$b include each other's headers: move what both need into a shared unit"
      fail=1
    fi
  done
done

echo "layering: $checked includes checked; $units units of suites/ without a circle"
exit $fail
