#!/usr/bin/env bash
# Real data end to end, on Debian's Fashion-MNIST (skipped when it is not installed):
#  1. one epoch of lenet5 on a 2,000-image training subset reaches the stated test accuracy
#     (>= 60 % on the first 2,000 test images; chance is 10 %, PyTorch gets ~70 % with these settings);
#  2. a diverging learning rate is recorded as `diverged` (NaN test accuracy, the step) and the
#     next sweep point still runs and is ok; the run exits 0;
#  3. --repeat 2 gives two points with seeds 1 and 2; --preset fills in the framework's settings;
#  4. two MPI ranks train on the shards of the same subset;
#  5. bad --data values: one-line errors, exit 2;
#  6. a batch-norm model (resnet18) is evaluated in inference mode with the running statistics it
#     learned (test_eval = inference): >= 40 % test accuracy after one epoch on 1,000 images (59 %
#     measured; evaluated with the initial statistics 0 / 1 instead it gets 9 %, chance), also on
#     two ranks (the running statistics of rank 0 go to every rank before evaluating);
#  7. --eval-every N adds test evaluations every N optimizer steps (arrays eval_step,
#     eval_test_acc, eval_test_loss); the one at the last step equals the last epoch's evaluation;
#  8. bf16 trains like fp32 (where the dnnl backend computes bf16 on this CPU): lenet5, 2 epochs on
#     10,000 images, the same seed: test accuracy within 2 points of fp32's (measured on Zen 4:
#     82.05 and 82.4 % against 82.1 and 81.3 % with seeds 1 and 2);
#  9. int8 costs little accuracy (dnnl): lenet5 trained 1 epoch on 6,000 images, its test set
#     evaluated in fp32 and, calibrated on 4 training batches, in int8 (--eval-int8): int8's top-1
#     within 1.5 points of fp32's (measured on Zen 4: 86.35 and 86.36 % after 2 full epochs);
#     --eval-int8 with a backend without int8: one line, exit 2.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || { echo "SKIP: $data not installed (apt-get install dataset-fashion-mnist)"; exit 77; }
backend=reference
./hpcnn-train --list | grep -q '^  dnnl ' && backend=dnnl
common=(--data fashion-mnist --model lenet5 --backend "$backend" --threads 1 --image-size 32 --quiet)
# Field $2 (by header name) of CSV line $3 of text $1.
col() { awk -F, -v name="$2" -v line="$3" 'NR==1 {for (i = 1; i <= NF; i++) if ($i == name) c = i} NR==line {print $c}' <<<"$1"; }

# 1. accuracy
run ./hpcnn-train "${common[@]}" --batch 16 --lr 0.02 --momentum 0.9 --epochs 1 --train-limit 2000 --test-limit 2000 --output "$out/acc"
csv=$(./hpcnn-summary --table accuracy --format csv "$out/acc")
echo "$csv"
head -1 <<<"$csv" | grep -qx 'model,backend,dataset,batch,lr,optimizer,epochs,seed,epoch,train_loss,train_acc,test_loss,test_acc,epoch_s,test_s,status' ||
  { echo "FAIL: accuracy table header"; fail=1; }
acc=$(col "$csv" test_acc 2)
awk -v a="$acc" 'BEGIN {exit !(a >= 60)}' || { echo "FAIL: test accuracy $acc % < 60 %"; fail=1; }
[ "$(col "$csv" dataset 2)" = fashion-mnist ] || { echo "FAIL: dataset"; fail=1; }
[ "$(col "$csv" status 2)" = ok ] || { echo "FAIL: status"; fail=1; }
sizes=$(./hpcnn-summary --format csv --columns train_size,test_size,epochs_done,steps,test_eval "$out/acc" | tail -1)
[ "$sizes" = "2000,2000,1,125,inference" ] || { echo "FAIL: train_size,test_size,epochs_done,steps,test_eval = $sizes"; fail=1; }

