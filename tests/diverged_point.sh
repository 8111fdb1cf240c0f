#!/usr/bin/env bash
# A training loss that becomes NaN or Inf. --lr 1e6 (the option's largest) makes
# lenet5's loss non-finite within a few iterations on every CPU backend (NaN at iteration 3 with
# seed 1); --lr 0.01 trains. In one sweep, for hpcnn-train alone and hpcnn-scale on 2 ranks:
#  - the 1e6 point is stored with status `diverged`, a status_reason naming the loss and the
#    iteration, its settings and reproducer, and no throughput;
#  - the 0.01 point after it still runs and is ok with a throughput;
#  - stderr has one line per diverged point; the tally says "diverged";
#  - the suite exits 0 (docs/RESULTS.md: a diverged point is a result; only failed points exit 1).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
backends=reference
./hpcnn-train --list | grep -q '^  dnnl ' && backends=reference,dnnl
nb=$(tr ',' '\n' <<<"$backends" | wc -l)

# check_points NAME DIR CSV-PREFIX: every backend has "b,...,1e+06,diverged,<reason>," and
# "b,...,0.01,ok,,<images/s>"; the file passes result_checker.
check_points() {
  local name=$1 dir=$2 csv b row reason ips
  csv=$(./hpcnn-summary --format csv --columns backend,lr,status,status_reason,img_per_s "$dir")
  echo "$csv"
  for b in ${backends//,/ }; do
    row=$(grep "^$b,1e+06," <<<"$csv")
    reason=$(cut -d, -f4 <<<"$row")
    if [ "$(cut -d, -f3 <<<"$row")" != diverged ] || ! grep -Eiq 'diverged: loss -?(nan|inf) at iteration [0-9]+' <<<"$reason" ||
       [ -n "$(cut -d, -f5 <<<"$row")" ]; then
      echo "FAIL: $name $b lr 1e6: want status diverged, a reason naming the loss, no img_per_s; got '$row'"; fail=1
    fi
    row=$(grep "^$b,0.01," <<<"$csv")
    ips=$(cut -d, -f5 <<<"$row")
    if [ "$(cut -d, -f3 <<<"$row")" != ok ] || ! awk -v x="$ips" 'BEGIN {exit !(x > 0)}'; then
      echo "FAIL: $name $b lr 0.01 (after the diverged point): want ok with images/s; got '$row'"; fail=1
    fi
  done
  [ "$(ls "$dir" | wc -l)" = 1 ] || { echo "FAIL: $name: want one result file in $dir: $(ls -A "$dir")"; fail=1; }
  run ./tests/result_checker "$dir"/*.h5
}

# check_run NAME STATUS STDOUT STDERR WANT_LINES
check_run() {
  local name=$1 status=$2 stdout=$3 stderr=$4 want=$5 lines
  lines=$(printf '%s' "$stderr" | grep -c '')
  [ "$status" = 0 ] || { echo "FAIL: $name exited $status (want 0: diverged is not failed)"; fail=1; }
  if [ "$lines" != "$want" ] || [ "$(grep -Ec ': point [0-9]+: (rank [0-9]+: )?diverged: loss' <<<"$stderr")" != "$want" ]; then
    echo "FAIL: $name: want $want 'point N: diverged: loss ...' lines on stderr, got: $stderr"; fail=1
  fi
  grep -Eq "^points: [0-9]+ ok, $want diverged$" <<<"$stdout" || { echo "FAIL: $name tally: $stdout"; fail=1; }
}

mkdir -p "$out/train" "$out/scale"
stderr=$(./hpcnn-train --model lenet5 --backend "$backends" --lr 1e6,0.01 --threads 1 --batch 16 --iters 5 --warmup 1 \
  --output "$out/train" 2>&1 >"$out/train.log"); status=$?
cat "$out/train.log"; echo "$stderr"
check_run hpcnn-train "$status" "$(cat "$out/train.log")" "$stderr" "$nb"
check_points hpcnn-train "$out/train"

# Two ranks: the ranks keep exchanging after the loss turns non-finite (stopping one would hang
# the other) and agree on `diverged` at the end of the point.
stderr=$(timeout 300 $MPIRUN -np 2 ./hpcnn-scale --model lenet5 --backend "$backends" --exchange mpi \
  --lr 1e6,0.01 --threads 1 --batch 16 --iters 5 --warmup 1 --output "$out/scale" 2>&1 >"$out/scale.log"); status=$?
cat "$out/scale.log"; echo "$stderr"
check_run hpcnn-scale "$status" "$(cat "$out/scale.log")" "$stderr" "$nb"
check_points hpcnn-scale "$out/scale"
exit $fail
