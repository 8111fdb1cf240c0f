# shellcheck shell=bash
# The steps of E8 (ref. [4] §IV-V, Figs 3-9, Table V; docs/EXPERIMENTS.md),
# sourced by e8_mpirun.sh and e8_slurm.sh
# after common.sh: allreduce vs parameter server sync vs async on CPUs, 3 workers with local batch
# 42 for 10 epochs of CIFAR-10 and CIFAR-100 (50,000 / (3 x 42) -> 396 steps per epoch), every
# model, each with the paper's two loading approaches: decoded samples cached (TensorFlow) and
# every batch read from the files and decoded (PyTorch, MXNet). Synchronous workers read their
# shard (--sharding shard); asynchronous ones each the whole set, a third of it per epoch
# (--sharding whole), as TensorFlow did. Allreduce runs on the workers alone; the parameter server
# adds one server rank (its own node). The summary prints the paper's table: load, forward,
# backward and communication per model, scheme and loading.
#   DATASETS  comma-separated names or directories (default cifar10,cifar100; CIFAR binary or idx
#             files). Gzipped files (Debian's Fashion-MNIST) are gunzipped once into $OUT/data for
#             the runs that read the files every batch.
#   MODELS    default lenet5,alexnet,resnet18,resnet50 (alexnet at 64x64: --image-size 64)
#   EPOCHS (10), WORKERS (3), TRAIN_LIMIT / TEST_LIMIT (all images)
#   LOADING   cached (decoded once, kept in memory), files (every batch read from the files, as
#             the page cache holds them), cold (every batch read, the files' pages dropped from the
#             page cache before every epoch: the storage itself; not on tmpfs). Default cached,files,cold
#   SCHEMES   default allreduce,ps-sync,ps-async (allreduce: mpi and ring on the workers alone)
#   CHECKPOINT_EVERY  epochs between training checkpoints (1; 0: none): with RUN_ID (common.sh) a
#             requeued job continues each point from its last checkpoint
#   ITERS     set: E8 on synthetic batches instead (ITERS timed iterations, no data files)
# Quick local check on Fashion-MNIST at 4 ranks:
#   DATASETS=fashion-mnist MODELS=lenet5 EPOCHS=1 TRAIN_LIMIT=6000 TEST_LIMIT=2000 NP=4 jobscripts/e8_mpirun.sh
OUT=${OUT:-results/e8}
WORKERS=${WORKERS:-3}
MODELS=${MODELS:-lenet5,alexnet,resnet18,resnet50}
e8_columns=model,dataset,exchange,workers,cache,data_fs,storage,sharding,load_s,load_work_s,forward_s,backward_s,comm_wait_s,update_s,iter_median_s,epoch_s,test_acc,staleness_mean,data_cache_mib,peak_rss_mib

# Is scheme group $1 (allreduce, ps-sync, ps-async) among $SCHEMES?
e8_wants() { [[ ",${SCHEMES:-allreduce,ps-sync,ps-async}," == *",$1,"* ]]; }

# A folder with the files of data set $1 uncompressed: $1 itself unless it holds .gz files.
e8_uncompressed() {
  local spec=$1 dir="" d f
  if [ -d "$spec" ]; then dir=$spec
  else for d in ${HPCNN_DATA:+"$HPCNN_DATA/$spec"} "/usr/share/datasets/$spec" "/usr/local/share/datasets/$spec"; do
         [ -d "$d" ] && { dir=$d; break; }
       done
  fi
  if [ -z "$dir" ] || ! compgen -G "$dir/*.gz" >/dev/null; then echo "$spec"; return; fi
  local copy; copy="$OUT/data/$(basename "$dir")"
  mkdir -p "$copy"
  for f in "$dir"/*.gz; do [ -s "$copy/$(basename "$f" .gz)" ] || gunzip -c "$f" >"$copy/$(basename "$f" .gz)"; done
  echo "$copy"
}

e8_synthetic() {
  local common=(--model "$MODELS" --dataset "${DATASETS:-cifar10,cifar100}" --batch 42 --iters "$ITERS" --warmup 3 --output "$OUT")
  run_on "$WORKERS" "$WORKERS" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange mpi,ring --baseline
  run_on $((WORKERS + 1)) $((WORKERS + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ps-sync,ps-async --ps-servers 1 --baseline
  "$HPCNN_BIN/hpcnn-summary" --format markdown --columns model,dataset,exchange,workers,load_s,forward_s,backward_s,comm_wait_s,update_s,iter_median_s,img_per_s,staleness_mean "$OUT"
}

e8_real_data() {
  local data model loading dir
  local limits=(${TRAIN_LIMIT:+--train-limit "$TRAIN_LIMIT"} ${TEST_LIMIT:+--test-limit "$TEST_LIMIT"})
  for data in ${DATASETS:-cifar10,cifar100}; do
    dir=$(e8_uncompressed "$data")
    for model in ${MODELS//,/ }; do
      # AlexNet at 64x64; the ResNets need at least 32x32 (28x28 MNIST-style images are padded).
      local size=()
      case $model in alexnet) size=(--image-size 64) ;; resnet*) size=(--image-size 32) ;; esac
      for loading in $LOADING; do
        local reading=()
        case $loading in
          cached) reading=(--cache) ;;
          files) reading=(--storage warm) ;;
          cold) reading=(--storage cold) ;;
          *) echo "e8: LOADING '$loading': cached, files or cold" >&2; exit 2 ;;
        esac
        # A checkpoint per epoch: a preempted or requeued job continues within its point (RUN_ID).
        local common=(--data "$dir" --model "$model" "${size[@]}" --batch 42 --epochs "${EPOCHS:-10}" "${reading[@]}"
                      "${limits[@]}" --checkpoint-every "${CHECKPOINT_EVERY:-1}" --output "$OUT")
        e8_wants allreduce && run_on "$WORKERS" "$WORKERS" "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange mpi,ring --sharding shard
        e8_wants ps-sync && run_on $((WORKERS + 1)) $((WORKERS + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ps-sync --ps-servers 1 --sharding shard
        e8_wants ps-async && run_on $((WORKERS + 1)) $((WORKERS + 1)) "$HPCNN_BIN/hpcnn-scale" "${common[@]}" --exchange ps-async --ps-servers 1 --sharding whole
      done
    done
  done
  # Ref. [4] Figs 3-9 / Table V: per model, scheme and loading the phases of a step; then the
  # accuracy per epoch.
  "$HPCNN_BIN/hpcnn-summary" --table e8 --format markdown --columns "$e8_columns" "$OUT"
  "$HPCNN_BIN/hpcnn-summary" --table convergence --format markdown "$OUT"
}

DATASETS=${DATASETS:-cifar10,cifar100}
DATASETS=${DATASETS//,/ }
if [ -n "${ITERS:-}" ]; then DATASETS=${DATASETS// /,}; e8_synthetic; else LOADING=${LOADING:-cached,files,cold}; LOADING=${LOADING//,/ }; e8_real_data; fi
