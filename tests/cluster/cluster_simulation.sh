#!/usr/bin/env bash
# The simulation checked against measurement (docs/SIMULATION.md, "How far to trust it"): on a
# virtual cluster of 8 hosts whose links are all shaped to 100 mbit (tc tbf: the network, not the 2
# shared cores, decides the time),
#  - measured (HOSTS, default 2 3 4 8): hpcnn-allreduce (mpi, ring, rhd; 64 KiB to 4 MiB, to 1 MiB at
#    8 hosts) and hpcnn-scale (LeNet-5, batch 32: ring, rhd, mpi at every host count; ps-sync,
#    ps-async with a server on a host of its own, from 3 hosts), one rank per host;
#  - simulated: hpcnn-simulate on a flat switch whose link is fitted from the 2-host ring allreduce
#    (--fit-link); each hpcnn-scale point with the compute its own run measured (--compute: the
#    hosts share this machine's 2 cores, so a worker computes 2-8x slower than one rank alone; its
#    backward_compute_s, the exchange's work taken out); a parameter server's point, whose workers
#    run no optimizer, with the compute of the ring on as many hosts (as many processes share
#    the cores);
#  - every simulated point within TOLERANCE (default 25%, for the noise of hosts sharing 2 cores)
#    of its measured one: allreduce time at >= 64 KiB, and the iteration time; how many are within
#    the 15% goal is printed. A point beyond it is measured once more and the faster of the two
#    medians counts: another process on the shared cores only ever makes a measurement slower
#    (a 4-host rhd 4 MiB call once measured 0.75 s against 0.57-0.63 s for its neighbours), while an
#    error of the simulator's repeats. Printed, not checked (docs/SIMULATION.md says what is known
#    of why): ps-async from 3 workers (1.3-1.6x slower than simulated at 3), and rhd's and Open
#    MPI's allreduce at 8 hosts from 1 MiB (1.3-1.4x).
# The errors per point are printed and kept (CLUSTER_TEST_KEEP=1 keeps the files).
# Environment (bench/simulation_vs_measured.sh sets them for the larger runs): HOSTS, RATE, TOLERANCE,
# SIZES and SIZES_8 (the allreduce sizes below and at 8 hosts), ALLREDUCE_HOSTS (the host counts
# whose allreduce is measured and checked; default HOSTS), MODEL and BATCH (LeNet-5, 32), ITERS and
# WARMUP (hpcnn-scale's, 8 and 2), STUDY (1: also the simulate_scaling.sh study; 0: not).
source "$(dirname "$0")/cluster_test_lib.sh"
"$build/hpcnn-simulate" --list | grep -q '^rank program: none' && skip "this build has no simulator (libsimgrid-dev)"
TOLERANCE=${TOLERANCE:-0.25}
RATE=${RATE:-100mbit}
HOSTS=${HOSTS:-2 3 4 8}   # the host counts measured; 2 is where the link is fitted
ALLREDUCE_HOSTS=${ALLREDUCE_HOSTS:-$HOSTS}
MODEL=${MODEL:-lenet5} BATCH=${BATCH:-32} ITERS=${ITERS:-8} WARMUP=${WARMUP:-2} STUDY=${STUDY:-1}
max_hosts=$(tr ' ' '\n' <<<"$HOSTS" | sort -n | tail -n 1)
cluster_start "$max_hosts"
for ((k = 1; k <= max_hosts; k++)); do check "shape n$k to $RATE" "$src/tests/cluster/cluster_shape.sh" "$cluster" "n$k" "$RATE"; done
source "$src/tests/cluster/cluster_lib.sh"
cluster_names "$cluster"
# A connection used once a step (rhd's far partner, a parameter server's) would start again from a
# small congestion window after each idle spell; clusters that run MPI over TCP turn that off.
for ((k = 1; k <= max_hosts; k++)); do
  check "n$k keeps its congestion window between messages" ip netns exec "$(cl_netns "$k")" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
done
[ "$fail" = 0 ] || exit 1

