#!/usr/bin/env bash
# The harness adds nothing: OpenBLAS SGEMM GFLOP/s as hpcnn-blas --sweep gemm reports it against
# bench/blas_direct (cblas_sgemm in a tiny program), same sizes, threads, calls and warm-up, run
# alternately ROUNDS times. Per size it prints every pair and the median over rounds of
#   median-call ratio  harness / direct from each one's median call time
#   best-call ratio    the same from each one's fastest call (the statistic that survives a
#                      machine shared with other jobs: a contended call is only ever slower)
# and PASS when the best-call ratio is within 5% of 1. Run from the build tree after `make bench`:
#   bench/blas_direct.sh [SIZES] [THREADS] [ROUNDS]      (defaults: 1024,2048  2  5)
set -eu
sizes=${1:-1024,2048} threads=${2:-2} rounds=${3:-5} calls=${CALLS:-20} warmup=${WARMUP:-3}
build=${HPCNN_BUILDDIR:-.}
[ -x "$build/bench/blas_direct" ] || { echo "build bench/blas_direct first: make bench" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  rm -rf "$tmp/out"
  "$build/hpcnn-blas" --sweep gemm --backend openblas --threads "$threads" --sizes "$sizes" \
      --iters "$calls" --warmup "$warmup" --output "$tmp/out" --quiet
  # size MxNxK -> N (square), median and fastest call -> GFLOP/s
  "$build/hpcnn-summary" --format csv --columns size,gflops_median,iter_min_s "$tmp/out" | tail -n +2 |
    awk -F, '{ split($1, d, "x"); printf "harness %s %s %.3f\n", d[1], $2, 2 * d[1] * d[2] * d[3] / $3 * 1e-9 }' >> "$tmp/pairs"
  "$build/bench/blas_direct" "$sizes" "$threads" "$calls" "$warmup" |
    awk '{ printf "direct %s %s %s\ncpu %s %s 0\n", $1, $2, $3, $1, $4 }' >> "$tmp/pairs"
done
awk '
  { k[$1, $2]++; med[$1, $2, k[$1, $2]] = $3; best[$1, $2, k[$1, $2]] = $4; sizes[$2] = 1 }
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    ok = 1
    for (n in sizes) {
      m = k["harness", n]
      for (i = 1; i <= m; i++) {
        hm[i] = med["harness", n, i]; dm[i] = med["direct", n, i]; rm[i] = hm[i] / dm[i]
        hb[i] = best["harness", n, i]; db[i] = best["direct", n, i]; rb[i] = hb[i] / db[i]
        c[i] = med["cpu", n, i]
        printf "n=%s round %d: median call: harness %.1f direct %.1f (ratio %.3f); best call: harness %.1f direct %.1f (ratio %.3f)\n", n, i, hm[i], dm[i], rm[i], hb[i], db[i], rb[i]
      }
      mrm = median(rm, m); mrb = median(rb, m)
      verdict = (mrb >= 0.95 && mrb <= 1.05) ? "PASS" : "FAIL"
      if (verdict == "FAIL") ok = 0
      printf "n=%s: median over rounds: harness %.1f / direct %.1f GFLOP/s (median call, ratio %.3f); harness %.1f / direct %.1f GFLOP/s (best call, ratio %.3f)  %s (best-call ratio within 5%%)\n", n, median(hm, m), median(dm, m), mrm, median(hb, m), median(db, m), mrb, verdict
      printf "n=%s: direct, GFLOP per CPU-second of the process (one core while it ran): median %.1f\n", n, median(c, m)
    }
    exit ok ? 0 : 1
  }' "$tmp/pairs"
