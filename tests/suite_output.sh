#!/usr/bin/env bash
# End to end: hpcnn-train and hpcnn-infer write one complete HDF5 file per invocation, alone and
# under mpirun -np 2; h5dump reads it; hpcnn-summary prints the CSV columns; the stored images/s
# equals batch x ranks / median of the per-iteration max over ranks (recomputed by result_checker).
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"

run ./hpcnn-train --model lenet5 --backend reference --batch 4,8 --iters 5 --warmup 2 --output "$out/single" --quiet
run ./hpcnn-infer --model lenet5 --backend reference --batch 4 --threads 1 --iters 5 --warmup 2 --output "$out/single" --quiet
run $MPIRUN -np 2 ./hpcnn-train --model lenet5 --backend reference --batch 4 --iters 5 --warmup 1 --output "$out/mpi" --quiet
n=$(ls "$out/single"/*.h5 | wc -l); [ "$n" = 2 ] || { echo "FAIL: expected 2 files in single/, got $n"; fail=1; }
[ -z "$(ls -A "$out/single" | grep -v '\.h5$')" ] || { echo "FAIL: stray files: $(ls -A "$out/single")"; fail=1; }
for f in "$out"/single/*.h5 "$out"/mpi/*.h5; do
  h5dump -A "$f" > /dev/null || { echo "FAIL: h5dump $f"; fail=1; }
  run ./tests/result_checker "$f"
done
csv=$(./hpcnn-summary --format csv "$out/single" "$out/mpi")
echo "$csv"
head -1 <<<"$csv" | grep -qx 'suite,model,backend,dataset,batch,threads,ranks,img_per_s' || { echo "FAIL: CSV header"; fail=1; }
[ "$(tail -n +2 <<<"$csv" | wc -l)" = 4 ] || { echo "FAIL: expected 4 CSV rows"; fail=1; }
grep -q '^hpcnn-train,lenet5,reference,cifar10,4,1,2,' <<<"$csv" || { echo "FAIL: no 2-rank row"; fail=1; }
# A list option given several values gets its own column in the live table, so its rows differ.
live=$(./hpcnn-train --model lenet5 --backend reference --batch 4 --iters 2 --warmup 1 --fusion on,off --act relu,tanh \
  --output "$out/live")
echo "$live"
head -1 <<<"$live" | grep -qE '\bfusion\b' || { echo "FAIL: no fusion column for --fusion on,off"; fail=1; }
head -1 <<<"$live" | grep -qE '\bact\b' || { echo "FAIL: no act column for --act relu,tanh"; fail=1; }
for v in 'relu +on' 'relu +off' 'tanh +on' 'tanh +off'; do
  grep -qE "$v" <<<"$live" || { echo "FAIL: no row with '$v'"; fail=1; }
done
exit $fail
