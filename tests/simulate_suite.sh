#!/usr/bin/env bash
# hpcnn-simulate (SimGrid SMPI): every exchange scheme at 64 simulated nodes from a measured node.
#  1. a node measured by hpcnn-train (LeNet-5, batch 42) is simulated at 1 and 64 nodes of a fat
#     tree for ring, rhd, mpi, ps-sync and ps-async (4 servers): every point ok but the parameter
#     servers' on one node (skipped: no worker left);
#  2. the numbers hold together: one node's simulated step is the measured one (efficiency near 1);
#     ring and rhd send the bandwidth-optimal 2(P-1)/P of the gradients per step and the binomial
#     mpi its whole buffer per tree level; a simulated exchange alone (comm_s) agrees with the
#     alpha-beta estimate (analytic_comm_s) within 35% for the allreduce schemes, whose costs the
#     estimate models exactly but for link contention; the parameter servers are slower than ring
#     at 64 nodes (the server's link is the bottleneck);
#     The run's provenance names the SimGrid that ran it and its smpirun, by default the one
#     configure found (HPCNN_SMPIRUN): its version as the rank program reported it;
#  3. hpcnn-summary shows the points (--table simulation) and plots them beside a measured point;
#  4. bad input, one line and exit 2, no result file: a platform file that does not parse, a
#     compute file without training phases, more nodes than the platform has, a simulation larger
#     than this machine's memory;
#  5. a simulation that runs out of memory maps (SimGrid's message, as smpirun prints it at a few
#     thousand ranks under the default vm.max_map_count): the point fails in one line that names
#     vm.max_map_count and how to raise it, exit 1 (with --smpirun a relative path);
#  6. the node's compute from hpcnn-scale points (2 ranks, oversubscribed): an allreduce point's
#     backward is its backward_compute_s (the exchange's calls during backward taken out, which the
#     simulation makes itself): one simulated node's backward phase is exactly that; a parameter
#     server's point, whose workers apply no optimizer, is refused (exit 2);
#  7. the node's add and copy rates: hpcnn-train and hpcnn-scale record them, and a simulation
#     charges the measured node's (node_rates_from names the --compute file), the options' where
#     given, each rate on its own;
#  8. what saves the simulation's wall time leaves its figures alone: the CPU-clock interposer
#     preloaded into smpirun answers a program's thread CPU clock with zero and passes its
#     monotonic clock on, and a ring point run with the rank program copied where no interposer
#     lies beside it steps exactly as with it (each record says which it ran under), as with a
#     LD_PRELOAD of the user's beside it; it needs the C library only; --exchange-alone no steps exactly as yes, without
#     comm_s and overlap; build_simgrid.sh's fixes to SimGrid's source apply once, are then found
#     in place, and a source they do not fit stops the build (exit 1, one line);
#  9. a stop signal during a simulation (SIGTERM, as a batch system's time limit sends) ends it at
#     once: smpirun's whole process group is gone, so is the scratch folder, the completed point is
#     kept (exit 75), and --resume simulates the interrupted point as an uninterrupted run does.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ./hpcnn-simulate --list | grep -q '^rank program: none'; then
  echo "SKIP: this build has no simulator (configure found no SimGrid: Debian libsimgrid-dev)"; exit 77
fi

