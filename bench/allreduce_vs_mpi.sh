#!/usr/bin/env bash
# The speed goals of the exchange schemes, measured side by side at -np 2 on this machine:
#   1. ring's bus bandwidth >= 0.9 x MPI_Allreduce's for every size >= 1 MiB (both from one
#      hpcnn-allreduce run per repeat, interleaved per size; median busbw over the repeats);
#   2. hpcnn-scale resnet18 (--exchange ring, default --bucket-mb) hides >= 50% of the
#      communication behind backward (median overlap over the repeats).
# usage: bench/allreduce_vs_mpi.sh [BUILDDIR] ; env REPEAT (default 3), SIZES (default 1M,4M,16M),
#        LAUNCH (default "mpirun -np 2"). Exit 0 when both goals hold.
set -euo pipefail
build=${1:-.}
REPEAT=${REPEAT:-3}
SIZES=${SIZES:-1M,4M,16M}
LAUNCH=${LAUNCH:-mpirun -np 2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$REPEAT"); do
  $LAUNCH "$build/hpcnn-allreduce" --exchange mpi,ring,rhd --sizes "$SIZES" --iters 20 --warmup 3 --quiet --output "$out/ar"
  $LAUNCH "$build/hpcnn-scale" --model resnet18 --backend dnnl --threads 1 --batch 32 --exchange ring \
    --iters 10 --warmup 2 --quiet --output "$out/scale"
done
"$build/hpcnn-summary" --format csv --columns exchange,size_bytes,busbw_gbs,wrong "$out/ar" > "$out/ar.csv"
"$build/hpcnn-summary" --format csv --columns exchange,bucket_mb,buckets,backward_s,comm_wait_s,comm_exposed_s,comm_s,overlap "$out/scale" > "$out/scale.csv"
python3 - "$out/ar.csv" "$out/scale.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bw = {}
for r in rows:
    assert r["wrong"] == "0", r
    bw.setdefault((r["exchange"], int(r["size_bytes"])), []).append(float(r["busbw_gbs"]))
ok = True
print("allreduce at -np 2: median bus bandwidth over %d repeats [GB/s]" % len(next(iter(bw.values()))))
print("%10s %8s %8s %8s %12s" % ("size", "mpi", "ring", "rhd", "ring/mpi"))
for size in sorted({s for _, s in bw}):
    m = statistics.median(bw[("mpi", size)]); g = statistics.median(bw[("ring", size)]); h = statistics.median(bw[("rhd", size)])
    ratio = g / m if m > 0 else float("inf")
    good = ratio >= 0.9 or size < (1 << 20)
    ok &= good
    print("%10d %8.3f %8.3f %8.3f %12.3f %s" % (size, m, g, h, ratio, "" if good else "  < 0.9: FAIL"))
sc = list(csv.DictReader(open(sys.argv[2])))
ov = [float(r["overlap"]) for r in sc]
print("hpcnn-scale resnet18 ring -np 2, bucket %s MiB (%s buckets): overlap per run %s; median %.3f (goal >= 0.5)"
      % (sc[0]["bucket_mb"], sc[0]["buckets"], " ".join("%.3f" % v for v in ov), statistics.median(ov)))
print("  backward_s %s | comm_wait_s %s | comm_exposed_s %s | comm_s %s" % tuple(" ".join(r[k][:6] for r in sc) for k in ("backward_s", "comm_wait_s", "comm_exposed_s", "comm_s")))
ok &= statistics.median(ov) >= 0.5
print("goals: " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