# Open MPI's TCP transport sends every message eagerly here: with its rendezvous (above 64 KiB), an
# exchange that loads both directions of one connection (2-host ring, rhd) stalls in steps of up
# to 2x at 1-4 MiB, a protocol cost no simulated link has (docs/SIMULATION.md, "How far to trust
# it", measures it). The simulator's network is checked without it.
export OMPI_MCA_btl_tcp_eager_limit=$((8 << 20)) OMPI_MCA_btl_tcp_max_send_size=$((8 << 20))
# srun_on N CMD...: one rank on each of N hosts
srun_on() { local n=$1; shift; timeout 600 srun -N "$n" -n "$n" --kill-on-bad-exit=1 "$@"; }
sizes=${SIZES:-64K,256K,1M,4M}
# measure_scale HOSTS EXCHANGE [ARGS...]: one hpcnn-scale point in a folder of its own (its file is
# the compute of its simulation)
measure_scale() {
  local n=$1 exchange=$2 servers=()
  [[ "$exchange" = ps-* ]] && servers=(--ps-servers 1)
  check "hpcnn-scale $exchange measured on $n hosts" srun_on "$n" "$build/hpcnn-scale" --model "$MODEL" --batch "$BATCH" \
    --exchange "$exchange" "${servers[@]}" --iters "$ITERS" --warmup "$WARMUP" --output "${3:-$work/measured}/scale-$exchange-$n" --quiet
}
# measure_allreduce HOSTS EXCHANGES SIZES [FOLDER]
measure_allreduce() {
  check "allreduce $2 measured on $1 hosts" srun_on "$1" "$build/hpcnn-allreduce" --exchange "$2" --sizes "$3" \
    --iters 9 --warmup 2 --output "${4:-$work/measured}" --quiet
}
for n in $HOSTS; do
  [ "$n" = 2 ] || [[ " $ALLREDUCE_HOSTS " = *" $n "* ]] &&
    measure_allreduce "$n" mpi,ring,rhd "$([ "$n" -lt 8 ] && echo "$sizes" || echo "${SIZES_8:-64K,256K,1M}")"
  for exchange in ring rhd mpi; do measure_scale "$n" "$exchange"; done
done
for n in $HOSTS; do
  [ "$n" -ge 3 ] || continue
  for exchange in ps-sync ps-async; do measure_scale "$n" "$exchange"; done
done
two_hosts=$(for f in "$work"/measured/hpcnn-allreduce-*.h5; do
  [ "$("$build/hpcnn-summary" --format csv --columns ranks "$f" | tail -n 1)" = 2 ] && echo "$f"; done | head -n 1)
[ -n "$two_hosts" ] || { echo "FAIL: no 2-host allreduce to fit the link from"; exit 1; }

check "allreduce simulated" "$build/hpcnn-simulate" --fit-link "$two_hosts" --topology flat --exchange mpi,ring,rhd \
  --allreduce-sizes "$sizes" --nodes "$(printf '%s\n' 2 $ALLREDUCE_HOSTS | sort -nu | paste -sd,)" --steps 3 --warmup 1 --output "$work/simulated" --quiet
for point in "$work"/measured/scale-*; do
  [[ "${point##*/}" =~ ^scale-(.*)-([0-9]+)$ ]] || continue
  exchange=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} servers=() compute=$point
  [[ "$exchange" = ps-* ]] && servers=(--ps-servers 1) compute=$work/measured/scale-ring-$n
  check "hpcnn-scale $exchange simulated on $n nodes" "$build/hpcnn-simulate" --compute "$(ls "$compute"/*.h5)" \
    --fit-link "$two_hosts" --topology flat --model "$MODEL" --batch "$BATCH" --exchange "$exchange" "${servers[@]}" --nodes "$n" \
    --output "$work/simulated" --quiet
done
"$build/hpcnn-summary" --table simulated-allreduce "$work/simulated" | head -3

# The study as a site runs it, small, with the documented allocation of 2 nodes:
# jobscripts/simulate_scaling.sh under sbatch (calibrate on 2 hosts, measure on 1-2 workers, the
# parameter servers at 1 worker only, since their server takes a node of its own; simulate to 64
# nodes on the fitted link, the tables and the plot).
[ "$STUDY" = 1 ] && study=$(submit "$work/study" MODEL=lenet5 BATCH=32 MEASURE_NODES="1 2" SIM_NODES=1,2,4,64 ITERS=5 \
  LINK_SIZES=64K,256K,1M,4M OUT="$work/study/out" --nodes=2 "$src/jobscripts/simulate_scaling.sh")
if [ "$STUDY" = 1 ] && wait_job "$study" 400; then
  check "simulate_scaling.sh completed" test "$(job_state "$study")" = COMPLETED
  check "it said the parameter servers at 2 workers do not fit 2 nodes" \
    grep -q "the parameter servers at 2 worker(s) need 3 nodes, the allocation has 2" "$work/study/slurm-$study.out"
  check "its plot" test -s "$work/study/out/scaling.svg"
  check "its scaling table holds measured and simulated points of every scheme" python3 - \
    "$("$build/hpcnn-summary" --format csv --columns suite,exchange,ranks,status "$work/study/out/measured" "$work/study/out/simulated")" <<'EOF'
import csv, io, sys
rows = [r for r in csv.DictReader(l for l in io.StringIO(sys.argv[1]) if l.strip() and not l.startswith('#'))]
for scheme in ('mpi', 'ring', 'rhd', 'ps-sync', 'ps-async'):
    for suite, ranks in (('hpcnn-scale', None), ('hpcnn-simulate', '64')):
        if not any(r['suite'] == suite and r['exchange'] == scheme and r['status'] == 'ok' and ranks in (None, r['ranks']) for r in rows):
            sys.exit(f"  no {suite} point of {scheme}" + (f" at {ranks} ranks" if ranks else ""))