# 1. the node, then the simulations
run ./hpcnn-train --model lenet5 --batch 42 --iters 20 --warmup 3 --threads 1 --output "$out/node" --quiet
node=$(ls "$out"/node/*.h5)
run timeout 600 ./hpcnn-simulate --compute "$node" --model lenet5 --batch 42 --exchange ring,rhd,mpi,ps-sync,ps-async \
  --ps-servers 4 --nodes 1,64 --topology fat-tree --link-gbps 10 --output "$out/sim" --quiet
csv=$(./hpcnn-summary --format csv --columns exchange,nodes,workers,params,efficiency,bytes_sent,comm_s,analytic_comm_s,iter_median_s,status "$out/sim")
echo "$csv"
[ "$(grep -c ',ok$' <<<"$csv")" = 8 ] && [ "$(grep -c ',skipped$' <<<"$csv")" = 2 ] ||
  { echo "FAIL: want 8 points ok and the 1-node ps-sync and ps-async skipped (4 servers leave no worker on 1 node)"; fail=1; }

# 2. the numbers
python3 - "$csv" <<'EOF' || fail=1
import csv, io, math, sys
rows = [r for r in csv.DictReader(io.StringIO(sys.argv[1])) if r['status'] == 'ok']
bad = 0
def check(ok, what):
    global bad
    print(('ok:   ' if ok else 'FAIL: ') + what)
    bad += not ok
get = lambda ex, n: next(r for r in rows if r['exchange'] == ex and r['nodes'] == str(n))
params = float(rows[0]['params'])
for ex in ('ring', 'rhd', 'mpi'):
    e = float(get(ex, 1)['efficiency'])
    check(0.9 < e < 1.1, f'{ex} at 1 node: efficiency {e:.3f} near 1')
for ex in ('ring', 'rhd'):
    r = get(ex, 64)
    want = 2 * 63 / 64 * params * 4
    check(abs(float(r['bytes_sent']) / want - 1) < 0.02, f"{ex} at 64 nodes sends {float(r['bytes_sent']):.4g} B a step, 2(P-1)/P of the gradients {want:.4g}")
r = get('mpi', 64)
check(abs(float(r['bytes_sent']) / (params * 4 * 6) - 1) < 0.02, f"mpi (binomial) at 64 nodes: rank 0 sends the whole buffer once per level (6): {float(r['bytes_sent']):.4g} B")
for ex in ('ring', 'rhd', 'mpi'):
    r = get(ex, 64)
    sim, est = float(r['comm_s']), float(r['analytic_comm_s'])
    check(abs(sim / est - 1) < 0.35, f'{ex} at 64 nodes: simulated exchange {sim:.4g} s vs alpha-beta {est:.4g} s')
ring = float(get('ring', 64)['iter_median_s'])
for ex in ('ps-sync', 'ps-async'):
    check(float(get(ex, 64)['iter_median_s']) > ring, f'{ex} at 64 nodes slower than ring ({float(get(ex, 64)["iter_median_s"]):.4g} vs {ring:.4g} s)')
sys.exit(1 if bad else 0)
EOF

# The SimGrid that ran the points, in the provenance: the version the rank program reported (the
# one smpicxx compiled it against, SIMGRID_VERSION in its header) and configure's smpirun.
sim_file=$(ls "$out"/sim/*.h5)
simgrid=$(h5dump -a /provenance/libraries/SimGrid "$sim_file" 2>/dev/null | sed -n 's/.*(0): "\(.*\)"/\1/p')
smpicxx=$(sed -n 's/^SMPICXX = //p' Makefile)
header_version=$(echo '#include <simgrid/version.h>
SIMGRID_VERSION_MAJOR.SIMGRID_VERSION_MINOR.SIMGRID_VERSION_PATCH' | $smpicxx -E -P -x c++ - 2>/dev/null | tail -1 | tr -d ' ')
smpirun=$(sed -n 's/^#define HPCNN_SMPIRUN "\(.*\)"/\1/p' config.h)
echo "provenance SimGrid: '$simgrid' (headers $header_version, configure's smpirun $smpirun)"
[ -n "$header_version" ] && [ "$simgrid" = "$header_version ($smpirun)" ] ||
  { echo "FAIL: the provenance's SimGrid is not '$header_version ($smpirun)'"; fail=1; }

# 3. hpcnn-summary: the simulation table by default, and a scaling plot with a measured point
./hpcnn-summary "$out/sim" > "$out/table.txt"
head -3 "$out/table.txt"
grep -q 'analytic_comm_s' "$out/table.txt" && grep -q '^lenet5 *ring *fat-tree *64 ' "$out/table.txt" ||
  { echo "FAIL: no simulation table"; cat "$out/table.txt"; fail=1; }
if command -v gnuplot >/dev/null; then
  run ./hpcnn-summary --table scaling --plot "$out/scaling.svg" "$out/sim" "$node"
  [ -s "$out/scaling.svg" ] || { echo "FAIL: no scaling plot"; fail=1; }
fi

# 4. bad input
error_lines='^hpcnn-'
printf '<?xml version="1.0"?>\n<platform version="4.1">\n  <zone id="broken"\n</platform>\n' > "$out/broken.xml"
expect_error 2 "--platform $out/broken.xml: SimGrid cannot load it" -- \
  ./hpcnn-simulate --compute "$node" --batch 42 --nodes 2 --platform "$out/broken.xml"
run ./hpcnn-allreduce --exchange ring --sizes 4K --iters 2 --warmup 1 --output "$out/allreduce" --quiet
expect_error 2 "no training point of lenet5 at batch 42" -- \
  ./hpcnn-simulate --compute "$(ls "$out"/allreduce/*.h5)" --batch 42 --nodes 2
cat > "$out/four.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="four" prefix="h" radical="0-3" suffix="" speed="1Gf" bw="1GBps" lat="1us"/>
  </zone>
</platform>
EOF
expect_error 2 "has 4 hosts, --nodes 8 asked for" -- \
  ./hpcnn-simulate --compute "$node" --batch 42 --nodes 8 --platform "$out/four.xml"
expect_error 2 "more than the" -- ./hpcnn-simulate --compute "$node" --batch 42 --nodes 65536 --ranks-per-node 1024

# 5. out of memory maps: an smpirun that fails as SimGrid's does (its words, exit 134), named by a
# relative path (the simulator starts it in a scratch folder)
cat > "$out/smpirun-no-maps" <<'EOF'
#!/usr/bin/env bash
echo "[node-3646:3646:(3647) 0.907621] ./src/smpi/internals/smpi_memory.cpp:163: [root/CRITICAL] Failed to map fd 4 with size 3418112: Cannot allocate memory"
echo "If you are running a lot of ranks, you may be exceeding the amount of mappings allowed per process."
echo "Execution failed with code 134."
exit 134
EOF
chmod +x "$out/smpirun-no-maps"
expect_error 1 "Failed to map fd 4 with size 3418112: Cannot allocate memory: its ranks' buffers need more memory maps than vm.max_map_count" -- \
  ./hpcnn-simulate --compute "$node" --batch 42 --nodes 2 --exchange ring --smpirun "$(realpath --relative-to=. "$out/smpirun-no-maps")"

# 6. compute from hpcnn-scale
run $MPIRUN -np 2 ./hpcnn-scale --model lenet5 --batch 42 --exchange ring --bucket-mb 0.05 --iters 20 --warmup 3 \
  --threads 1 --output "$out/scale-ring" --quiet
run ./hpcnn-simulate --compute "$(ls "$out"/scale-ring/*.h5)" --model lenet5 --batch 42 --exchange ring --nodes 1 \
  --output "$out/sim-from-scale" --quiet
python3 - "$(./hpcnn-summary --format csv --columns backward_s,backward_compute_s "$out/scale-ring")" \
  "$(./hpcnn-summary --format csv --columns backward_s "$out/sim-from-scale")" <<'EOF' || fail=1
import sys
measured = sys.argv[1].strip().splitlines()[-1].split(',')
whole, compute = float(measured[0]), float(measured[1])
simulated = float(sys.argv[2].strip().splitlines()[-1])
print(f"measured backward {whole:.6g} s, of it compute {compute:.6g} s; simulated on one node {simulated:.6g} s")
ok = 0 < compute <= whole and abs(simulated / compute - 1) < 0.002
print(("ok:   " if ok else "FAIL: ") + "one simulated node's backward is the measured backward less the exchange's calls")
sys.exit(0 if ok else 1)
EOF
run $MPIRUN -np 2 ./hpcnn-scale --model lenet5 --batch 42 --exchange ps-sync --iters 3 --warmup 1 --threads 1 \
  --output "$out/scale-ps" --quiet
expect_error 2 "is ps-sync's, whose workers apply no optimizer" -- \
  ./hpcnn-simulate --compute "$(ls "$out"/scale-ps/*.h5)" --model lenet5 --batch 42 --nodes 2 --exchange ring

# 7. the node's rates
rates() { ./hpcnn-summary --format csv --columns node_add_gbps,node_copy_gbps,node_rates_from "$1" | tail -n 1; }
scale_rates=$(./hpcnn-summary --format csv --columns node_add_gbps,node_copy_gbps "$out/scale-ring" | tail -n 1)
run ./hpcnn-simulate --compute "$node" --model lenet5 --batch 42 --exchange ring --nodes 2 --output "$out/sim-rates" --quiet
run ./hpcnn-simulate --compute "$node" --model lenet5 --batch 42 --exchange ring --nodes 2 --add-gbps 3 --copy-gbps 5 \
  --output "$out/sim-options" --quiet
run ./hpcnn-simulate --compute "$node" --model lenet5 --batch 42 --exchange ring --nodes 2 --add-gbps 3 \
  --output "$out/sim-add" --quiet
python3 - "$node" "$(./hpcnn-summary --format csv --columns node_add_gbps,node_copy_gbps "$node" | tail -n 1)" \
  "$scale_rates" "$(rates "$out/sim-rates")" "$(rates "$out/sim-options")" "$(rates "$out/sim-add")" <<'EOF' || fail=1
import sys
node, measured, scale, from_file, options, add_only = sys.argv[1:]
bad = 0
def check(ok, what):
    global bad
    print(('ok:   ' if ok else 'FAIL: ') + what)
    bad += not ok
add, copy = (float(x) for x in measured.split(','))
check(add > 0.1 and copy > 0.1, f'hpcnn-train recorded the node\'s rates: add {add} GB/s, copy {copy} GB/s')
check(all(float(x) > 0.1 for x in scale.split(',')), f'hpcnn-scale recorded them too: {scale}')
a, c, src = from_file.split(',', 2)
check(abs(float(a) / add - 1) < 0.01 and abs(float(c) / copy - 1) < 0.01 and src == f'--compute {node}',
      f'the simulation took the measured node\'s: {from_file}')
a, c, src = options.split(',', 2)
check(float(a) == 3 and float(c) == 5 and src == 'options', f'--add-gbps 3 --copy-gbps 5: {options}')
a, c, src = add_only.split(',', 2)
check(float(a) == 3 and abs(float(c) / copy - 1) < 0.01 and src == f'add: options; copy: --compute {node}',
      f'--add-gbps alone: {add_only}')
sys.exit(1 if bad else 0)
EOF

# 8. the interposer and --exchange-alone
clock=simulate/hpcnn-simulate-cpuclock.so
if [ -e "$clock" ]; then
  read -r thread mono <<<"$(LD_PRELOAD=$PWD/$clock python3 -c 'import time
sum(range(3000000)); a = time.monotonic(); time.sleep(0.05)
print(time.thread_time(), time.monotonic() - a)')"
  echo "under the interposer: thread CPU clock $thread s, monotonic clock advanced $mono s"
  python3 -c "import sys; sys.exit(not (float('$thread') == 0 and float('$mono') >= 0.04))" ||
    { echo "FAIL: the interposer should zero the thread CPU clock only"; fail=1; }
  needed=$(readelf -d "$clock" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "the interposer needs: $needed"
  [ "$needed" = "libc.so.6 " ] || { echo "FAIL: every program smpirun starts loads the interposer: it must need libc only"; fail=1; }
else
  echo "FAIL: the build has a rank program but no $clock"; fail=1
fi
mkdir "$out/no-interposer"
cp simulate/hpcnn-simulate-rank.so "$out/no-interposer/"
step() { ./hpcnn-summary --format csv --columns iter_median_s,comm_wait_s,bytes_sent,comm_s,overlap "$1" | tail -n 1; }
interposed() { ./hpcnn-summary --format csv --columns sim_cpu_clock_interposed "$1" | tail -n 1; }
ring16=(./hpcnn-simulate --compute "$node" --model lenet5 --batch 42 --exchange ring --nodes 16 --steps 1 --quiet)
run "${ring16[@]}" --output "$out/ring16"
HPCNN_SIMULATE_RANK=$out/no-interposer/hpcnn-simulate-rank.so run "${ring16[@]}" --output "$out/ring16-no-interposer"
run "${ring16[@]}" --exchange-alone no --output "$out/ring16-no-alone"
LD_PRELOAD=libm.so.6 run "${ring16[@]}" --output "$out/ring16-user-preload"
with=$(step "$out/ring16") without=$(step "$out/ring16-no-interposer") no_alone=$(step "$out/ring16-no-alone")
[ "$(step "$out/ring16-user-preload")" = "$with" ] && [ "$(interposed "$out/ring16-user-preload")" = 1 ] ||
  { echo "FAIL: with a LD_PRELOAD of the user's, smpirun should get both and step the same"; fail=1; }
echo "ring at 16 nodes (iter, comm_wait, bytes, comm_s, overlap): $with; without the interposer: $without;" \
  "--exchange-alone no: $no_alone"
[ "$with" = "$without" ] || { echo "FAIL: the interposer changed the simulated step"; fail=1; }
echo "sim_cpu_clock_interposed: $(interposed "$out/ring16") with it, $(interposed "$out/ring16-no-interposer") without"
[ "$(interposed "$out/ring16")" = 1 ] && [ "$(interposed "$out/ring16-no-interposer")" = 0 ] ||
  { echo "FAIL: the record should say whether smpirun ran under the interposer"; fail=1; }
IFS=, read -r iter wait bytes comm overlap <<<"$with"
[ -n "$comm" ] && [ "$no_alone" = "$iter,$wait,$bytes,," ] ||
  { echo "FAIL: --exchange-alone no should step as yes ($iter,$wait,$bytes) without comm_s and overlap"; fail=1; }

# build_simgrid.sh's fixes to SimGrid's source: applied once, then found in place; a source whose
# code differs stops the build (exit 1) with one line naming the fix
fake=$out/fake-simgrid/src/kernel/activity
mkdir -p "$fake"
python3 - "$HPCNN_SRCDIR/packaging/simgrid_fixes.py" "$fake/ActivityImpl.cpp" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location('fixes', sys.argv[1])
fixes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixes)
open(sys.argv[2], 'w').write('// head\n' + '\n// between\n'.join(before for _, before, _ in fixes.FIXES) + '\n// tail\n')
EOF
fixer=(python3 "$HPCNN_SRCDIR/packaging/simgrid_fixes.py" "$out/fake-simgrid")
first=$("${fixer[@]}") && second=$("${fixer[@]}") || { echo "FAIL: simgrid_fixes.py failed on a source it fits"; fail=1; }
echo "$first"; echo "$second"
[ "$(grep -c '^==> SimGrid fix applied' <<<"$first")" = 2 ] && [ "$(grep -c 'already in the source' <<<"$second")" = 2 ] ||
  { echo "FAIL: want both fixes applied, then both found in place"; fail=1; }
echo '// another version' > "$fake/ActivityImpl.cpp"
"${fixer[@]}" > /dev/null 2> "$out/fixes.err"
status=$?
cat "$out/fixes.err"
[ $status = 1 ] && [ "$(wc -l < "$out/fixes.err")" = 1 ] && grep -q 'differs' "$out/fixes.err" ||
  { echo "FAIL: a source the fixes do not fit: want exit 1 and one line (got $status)"; fail=1; }

# 9. a stop signal during a simulation; its scratch folders go to a folder of the test's own
ring128=(./hpcnn-simulate --compute "$node" --model lenet5 --batch 42 --exchange ring --steps 20 --quiet)
interrupted=("${ring128[@]}" --nodes 16,128 --output "$out/interrupted" --run-id stop)
mkdir "$out/scratch"
TMPDIR=$out/scratch "${interrupted[@]}" > "$out/interrupted.out" 2>&1 &
sim=$!
for _ in $(seq 300); do  # until the 128-node point's smpirun runs (at most 30 s)
  pgrep -f "smpirun -np 128 -platform $out/scratch/" > /dev/null && break
  sleep 0.1
done
smpirun_group=$(pgrep -f "smpirun -np 128 -platform $out/scratch/" | head -n 1)
sleep 0.5
kill -TERM "$sim"
started=$SECONDS
wait "$sim"
status=$?
echo "stopped by SIGTERM: exit $status after $((SECONDS - started)) s: $(cat "$out/interrupted.out")"
# its processes still alive (not zombies, which this container's init may never reap)
left=$( [ -n "$smpirun_group" ] && ps -o pid=,stat= -g "$smpirun_group" | awk '$2 !~ /^Z/ {print $1}' | tr '\n' ' ')
[ -n "$smpirun_group" ] && [ $status = 75 ] && [ -z "$left" ] && [ -z "$(ls -A "$out/scratch")" ] ||
  { echo "FAIL: want exit 75, smpirun's group ($smpirun_group) gone (left: $left) and no scratch folder left"; fail=1; }
TMPDIR=$out/scratch run "${interrupted[@]}" --resume
run "${ring128[@]}" --nodes 128 --output "$out/uninterrupted"
points() { ./hpcnn-summary --format csv --columns nodes,iter_median_s,comm_wait_s,bytes_sent,status "$1" | tail -n +2; }
echo "resumed: $(points "$out/interrupted" | tr '\n' ' '); uninterrupted: $(points "$out/uninterrupted")"
[ "$(points "$out/interrupted" | tail -n 1)" = "$(points "$out/uninterrupted")" ] &&
  [ "$(points "$out/interrupted" | grep -c ',ok$')" = 2 ] ||
  { echo "FAIL: the resumed run should hold both points, the 128-node one as an uninterrupted run has it"; fail=1; }
exit $fail
