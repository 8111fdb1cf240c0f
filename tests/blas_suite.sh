#!/usr/bin/env bash
# hpcnn-blas end to end, tiny: the three sweeps into HDF5, then `hpcnn-summary --table blas`
# (text and CSV): the CSV header is the blas table's, every sweep has its rows, thread counts are the
# ones read back from the libraries, rates and CPU/memory figures are positive where they apply.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
libs=$(./hpcnn-blas --list | sed -n '/^SGEMM libraries/,/^default/p' | awk '/^  /{print $1}' | grep -E '^(openblas|eigen)$' | paste -sd, -)
[ -n "$libs" ] || { echo "neither openblas nor eigen built: skipped"; exit 77; }
echo "libraries: $libs"
blas() { run ./hpcnn-blas "$@" --output "$out" --quiet; }
blas --sweep gemm --backend "$libs" --threads 1,2 --sizes 48,32x40x24 --iters 3 --warmup 1
blas --sweep layers --backend "$libs" --threads 1 --model lenet5 --batch 4 --iters 2 --warmup 1
# Enough iterations that /proc/stat (100 ticks/s) sees the run: CPU user % must be positive.
blas --sweep model --backend "$libs" --threads 1,default --model lenet5 --batch 32 --iters 40 --warmup 1

csv=$(./hpcnn-summary --table blas --format csv "$out") || { echo "FAIL: hpcnn-summary"; fail=1; }
echo "$csv"
header=$(printf '%s\n' "$csv" | head -1)
want="sweep,backend,threads,size,gflops,sec_per_iter,cpu_user_pct,cpu_sys_pct,cpu_iowait_pct,mem_avg_mib,mem_max_mib"
[ "$header" = "$want" ] || { echo "FAIL: header '$header'"; fail=1; }
nlibs=$(printf '%s' "$libs" | tr ',' '\n' | grep -c '')
printf '%s\n' "$csv" | awk -F, -v nlibs="$nlibs" '
  NR == 1 { next }
  { n[$1]++ }
  $5 == "" || $5 <= 0 { print "FAIL: gflops not positive: " $0; bad = 1 }
  $6 == "" || $6 <= 0 { print "FAIL: sec_per_iter not positive: " $0; bad = 1 }
  $1 == "gemm" && ($3 != 1 && $3 != 2) { print "FAIL: gemm threads not read back as 1 or 2: " $0; bad = 1 }
  $1 == "gemm" && ($4 != "48x48x48" && $4 != "32x40x24") { print "FAIL: gemm size: " $0; bad = 1 }
  $1 == "gemm" && $7 != "" { print "FAIL: gemm row has CPU usage: " $0; bad = 1 }
  $1 == "layers" && ($3 != 1 || $4 !~ /^[0-9]+x[0-9]+x[0-9]+$/) { print "FAIL: layers row: " $0; bad = 1 }
  $1 == "model" && ($7 == "" || $7 <= 0 || $10 == "" || $10 <= 0 || $11 < $10) { print "FAIL: model CPU/memory: " $0; bad = 1 }
  END {
    if (n["gemm"] != 4 * nlibs) { print "FAIL: " n["gemm"] " gemm rows, want " 4 * nlibs; bad = 1 }
    if (n["layers"] != 5 * nlibs) { print "FAIL: " n["layers"] " layer rows, want " 5 * nlibs " (lenet5: 2 conv + 3 fc)"; bad = 1 }
    if (n["model"] != 2 * nlibs) { print "FAIL: " n["model"] " model rows, want " 2 * nlibs; bad = 1 }
    exit bad
  }' || fail=1
# The text table prints the same rows with units.
./hpcnn-summary --table blas "$out" | grep -q 'GFLOP/s' || { echo "FAIL: text table"; fail=1; }

# oneDNN's bf16 GEMM beside its SGEMM where this CPU has a bf16 kernel: checked against the
# products of the bf16-rounded operands (status ok), rated against the bf16 peak, which is above
# the fp32 one, and its kernel recorded.
if ./hpcnn-train --list | grep -q -- '--precision fp32,bf16 on this CPU'; then
  run ./hpcnn-blas --sweep gemm --backend dnnl --precision fp32,bf16 --threads 1 --sizes 96 --iters 3 --warmup 1 \
    --output "$out/bf16" --quiet
  got=$(./hpcnn-summary --format csv --columns precision,status,peak_gflops,gemm_check_error "$out/bf16" | tail -n +2)
  echo "$got"
  awk -F, '{ peak[$1] = $3; if ($2 != "ok") bad = 1 }
    END { exit !(!bad && NR == 2 && peak["bf16"] > 1.3 * peak["fp32"]) }' <<<"$got" ||
    { echo "FAIL: fp32 and bf16 GEMM rows (precision,status,peak_gflops,gemm_check_error) above"; fail=1; }
  h5dump -A "$out"/bf16/*.h5 | grep -q 'dnnl_bf16_gemm_kernel' || { echo "FAIL: no dnnl_bf16_gemm_kernel in the provenance"; fail=1; }
else
  echo "bf16 GEMM not tested: $(./hpcnn-train --list | grep -o -- '--precision fp32 (bf16: .*')"
fi
exit $fail