EOF
fi

# compare_points RETRY_FILE MEASURED_FOLDER...: every simulated point against the fastest of its
# measured medians; with a RETRY_FILE, the points beyond TOLERANCE are listed there ("allreduce
# HOSTS EXCHANGE BYTES" or "scale HOSTS EXCHANGE") instead of failing.
cols=suite,exchange,ranks,workers,size_bytes,iter_median_s,time_avg_us,link_gbps,link_latency_us
compare_points() {
  python3 - "$TOLERANCE" "$1" \
    "$("$build/hpcnn-summary" --format csv --columns "$cols" "${@:2}")" \
    "$("$build/hpcnn-summary" --format csv --columns "$cols" "$work/simulated")" <<'EOF'
import csv, io, sys
tol, retry_file = float(sys.argv[1]), sys.argv[2]
rows = lambda text: [r for r in csv.DictReader(l for l in io.StringIO(text) if l.strip() and not l.startswith('#'))]
measured, simulated = rows(sys.argv[3]), rows(sys.argv[4])
link = simulated[0]
print(f"fitted link: {float(link['link_gbps']):.4g} Gb/s, {float(link['link_latency_us']):.3g} us per hop")
fastest = {}
for m in measured:
    key = (m['suite'], m['exchange'], m['ranks'], m['size_bytes'])
    if key not in fastest or float(m['iter_median_s']) < float(fastest[key]['iter_median_s']):
        fastest[key] = m
bad, retry = [], []
within_goal = compared = 0
def compare(what, again, meas, sim, checked=True):
    global within_goal, compared
    err = sim / meas - 1
    ok = abs(err) <= tol
    if checked:
        compared += 1
        within_goal += abs(err) <= 0.15
        if not ok:
            (retry if retry_file else bad).append(again)
    verdict = 'info:' if not checked else 'ok:  ' if ok else 'again:' if retry_file else 'FAIL:'
    print(f"{verdict} {what}: measured {meas:.4g} s, simulated {sim:.4g} s, error {100 * err:+.1f}%")
# hpcnn-allreduce: the call's time (median over iterations of the slowest rank), sizes >= 64 KiB
for m in (r for r in fastest.values() if r['suite'] == 'hpcnn-allreduce'):
    s = [r for r in simulated if r['size_bytes'] == m['size_bytes'] and r['exchange'] == m['exchange'] and r['ranks'] == m['ranks']]
    if s and int(m['size_bytes']) >= 65536:
        # rhd's and Open MPI's pairwise exchanges at 8 hosts and 1 MiB or more: measured 28-37%
        # slower than simulated, the ring within 2% (docs/SIMULATION.md: the links' queues
        # overflow as one step's data meet the next's); printed, not checked.
        known = m['exchange'] in ('rhd', 'mpi') and int(m['ranks']) >= 8 and int(m['size_bytes']) >= 1 << 20
        compare(f"allreduce {m['exchange']} {m['ranks']} hosts {int(m['size_bytes']) // 1024} KiB",
                f"allreduce {m['ranks']} {m['exchange']} {m['size_bytes']}", float(m['iter_median_s']), float(s[0]['iter_median_s']),
                checked=not known)
# hpcnn-scale: the iteration time (median of the slowest worker)
for m in (r for r in fastest.values() if r['suite'] == 'hpcnn-scale'):
    s = [r for r in simulated if not r['size_bytes'] and r['exchange'] == m['exchange'] and r['ranks'] == m['ranks']]
    if s:
        compare(f"hpcnn-scale {m['exchange']} {m['workers']} workers", f"scale {m['ranks']} {m['exchange']}",
                float(m['iter_median_s']), float(s[0]['iter_median_s']),
                checked=not (m['exchange'] == 'ps-async' and int(m['workers']) >= 3))
if retry_file:
    with open(retry_file, 'w') as f:
        f.writelines(line + '\n' for line in retry)
    print(f"{compared - len(retry)} of {compared} checked points within {100 * tol:.0f}%, {len(retry)} measured again")
else:
    print(f"{within_goal} of {compared} checked points within 15%, all within {100 * tol:.0f}%" if not bad else
          f"{len(bad)} of {compared} checked points beyond {100 * tol:.0f}%")
sys.exit(1 if bad or not compared else 0)
EOF
}
compare_points "$work/again" "$work/measured" || fail=1
if [ "$fail" = 0 ] && [ -s "$work/again" ]; then
  while read -r -u 3 what n exchange bytes; do  # srun reads stdin: the list comes on fd 3
    if [ "$what" = allreduce ]; then measure_allreduce "$n" "$exchange" "$bytes" "$work/again-measured"
    else measure_scale "$n" "$exchange" "$work/again-measured"; fi
  done 3< "$work/again"
  compare_points "" "$work/measured" "$work/again-measured" || fail=1
fi
exit $fail