# 2. divergence, then the sweep goes on
run ./hpcnn-train "${common[@]}" --batch 50 --lr 1000,0.01 --momentum 0.9 --epochs 2 --train-limit 500 --test-limit 500 --output "$out/div"
csv=$(./hpcnn-summary --table accuracy --format csv "$out/div")
echo "$csv"
[ "$(col "$csv" lr 2)" = 1000 ] && [ "$(col "$csv" status 2)" = diverged ] || { echo "FAIL: lr 1000 not diverged"; fail=1; }
[ "$(col "$csv" test_acc 2 | tr A-Z a-z)" = nan ] || { echo "FAIL: diverged point's test_acc is not NaN"; fail=1; }
[ "$(col "$csv" lr 3)" = 0.01 ] && [ "$(col "$csv" status 3)" = ok ] && [ "$(col "$csv" epoch 4)" = 2 ] ||
  { echo "FAIL: the point after the diverged one did not run its 2 epochs"; fail=1; }
step=$(./hpcnn-summary --format csv --columns lr,diverged_step "$out/div" | awk -F, '$1 == 1000 {print $2}')
[ -n "$step" ] && [ "$step" -ge 1 ] || { echo "FAIL: diverged_step '$step'"; fail=1; }

# 3. --repeat and --preset
run ./hpcnn-train "${common[@]}" --batch 50 --epochs 1 --train-limit 300 --test-limit 300 --seed 4 --repeat 2 --output "$out/rep"
seeds=$(./hpcnn-summary --format csv --columns seed "$out/rep" | tail -n +2 | tr '\n' ' ')
[ "$seeds" = "4 5 " ] || { echo "FAIL: --repeat 2 --seed 4 gave seeds '$seeds'"; fail=1; }
run ./hpcnn-train --preset torch-mnist --data fashion-mnist --backend "$backend" --threads 1 --epochs 1 --batch 50 \
  --train-limit 300 --test-limit 300 --quiet --output "$out/preset"
got=$(./hpcnn-summary --format csv --columns preset,optimizer,lr,momentum,batch,epochs "$out/preset" | tail -1)
[ "$got" = "torch-mnist,sgd,0.05,0,50,1" ] || { echo "FAIL: preset settings: $got"; fail=1; }
./hpcnn-train --preset list | grep -q 'caffe-cifar10' || { echo "FAIL: --preset list"; fail=1; }

# 4. two ranks
run $MPIRUN -np 2 ./hpcnn-train "${common[@]}" --batch 25 --epochs 1 --train-limit 501 --test-limit 301 --output "$out/mpi"
got=$(./hpcnn-summary --format csv --columns ranks,train_size,test_size,steps,status "$out/mpi" | tail -1)
[ "$got" = "2,501,301,11,ok" ] || { echo "FAIL: 2 ranks: ranks,train_size,test_size,steps,status = $got"; fail=1; }

# 5. bad data
empty=$(mktemp -d -p "$out")
for bad in "$empty" "$out/missing-dir/" "no-such-set"; do
  err=$(./hpcnn-train --data "$bad" --quiet --output "$out/bad" 2>&1 >/dev/null); rc=$?
  echo "$err"
  [ $rc = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] || { echo "FAIL: --data $bad: exit $rc, '$err'"; fail=1; }
done
[ ! -e "$out/bad" ] || [ -z "$(ls -A "$out/bad")" ] || { echo "FAIL: a result file was left for bad --data"; fail=1; }
# 6. batch norm evaluated with its running statistics (1,000 = 31 batches of 32 + a short one of 8:
# the short batch's network shares the running statistics too)
bn=(--data fashion-mnist --model resnet18 --backend "$backend" --threads 1 --image-size 32 --quiet
    --batch 32 --optimizer adam --lr 0.001 --epochs 1)
run ./hpcnn-train "${bn[@]}" --train-limit 1000 --test-limit 500 --output "$out/bn"
got=$(./hpcnn-summary --format csv --columns test_eval,status,test_acc "$out/bn" | tail -1)
echo "batch norm: test_eval,status,test_acc = $got"
IFS=, read -r eval_kind status acc <<<"$got"
[ "$eval_kind" = inference ] && [ "$status" = ok ] || { echo "FAIL: resnet18: test_eval,status = $eval_kind,$status"; fail=1; }
awk -v a="$acc" 'BEGIN {exit !(a >= 40)}' || { echo "FAIL: resnet18 test accuracy $acc % < 40 % (running statistics not used?)"; fail=1; }
run $MPIRUN -np 2 ./hpcnn-train "${bn[@]}" --train-limit 400 --test-limit 200 --output "$out/bn-mpi"
got=$(./hpcnn-summary --format csv --columns ranks,test_eval,status "$out/bn-mpi" | tail -1)
[ "$got" = "2,inference,ok" ] || { echo "FAIL: resnet18 on 2 ranks: ranks,test_eval,status = $got"; fail=1; }

