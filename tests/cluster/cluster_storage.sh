#!/usr/bin/env bash
# E8 reading its data over a network file system, and that file system going away in the middle
# of an epoch. On a virtual cluster of 5 hosts (tests/cluster/cluster_up.sh), n5 is the file
# server: an sshd in its network namespace serves a folder over SFTP, and each compute host n1-n4
# mounts it with sshfs (FUSE) in its own mount namespace, as cluster nodes mount a site's shared
# file system; n5's link is shaped to 100 mbit (tc), so the file server's network is the storage.
#  - jobscripts/e8_slurm.sh, unchanged, with DATASETS on the mount (LeNet-5, 1 epoch, cached,
#    files and cold, every scheme): every point ok and says its data was on fuse.sshfs; the
#    uncached points counted their reads, the cold ones found at most 5 % of the files in the page
#    cache before an epoch; the file server sent at least the cold points' bytes over its link;
#  - hpcnn-scale (ring on 3 hosts, cold reads, a checkpoint every 4 steps): rank 1 stopped at step
#    8 while the file server stops (its sshd and sessions killed: the mounts answer "Transport
#    endpoint is not connected"), then continued: the job ends with exit 1 and ONE line of hpcnn
#    naming the file, within the bound, the journal and its checkpoint kept; with the file server
#    back and the hosts' mounts remade, --resume completes bit-identical to the uninterrupted run.
source "$(dirname "$0")/cluster_test_lib.sh"
for tool in sshfs sshd ssh-keygen; do
  command -v "$tool" >/dev/null || skip "no $tool (./quickstart check installs sshfs and openssh-server as root)"
done
[ -c /dev/fuse ] || skip "no /dev/fuse: this kernel or container has no FUSE"
source "$src/tests/cluster/cluster_lib.sh"

export_dir=$work/export mnt=$work/mnt ssh_dir=$work/ssh
sshd_pid="" sshfs_pids=()
stop_file_server() {  # the sshd and every session it forked (each session serves one host's mount)
  [ -n "$sshd_pid" ] || return 0
  pkill -KILL -P "$sshd_pid" 2>/dev/null
  kill -KILL "$sshd_pid" 2>/dev/null
  wait "$sshd_pid" 2>/dev/null
  sshd_pid=""
}
unmount_hosts() {
  local pid k
  for pid in "${sshfs_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${sshfs_pids[@]}"; do wait "$pid" 2>/dev/null; done
  sshfs_pids=()
  for ((k = 1; k <= 4; k++)); do
    pid=$(cat "$cluster/pids/slurmd-n$k" 2>/dev/null) || continue
    nsenter -t "$pid" --mount umount -l "$mnt" 2>/dev/null
  done
  return 0
}
storage_down() { unmount_hosts; stop_file_server; take_down; }
trap storage_down EXIT

cluster_start 5
cluster_names "$cluster"
server=$CL_SUBNET.5

