#!/usr/bin/env bash
# How often a whole-cluster night names a node or link on an unchanged cluster, and how often it
# names the bad one (docs/ACCEPTANCE.md, "A whole cluster"): the test cluster of 8 hosts
# (tests/cluster/cluster_up.sh, root), every host's link shaped to RATE, NIGHTS nights of each kind,
# interleaved night by night, the faults applied from outside the processes measured:
#   unchanged  nothing changed
#   cpu        n3 given 3/4 of a CPU (a CPU quota on its slurmd's cgroup: tests/cluster/cluster_slow.sh)
#   link       n5's link shaped to half of RATE (tests/cluster/cluster_shape.sh)
# Each night is jobscripts/acceptance.sh SET under sbatch --nodes=8 with ACCEPT_ROUNDS rounds (and
# its second look at the nodes named at the lowest of THRESHOLDS), the one-node steps in waves of 2
# hosts of 1 thread (the hosts share this machine's cores), judged by hpcnn-summary --population at
# every threshold of THRESHOLDS from the same files. Prints per kind
# and threshold the nights that named the bad host (n3, n5), named another host, and named a link
# between two good hosts.
#   sudo bench/cluster_nights.sh        Environment: NIGHTS (20), KINDS ("unchanged cpu link"),
#   SET (smoke), ACCEPT_ROUNDS (2), THRESHOLDS ("10% 15% 20%"), RATE (200mbit), ACCEPT_LINK_SIZES
#   (8,1M), OUT (a new folder under /tmp, kept: every night's results and population-*.txt; run
#   again with the same OUT, it goes on where it stopped and judges all nights kept)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
NIGHTS=${NIGHTS:-20} KINDS=${KINDS:-unchanged cpu link} SET=${SET:-smoke} ROUNDS=${ACCEPT_ROUNDS:-2}
THRESHOLDS=${THRESHOLDS:-10% 15% 20%} RATE=${RATE:-200mbit} LINK_SIZES=${ACCEPT_LINK_SIZES:-8,1M}
BIN=${HPCNN_BIN:-$here}
OUT=${OUT:-$(mktemp -d /tmp/hpcnn-cluster-nights.XXXXXX)}
[ "$(id -u)" = 0 ] || { echo "${0##*/}: needs root (network namespaces, slurmd, cgroups)" >&2; exit 2; }
cluster=$OUT/cluster
mkdir -p "$OUT"
trap '"$here/tests/cluster/cluster_down.sh" "$cluster" >/dev/null 2>&1' EXIT
CLUSTER_NODES=8 "$here/tests/cluster/cluster_up.sh" "$cluster" || exit 1
source "$cluster/cluster.env"
export SLURM_CONF=$cluster/etc/slurm.conf HPCNN_BIN=$BIN OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl_tcp_if_include=$CL_SUBNET.0/24 OMPI_MCA_oob_tcp_if_include=$CL_SUBNET.0/24
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for ((k = 1; k <= 8; k++)); do "$here/tests/cluster/cluster_shape.sh" "$cluster" "n$k" "$RATE" >/dev/null || exit 1; done

fault() {  # fault KIND on|off
  case "$1:$2" in
    cpu:on) "$here/tests/cluster/cluster_slow.sh" "$cluster" n3 0.75 >/dev/null ;;
    cpu:off) "$here/tests/cluster/cluster_slow.sh" "$cluster" n3 off >/dev/null ;;
    link:on) "$here/tests/cluster/cluster_shape.sh" "$cluster" n5 "$(awk -v r="${RATE%%[a-z]*}" 'BEGIN { print r / 2 }')${RATE##*[0-9]}" >/dev/null ;;
    link:off) "$here/tests/cluster/cluster_shape.sh" "$cluster" n5 "$RATE" >/dev/null ;;
  esac
}
# The nights run at the lowest threshold judged: their second look (acceptance.sh measures a named
# node's step once more) then covers every node a higher threshold would name.
night_threshold=$(printf '%s\n' $THRESHOLDS | sort -n | head -n 1)
for ((n = 1; n <= NIGHTS; n++)); do
  for kind in $KINDS; do
    dir=$OUT/$kind-$n
    # A night that ran its set is kept (steps.txt comes last); one cut short is run again from scratch.
    [ -s "$dir/out/steps.txt" ] && continue
    rm -rf "$dir"
    mkdir -p "$dir"
    fault "$kind" on || { echo "${0##*/}: cannot apply $kind" >&2; exit 1; }
    start=$SECONDS
    id=$(cd "$dir" && ACCEPT_ROUNDS=$ROUNDS ACCEPT_POPULATION_THRESHOLD=$night_threshold ACCEPT_NODE_WAVE=2 THREADS=1 ACCEPT_DATA=none ACCEPT_LINK_SIZES=$LINK_SIZES \
           OUT="$dir/out" REFERENCE_DIR="$OUT/no-reference" sbatch --parsable --nodes=8 "$here/jobscripts/acceptance.sh" "$SET" benchcluster)
    while squeue -h -j "$id" 2>/dev/null | grep -q .; do sleep 1; done
    fault "$kind" off
    echo "$kind night $n: $((SECONDS - start)) s"
  done
done

bad_host() { case "$1" in cpu) echo n3 ;; link) echo n5 ;; *) echo none ;; esac; }
printf '%-10s %-9s %8s %14s %16s %s\n' kind threshold nights "bad one named" "another named" "link of two others named"
for kind in $KINDS; do
  bad=$(bad_host "$kind")
  for t in $THRESHOLDS; do
    nights=0 right=0 other=0 links=0
    for ((n = 1; n <= NIGHTS; n++)); do
      dir=$OUT/$kind-$n/out
      [ -d "$dir" ] || continue
      p=$dir/population-${t%\%}.txt
      "$BIN/hpcnn-summary" --population --population-threshold "$t" "$dir" > "$p" 2>/dev/null
      nights=$((nights + 1))
      named=$(sed -n 's/^population: \(n[0-9]*\): .*REGRESSION$/\1/p' "$p" | sort -u)
      pairs=$(sed -n 's/^population: link \(n[0-9]*-n[0-9]*\): .*REGRESSION$/\1/p' "$p" | grep -v -E "(^|-)$bad(-|$)")
      grep -qx "$bad" <<<"$named" && right=$((right + 1))
      [ -n "$(grep -vx "$bad" <<<"$named" | grep .)" ] && other=$((other + 1))
      [ -n "$pairs" ] && links=$((links + 1))
    done
    printf '%-10s %-9s %8d %14s %16d %d\n' "$kind" "$t" "$nights" "$([ "$bad" = none ] && echo - || echo "$right")" "$other" "$links"
  done
done
echo "nights kept in $OUT"
