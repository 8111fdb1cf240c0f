#!/usr/bin/env bash
# The network between hosts is measured, not assumed: on a virtual cluster of 3 hosts
# (tests/cluster/cluster_up.sh), n2's link shaped to 1 gbit (tc tbf, both directions,
# tests/cluster/cluster_shape.sh):
#  - allreduce_sweep.sh (ring, 4 and 16 MiB, unchanged, through sbatch): the bus bandwidth the
#    extra 12 MiB took stays within the shaped rate (0.125 GB/s, 15% for the token bucket's burst),
#    and the 16 MiB bus bandwidth drops below 0.6 x the unshaped one;
#  - hpcnn-scale (resnet18, 44.7 MB of gradients, ring, srun on 3 hosts): the communication time
#    per iteration grows to at least 2 x the unshaped one and at least 70% of what 1 gbit allows
#    for the ring's traffic (2 (P-1)/P x 44.7 MB per rank: 0.48 s).
source "$(dirname "$0")/cluster_test_lib.sh"
cluster_start 3
js=$src/jobscripts
rate_gbs=0.125   # 1 gbit in GB/s

# allreduce_csv NAME: run the sweep job, print "size_bytes,time_avg_us,busbw_gbs" per size
allreduce_csv() {
  local dir=$work/$1 id
  id=$(submit "$dir" NODES=3 SIZES=4M,16M EXCHANGE=ring ITERS=8 WARMUP=2 OUT="$dir/out" --nodes=3 "$js/allreduce_sweep.sh")
  wait_job "$id" 180 || return 1
  [ "$(job_state "$id")" = COMPLETED ] || { echo "FAIL: job $id $(job_state "$id")"; cat "$dir/slurm-$id.out"; return 1; }
  "$build/hpcnn-summary" --format csv --columns size_bytes,time_avg_us,busbw_gbs "$dir/out" | tail -n +2 | sort -n
}
# comm_wait NAME: hpcnn-scale's communication time per iteration on 3 hosts
comm_wait() {
  timeout 300 srun -N 3 -n 3 --kill-on-bad-exit=1 "$build/hpcnn-scale" --model resnet18 --dataset cifar10 --batch 4 \
    --exchange ring --iters 3 --warmup 1 --output "$work/$1" --quiet || return 1
  "$build/hpcnn-summary" --format csv --columns comm_wait_s "$work/$1" | tail -n 1
}
# le A B / lt: compare decimals
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

free=$(allreduce_csv free) || fail=1
scale_free=$(comm_wait scale-free) || { echo "FAIL: hpcnn-scale unshaped"; fail=1; }
check "shape n2 to 1gbit" "$src/tests/cluster/cluster_shape.sh" "$cluster" n2 1gbit
shaped=$(allreduce_csv shaped) || fail=1
scale_shaped=$(comm_wait scale-shaped) || { echo "FAIL: hpcnn-scale shaped"; fail=1; }
check "lift the shaping" "$src/tests/cluster/cluster_shape.sh" "$cluster" n2 off
echo "allreduce unshaped (size,us,busbw GB/s): $(echo $free)"
echo "allreduce at 1gbit:                      $(echo $shaped)"
echo "hpcnn-scale comm_wait_s: unshaped $scale_free, at 1gbit $scale_shaped"
[ "$fail" = 0 ] || exit 1

# marginal BUSBW: the bus bandwidth of the extra bytes from 4 to 16 MiB (latency cancels)
marginal() {
  awk -F, 'NR == 1 { s0 = $1; t0 = $2 } NR == 2 { s1 = $1; t1 = $2 }
           END { printf "%.4f", (s1 - s0) * 2 * 2 / 3 / ((t1 - t0) * 1e-6) / 1e9 }' <<<"$1"
}
busbw16() { tail -n 1 <<<"$1" | cut -d, -f3; }
m=$(marginal "$shaped")
check "at 1gbit the extra 12 MiB moved at $m GB/s <= 1.15 x $rate_gbs" le "$m" "$(awk -v r=$rate_gbs 'BEGIN { print 1.15 * r }')"
check "at 1gbit the extra 12 MiB moved at $m GB/s >= 0.5 x $rate_gbs (the data went through)" le "$(awk -v r=$rate_gbs 'BEGIN { print 0.5 * r }')" "$m"
check "16 MiB bus bandwidth $(busbw16 "$shaped") GB/s at 1gbit < 0.6 x unshaped $(busbw16 "$free")" \
  le "$(busbw16 "$shaped")" "$(awk -v f="$(busbw16 "$free")" 'BEGIN { print 0.6 * f }')"
traffic_s=$(awk 'BEGIN { printf "%.3f", 11181642 * 4 * 2 * 2 / 3 / 0.125e9 }')
check "hpcnn-scale comm time $scale_shaped s at 1gbit >= 2 x unshaped $scale_free s" \
  le "$(awk -v f="$scale_free" 'BEGIN { print 2 * f }')" "$scale_shaped"
check "hpcnn-scale comm time $scale_shaped s at 1gbit >= 0.7 x $traffic_s s (ring traffic at 1 gbit)" \
  le "$(awk -v t="$traffic_s" 'BEGIN { print 0.7 * t }')" "$scale_shaped"
exit $fail