# The file server: host and client keys of this test only; root logs in with the client key.
start_file_server() {
  nsenter --net="/run/netns/$(cl_netns 5)" "$(command -v sshd)" -D -e -f "$ssh_dir/sshd_config" \
    >>"$ssh_dir/sshd.log" 2>&1 &
  sshd_pid=$!
  wait_for 20 "sshd on n5" nsenter --net="/run/netns/$(cl_netns 5)" bash -c "exec 3<>/dev/tcp/$server/22"
}
mkdir -p "$ssh_dir" "$export_dir" "$mnt" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$ssh_dir/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$ssh_dir/client_key"
cp "$ssh_dir/client_key.pub" "$ssh_dir/authorized_keys"
cat >"$ssh_dir/sshd_config" <<EOF
ListenAddress $server
HostKey $ssh_dir/host_key
AuthorizedKeysFile $ssh_dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile none
Subsystem sftp internal-sftp
EOF
# mount_hosts: each compute host mounts the export at $mnt in its own mount namespace (that of its
# slurmd, which its jobs inherit). The client gives up on a server that stops answering.
mount_hosts() {
  local k pid
  for ((k = 1; k <= 4; k++)); do
    pid=$(cat "$cluster/pids/slurmd-n$k")
    nsenter -t "$pid" --net --mount sshfs -f "root@$server:$export_dir" "$mnt" \
      -o "IdentityFile=$ssh_dir/client_key,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,LogLevel=ERROR" \
      -o ServerAliveInterval=2,ServerAliveCountMax=3 >>"$ssh_dir/sshfs-n$k.log" 2>&1 &
    sshfs_pids+=($!)
    wait_for 20 "n$k's mount" nsenter -t "$pid" --mount test -s "$mnt/idx/train-images-idx3-ubyte" || return 1
  done
}
mkdir -p "$export_dir/idx"
"$build/tests/make_image_files" idx "$export_dir/idx" 960 300 || { echo "FAIL: make_image_files"; exit 1; }
start_file_server || { cat "$ssh_dir/sshd.log"; exit 1; }
mount_hosts || { tail "$ssh_dir"/*.log; exit 1; }
check "no host but n1-n4 sees the mount" test ! -e "$mnt/idx"
check "shape n5 (the file server) to 100mbit" "$src/tests/cluster/cluster_shape.sh" "$cluster" n5 100mbit
served() { ip -n "$(cl_netns 5)" -s -j link show "$(cl_node_veth 5)" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'; }

# E8 as a site runs it, its data on the network file system.
before=$(served)
e8=$work/e8
id=$(submit "$e8" DATASETS="$mnt/idx" MODELS=lenet5 EPOCHS=1 LOADING="cached files cold" OUT="$e8/out" \
  --nodelist=n1,n2,n3,n4 "$src/jobscripts/e8_slurm.sh")
if wait_job "$id" 600; then
  check "E8 over sshfs: job COMPLETED" test "$(job_state "$id")" = COMPLETED
  [ "$(job_state "$id")" = COMPLETED ] || { echo "---- the job's output (tail)"; tail -n 40 "$e8"/slurm-*.out; }
  points=$("$build/hpcnn-summary" --format csv --columns exchange,storage,cache,status,file_reads,page_cache_resident,workers \
             "$e8/out" 2>/dev/null | tail -n +2)
  echo "E8 points (exchange,storage,cache,status,file_reads,page_cache_resident,workers):"; echo "$points" | sed 's/^/  /'
  check "E8 over sshfs: 12 points, all ok" test "$(grep -c ',ok,' <<<"$points")" = 12
  check "E8 over sshfs: every point says its data was on fuse.sshfs (data_fs)" \
    test "$("$build/hpcnn-summary" --format csv --columns data_fs "$e8/out" | tail -n +2 | sort -u)" = fuse.sshfs
  check "E8 over sshfs: every uncached point counted its reads" \
    awk -F, '$3 == 0 && $5 + 0 <= 0 { bad = 1 } END { exit bad }' <<<"$points"
  check "E8 over sshfs: the cold points found <= 5 % in the page cache" \
    awk -F, '$2 == "cold" && !($6 + 0 <= 0.05) { bad = 1 } END { exit bad }' <<<"$points"
  cold_bytes=$(awk -F, '$2 == "cold" { n += $5 } END { print n * 784 }' <<<"$points")
  sent=$(( $(served) - before ))
  echo "file server sent $sent bytes; the cold points read $cold_bytes"
  check "E8 over sshfs: the cold reads crossed n5's link" test "$sent" -ge "$cold_bytes"
else
  cat "$e8"/slurm-*.out
fi

# The file server goes away in the middle of an epoch.
common=(--data "$mnt/idx" --train-limit 576 --model lenet5 --backend reference --threads 1 --batch 16 --lr 0.05
        --momentum 0.9 --epochs 2 --storage cold --exchange ring --checkpoint-every 4 --checkpoint-unit step --quiet)
job() { timeout 300 srun -N 3 -n 3 -w n1,n2,n3 --kill-on-bad-exit=1 "$build/hpcnn-scale" "${common[@]}" "$@"; }
job --output "$work/full" --run-id full >"$work/full.log" 2>&1 || { echo "FAIL: the uninterrupted run"; cat "$work/full.log"; fail=1; }
HPCNN_TEST_FAULT=stop,iteration,8,1 job --output "$work/cut" --run-id cut >"$work/cut.log" 2>&1 &
cut_job=$!
pid=""
for ((i = 0; i < 600; i++)); do
  for p in $(pgrep -f -- "--output $work/cut " 2>/dev/null); do
    [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && pid=$p
  done
  [ -z "$pid" ] || break
  sleep 0.1
done
stop_file_server
t0=$SECONDS
if [ -n "$pid" ]; then kill -CONT "$pid"; else echo "FAIL: rank 1 never stopped at step 8"; fail=1; fi
wait "$cut_job"
status=$? took=$((SECONDS - t0))
echo "file server stopped at step 8: exit $status after $took s:"; grep -v '^srun: ' "$work/cut.log" | sed 's/^/  /'
check "exit 1 within 60 s" test "$status" = 1 -a "$took" -le 60
check "ONE line of hpcnn, naming the file" test "$(grep -c '^hpcnn-' "$work/cut.log")" = 1
check "the line names the file and the resume" \
  in_output "$work/cut.log" "^hpcnn-scale: stopped: rank [0-9]+: $mnt/idx/train-images-idx3-ubyte: .*--resume once the files are back \(exit 1\)"
check "the journal's checkpoint is kept" test -e "$work/cut/.hpcnn-scale-cut.journal/ckpt-000000.bin"

unmount_hosts
start_file_server && mount_hosts || { echo "FAIL: the file server did not come back"; fail=1; }
job --output "$work/cut" --run-id cut --resume >"$work/resume.log" 2>&1 || { echo "FAIL: --resume"; cat "$work/resume.log"; fail=1; }
figures() { "$build/hpcnn-summary" --table accuracy --format csv --columns epoch,train_loss,train_acc,test_loss,test_acc,params_digest "$1" 2>&1; }
check "resumed from a checkpoint" test "$("$build/hpcnn-summary" --format csv --columns resumed_steps "$work/cut" | tail -1)" -ge 4
check "the resumed training equals the uninterrupted one" test "$(figures "$work/full")" = "$(figures "$work/cut")"
figures "$work/cut"
exit $fail