# 7. --eval-every: 500 images in batches of 20 = 25 steps per epoch; 2 epochs, every 10 steps.
run ./hpcnn-train "${common[@]}" --batch 20 --lr 0.02 --epochs 2 --train-limit 500 --test-limit 200 \
  --eval-every 10 --output "$out/every"
f=$(ls "$out"/every/*.h5)
# The values of dataset $1 of point 0, one per line.
values() { h5dump -y -w 0 -d "/points/000000/$1" "$f" | awk '/^   DATA \{/ {on=1; next} on && /}/ {exit} on' |
  tr ',' '\n' | tr -d ' ' | grep -v '^$'; }
steps=$(values eval_step | paste -sd,)
echo "eval_step: $steps"
[ "$steps" = "10,20,30,40,50" ] || { echo "FAIL: eval_step = $steps, want 10,20,30,40,50"; fail=1; }
last_eval=$(values eval_test_acc | tail -1)
last_epoch=$(values epoch_test_acc | tail -1)
echo "accuracy at step 50: $last_eval %, after epoch 2: $last_epoch %"
[ -n "$last_eval" ] && [ "$last_eval" = "$last_epoch" ] ||
  { echo "FAIL: the evaluation at the last step ($last_eval) differs from the last epoch's ($last_epoch)"; fail=1; }
[ "$(values eval_test_loss | wc -l)" = 5 ] || { echo "FAIL: eval_test_loss has not 5 values"; fail=1; }
# 8. bf16 against fp32
if [ "$backend" = dnnl ] && ./hpcnn-train --model lenet5 --precision bf16 --iters 1 --warmup 0 --quiet --output "$out/bf16-probe" 2>"$out/bf16.err"; then
  for p in fp32 bf16; do
    run ./hpcnn-train "${common[@]}" --batch 32 --lr 0.02 --momentum 0.9 --epochs 2 --train-limit 10000 --test-limit 2000 \
      --precision $p --output "$out/prec-$p"
  done
  a32=$(./hpcnn-summary --format csv --columns test_acc "$out/prec-fp32" | tail -1)
  a16=$(./hpcnn-summary --format csv --columns test_acc,precision "$out/prec-bf16" | tail -1)
  echo "test accuracy after 2 epochs: fp32 $a32 %, bf16 ${a16%,*} % (${a16#*,})"
  awk -v a="$a32" -v b="${a16%,*}" 'BEGIN {d = a - b; exit !(a >= 60 && (d < 0 ? -d : d) <= 2)}' ||
    { echo "FAIL: bf16 test accuracy ${a16%,*} % is not within 2 points of fp32's $a32 %"; fail=1; }
  [ "${a16#*,}" = bf16 ] || { echo "FAIL: the bf16 run records precision '${a16#*,}'"; fail=1; }
else
  [ "$backend" = dnnl ] && echo "bf16 not tested: $(cat "$out/bf16.err")" || echo "bf16 not tested: this build has no dnnl backend"
fi

# 9. int8 against fp32, on the same trained weights
if [ "$backend" = dnnl ]; then
  run ./hpcnn-train "${common[@]}" --batch 32 --lr 0.02 --momentum 0.9 --epochs 1 --train-limit 6000 --test-limit 2000 \
    --eval-int8 --calibration-batches 4 --output "$out/int8"
  accs=$(./hpcnn-summary --format csv --columns test_acc,int8_test_acc,calibration_batches "$out/int8" | tail -1)
  IFS=, read -r a32 a8 cal <<<"$accs"
  echo "test accuracy: fp32 $a32 %, int8 $a8 % (calibrated on $cal batches)"
  awk -v a="$a32" -v b="$a8" 'BEGIN {d = a - b; exit !(a >= 60 && b != "" && (d < 0 ? -d : d) <= 1.5)}' ||
    { echo "FAIL: int8 test accuracy '$a8' % is not within 1.5 points of fp32's $a32 %"; fail=1; }
  [ "$cal" = 4 ] || { echo "FAIL: calibration_batches '$cal'"; fail=1; }
  expect_error 2 "--eval-int8: backend 'reference'" -- ./hpcnn-train --data fashion-mnist --model lenet5 --backend reference --eval-int8 --epochs 1
else
  echo "int8 not tested: this build has no dnnl backend"
fi

exit $fail
